import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { counterfactualBlame, evaluationsOf, parseIntervene, stepwiseRows, type CorrectWith, type CounterfactualReport } from '../../core/experiments/index.ts';
import { otlpJsonOf, runSpans, storedRuns } from '../../core/otel/index.ts';
import type { Store } from '../../core/store/index.ts';
import type { ToolLookup } from '../../core/workflow/index.ts';
import { openStore } from '../../core/store/index.ts';
import { ReplayProvider } from '../../models/replay/index.ts';
import { act, dbOption, intOption, UsageError, type CommandContext } from '../args.ts';
import { CommandError } from '../errors.ts';
import { cliDeps, toolsOfExperiment } from '../wiring.ts';
import { formatCounterfactual } from '../formatCounterfactual.ts';
import type { Io } from '../io.ts';

interface Flags {
  db: string;
  intervene: string;
  with: string;
  runs?: number;
  threads?: number;
  save?: boolean;
  out?: string;
  json?: boolean;
}

/** `flowlab counterfactual <experiment-id>`. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('<experiment-id> [--intervene blamed|each-node|role:<r>] --with oracle|teacher=<model>|output=<@file> [--runs N] [--threads N] [--save] [--db file] [--json]')
    .description([
      'Counterfactual blame (docs/fork.md): every failed and every silent run of the experiment is forked',
      'at the chosen node runs with a corrected output (flowlab fork: upstream from the recording, the',
      'rest live) to see whether the run flips to success. oracle: a node with a SIMULATED fault is re-run',
      "without it, any other node gets its task family's right output where the family knows it (learn-design's",
      'design and argument, an expression of the expected value, the expected answer at the answer node).',
      'teacher=<model>: the node\'s role re-run by another model. output=@file: a JSON object {node: text}',
      'or one text for every node. Prints the causal precision of structural blame per role and failure',
      'class, what structure missed, silent runs given a located cause, and the agreement table.',
    ].join('\n'))
    .argument('<experiment-id>', 'the experiment whose failed and silent runs are examined')
    .option('--intervene <which>', 'blamed (structural roots; silent runs: every node) | each-node | role:<role>', 'blamed')
    .requiredOption('--with <source>', 'oracle | teacher=<file.gguf|openai:...> | output=@file')
    .addOption(intOption('--runs <n>', 'examine at most this many failed or silent runs (task order)', { min: 1 }))
    .addOption(intOption('--threads <n>', 'CPU threads of the live models', { min: 1 }))
    .option('--save', 'store every fork, linked to its parent (default: discard them)')
    .option('--out <dir>', 'also write counterfactual.json (the report), evaluations.otlp.json (the examined runs as OTLP/JSON spans with gen_ai.evaluation.result events on the forked node runs) and stepwise.jsonl (TRL stepwise supervision rows)')
    .addOption(dbOption())
    .option('--json', 'print one JSON object')
    .action(act(ctx, (id: string, o: Flags) => counterfactualCommand(id, o, ctx.io)));
}

/** `--with`. Errors: UsageError for an unknown form, CommandError BAD_FILE for an unreadable file. */
export function parseWith(text: string): CorrectWith {
  if (text === 'oracle') return { kind: 'oracle' };
  const teacher = /^teacher=(.+)$/.exec(text);
  if (teacher) return { kind: 'teacher', model: teacher[1]!.startsWith('openai:') ? teacher[1]! : path.resolve(teacher[1]!) };
  const out = /^output=@(.+)$/.exec(text);
  if (!out) throw new UsageError(`--with "${text}": expected oracle, teacher=<model> or output=@<file>`);
  const file = path.resolve(out[1]!);
  let body: string;
  try {
    body = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CommandError('BAD_FILE', `--with ${text}: cannot read ${file}: ${(err as Error).message}`, { file, field: 'with' }, { cause: err });
  }
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed) && Object.values(parsed).every((v) => typeof v === 'string')) return { kind: 'output', outputs: parsed as Record<string, string> };
  } catch {
    // not JSON: one text for every node
  }
  return { kind: 'output', outputs: body };
}

async function counterfactualCommand(experimentId: string, o: Flags, io: Io): Promise<number> {
  const correct = parseWith(o.with);
  const intervene = parseIntervene(o.intervene);
  const store = openStore(o.db, { mustExist: true, write: Boolean(o.save) });
  try {
    const exp = store.getExperiment(experimentId);
    const tools = toolsOfExperiment(exp.config, o.db, io);
    const deps = { ...cliDeps(store, tools), tools, replay: (calls: ConstructorParameters<typeof ReplayProvider>[0], opts: { checkPrompts: boolean }) => new ReplayProvider(calls, opts) };
    const report = await counterfactualBlame({
      experimentId: exp.id, intervene, with: correct, ...(o.runs !== undefined && { maxRuns: o.runs }), ...(o.threads !== undefined && { threads: o.threads }), save: Boolean(o.save),
      onRun: (_v, done, total) => { if (io.isTTY) io.stderr(`\rcounterfactual: ${done}/${total} run(s)${done === total ? '\n' : ''}`); },
    }, deps);
    if (o.out) writeExports(o.out, report, store, tools, io);
    io.stdout(o.json ? JSON.stringify(report) + '\n' : formatCounterfactual(report, { simulated: exp.kind === 'blame-eval' }));
    return 0;
  } finally {
    store.close();
  }
}

/** The report, the examined runs' spans with their evaluation events, and TRL stepwise rows under `dir` (each file written whole: temp, then rename). */
function writeExports(dir: string, report: CounterfactualReport, store: Store, tools: ToolLookup, io: Io): void {
  mkdirSync(dir, { recursive: true });
  const put = (name: string, text: string) => {
    const file = path.join(dir, name);
    writeFileSync(`${file}.tmp`, text);
    renameSync(`${file}.tmp`, file);
  };
  put('counterfactual.json', JSON.stringify(report, null, 1) + '\n');
  const { experiment, runs } = storedRuns(store, report.experimentId, tools);
  const verdicts = new Map(report.verdicts.map((v) => [v.runId, v]));
  const judged = runs.filter((r) => verdicts.has(r.run.runId)).map((r) => ({ ...r, evaluations: evaluationsOf(verdicts.get(r.run.runId)!) }));
  put('evaluations.otlp.json', otlpJsonOf(runSpans(experiment, judged)));
  const inputs = new Map(store.listTasks(report.experimentId).map((t) => [t.taskIndex, t.input]));
  const rows = stepwiseRows(report, (id) => store.getRunEvents(id), (id) => JSON.stringify(inputs.get(store.getRun(id).taskIndex) ?? {}));
  put('stepwise.jsonl', rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : ''));
  io.stderr(`Wrote ${path.join(dir, 'counterfactual.json')}, evaluations.otlp.json (${judged.length} run(s)) and stepwise.jsonl (${rows.length} row(s)).\n`);
}
