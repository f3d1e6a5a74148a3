/**
 * The CLI's wiring: what a command runs on, made from its flags and the local machine — the
 * store of `--db` (opened and closed around the work), the one code sandbox per CLI process, the
 * datasets with that sandbox, the experiment service's ports, the workflow argument loaded and
 * validated, the tools with the `--corpus` index, and the folders written beside the database.
 * The shared flags themselves are in flags.ts.
 */
import path from 'node:path';
import type { CorpusRecord, ServiceDeps } from '../core/experiments/index.ts';
import { openStore, type ExperimentConfig, type Store } from '../core/store/index.ts';
import type { CodeSandbox } from '../core/sandbox/index.ts';
import { getDataset, type Dataset } from '../core/tasks/index.ts';
import { defaultTools, type ToolRegistry } from '../core/tools/index.ts';
import { formatIssue, loadWorkflowFile, type LoadedWorkflow } from '../core/workflow/index.ts';
import { besideDatabase } from '../host/dataFolder.ts';
import { openCorpus } from '../models/corpus/index.ts';
import { fileModelPort } from '../models/factory.ts';
import { PyodideSandbox } from '../models/sandbox/index.ts';
import type { Io } from './io.ts';

/** Runs `fn` on the store of `file` (which must exist unless `mustExist` is false), closing it after. */
export function withStore<T>(file: string, fn: (store: Store) => T, mustExist = true): T {
  const store = openStore(file, { mustExist });
  try {
    return fn(store);
  } finally {
    store.close();
  }
}

let sandbox: PyodideSandbox | undefined;

/**
 * The command's code sandbox (models/sandbox: Pyodide in permission-restricted processes), one
 * per CLI process, made on first use; it starts no interpreter until code runs (HumanEval and
 * MBPP grading, the `code_runner` tool). Its workers exit with the CLI (they leave when the IPC
 * channel closes); `closeCliSandbox` stops them sooner.
 */
export function cliSandbox(): CodeSandbox {
  sandbox ??= new PyodideSandbox();
  return sandbox;
}

/** Closes the command's code sandbox if one was made. */
export async function closeCliSandbox(): Promise<void> {
  const s = sandbox;
  sandbox = undefined;
  await s?.close();
}

/** A dataset by name for the experiment service, with the command's code sandbox for code datasets. */
export function cliDatasets(name: string, dataDir?: string): Dataset {
  return getDataset(name, { dataDir, sandbox: cliSandbox() });
}

/** The experiment service's ports for a command: the open store, node-llama-cpp over local files, the default tools (with `code_runner`), datasets with the code sandbox. */
export function cliDeps(store: Store, tools = defaultTools({ sandbox: cliSandbox() })): ServiceDeps {
  return { store, models: fileModelPort(), tools, datasets: cliDatasets };
}

/**
 * The `<workflow.yaml>` argument of an experiment command: the absolute file, the tools (`tools`,
 * default: the built-in ones) and the workflow loaded and validated against them; its warnings
 * (a YAML number that loses what was written, a schema keyword checked only after decoding) go to
 * `io`'s stderr, one located line each. Errors: SpecError (file, line, column of every issue) or the file error
 * naming the path.
 */
export function loadWorkflowArg(workflowFile: string, io?: Io, tools: ToolRegistry = defaultTools({ sandbox: cliSandbox() })): { file: string; tools: ToolRegistry; workflow: LoadedWorkflow } {
  const file = path.resolve(workflowFile);
  const workflow = loadWorkflowFile(file, { tools });
  for (const w of workflow.warnings) io?.stderr(`Warning: ${formatIssue(w)}\n`);
  return { file, tools, workflow };
}

/**
 * The default tools, with `retrieve` over the `--corpus` folder when one is given (models/corpus:
 * indexed once, cached in `flowlab-cache/corpus/` beside the database `db`), and the corpus as the
 * experiment records it; notes the corpus on stderr. Errors: CorpusError (folder missing, bad
 * JSONL line, empty, too large).
 */
export function toolsWithCorpus(corpus: string | undefined, db: string, io: Io): { tools: ToolRegistry; corpus?: CorpusRecord } {
  if (corpus === undefined) return { tools: defaultTools({ sandbox: cliSandbox() }) };
  const cacheDir = besideDatabase(db, ['flowlab-cache', 'corpus']);
  const opened = openCorpus(corpus, { cacheDir });
  const how = opened.from === 'built' ? `indexed in ${Math.round(opened.ms)} ms` : `from the ${opened.from === 'disk' ? 'cache' : 'memory'} in ${Math.round(opened.ms)} ms`;
  io.stderr(`Corpus ${opened.root}: ${opened.passages} passages from ${opened.files} files (${how})${opened.skipped.length ? `; skipped links leaving the folder: ${opened.skipped.join(', ')}` : ''}\n`);
  return { tools: defaultTools({ corpus: opened.index, sandbox: cliSandbox() }), corpus: { dir: opened.root, signature: opened.signature, passages: opened.passages } };
}

/**
 * The tools of a stored experiment (`resume`, `replay`): with `retrieve` over the corpus its
 * config recorded (`config.corpus`), opened again; a note on stderr when the folder's files
 * changed since (its retrieve results may differ). Errors: CorpusError when the folder is gone.
 */
export function toolsOfExperiment(config: ExperimentConfig | null, db: string, io: Io): ToolRegistry {
  const recorded = config?.corpus;
  if (!recorded) return defaultTools({ sandbox: cliSandbox() });
  const { tools, corpus } = toolsWithCorpus(recorded.dir, db, io);
  if (corpus?.signature !== recorded.signature) io.stderr(`Note: the corpus ${recorded.dir} changed since the experiment started (files, sizes or times); retrieve may answer differently.\n`);
  return tools;
}

/** Where training writes weight versions by default: `flowlab-versions/` beside the database (besideDatabase: the temporary folder for `:memory:`). */
export function defaultVersionsDir(store: Store): string {
  return besideDatabase(store.file, ['flowlab-versions']);
}
