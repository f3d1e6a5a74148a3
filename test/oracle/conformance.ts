/**
 * The conformance run: every shipped example workflow × every dataset it can run on, against
 * the oracle and the messy test models (test/oracle/server.ts). Nothing is listed by hand:
 * - examples: every `*.yaml` workflow under `examples/` (study plans and the corpus aside);
 * - datasets: every registered dataset (core/tasks `datasetNames`) and, over each, the DataWright
 *   compositions `datawright:<strategy>:<k>:<base>` for the three strategies and k = 2..4 (the
 *   sample takes one k per strategy: shared 2, paired 3, decoy 4);
 * - a pair runs when the dataset is of the family of a dataset the example names in its own
 *   commands (`--dataset <name>` in its comments; family: the tasks' input fields and `kind`s,
 *   so agentflow's `bamboogle` brings every multi-hop set, and a new dataset of a named family
 *   is covered at once), or a DataWright composition of such a dataset (an example that names
 *   none is paired with every dataset); and the dataset's tasks give every `task.<field>` the
 *   workflow reads, and a right answer fits every contract of the workflow (a number field
 *   cannot hold a text answer): what a user could sensibly run. Pairs not run are reported with
 *   the reason.
 * Each pair runs through the experiment service (store, engine, grader, credit, ladder) on the
 * first `limit` tasks of the dataset's first split, both models, and reports accuracy, failures
 * by class, silent runs (wrong with no failed node and no flagged output), runs whose root failure
 * no role carries, repaired and cut outputs.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startExperiment } from '../../core/experiments/index.ts';
import { openStore } from '../../core/store/index.ts';
import { DATAWRIGHT_STRATEGIES, datasetNames, datasetNeedsSandbox, getDataset, type Dataset, type Task } from '../../core/tasks/index.ts';
import { defaultTools } from '../../core/tools/index.ts';
import { CheckRegistry, jsonSchemaValidator, parseWorkflow, templateRefs, type Graph } from '../../core/workflow/index.ts';
import type { CodeSandbox } from '../../core/sandbox/index.ts';
import { fileModelPort } from '../../models/factory.ts';
import { resolveModels } from '../../models/resolve.ts';
import { fill, type Schema, type SkillHints } from './book.ts';
import { serveTestModel, type TestModelStyle } from './server.ts';

export interface ConformanceRow {
  example: string;
  dataset: string;
  style: TestModelStyle;
  runs: number;
  accuracy: number;
  failures: Record<string, number>;
  /** Wrong answers with no failed node and no output flagged cut: what must never happen. */
  silent: number;
  /** Runs with a root failure blamed on no role (infrastructure, ambiguous). */
  unblamed: number;
  repaired: number;
  cut: number;
  /** Calls whose task the test model did not find in its prompt. */
  unknownCalls: number;
}

export interface ConformanceOptions {
  /** Tasks per dataset (default: the whole first split). */
  limit?: number;
  /** Every k = 2..4 per DataWright strategy (default: one k per strategy). */
  allK?: boolean;
  /** Only examples / datasets whose name contains this text. */
  only?: { example?: string; dataset?: string };
  sandbox?: CodeSandbox;
  sharedDir?: string;
  /** Called with each row as it is made. */
  onRow?: (row: ConformanceRow) => void;
  /** Called for each example × dataset pair not run, with the reason. */
  onSkip?: (example: string, dataset: string, why: string) => void;
}

/** Every example workflow file under `dir` (recursively), study plans and the corpus aside. */
export function exampleFiles(dir = 'examples'): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) {
      if (name !== 'studies' && name !== 'corpus') out.push(...exampleFiles(p));
    } else if (/\.ya?ml$/.test(name)) out.push(p);
  }
  return out;
}

/** The `task.<field>` names a graph reads (its nodes' inputs and prompts, its design's catalogue inputs). */
export function taskFields(graph: Graph): string[] {
  const fields = new Set<string>();
  for (const n of graph.nodes) {
    for (const p of n.inputs) if (p.source.kind === 'task' && !p.optional) fields.add(p.source.field);
    for (const r of templateRefs(n.prompt ?? '')) if (r.root === 'task' && r.path[0]) fields.add(r.path[0]);
    for (const f of n.design?.catalogue.inputs ?? []) fields.add(f);
  }
  return [...fields];
}

/** Whether a graph's answer is text a model writes (free text, or a string field): what a DataWright task's k numbered answers need. */
export function writesText(graph: Graph): boolean {
  const node = graph.nodes.find((n) => n.id === graph.answer.node);
  if (!node || node.kind === 'tool') return false;
  const schema = node.contract?.schema as Schema | undefined;
  if (!schema) return true;
  const field = graph.answer.field ? schema.properties?.[graph.answer.field] : schema;
  return field?.type === 'string' && !field.enum;
}

/** The datasets an example names in its commands (`--dataset <name>`). */
export function namedDatasets(text: string): string[] {
  return [...new Set([...text.matchAll(/--dataset[= ]+['"]?([\w:.-]+)/g)].map((m) => m[1]!))];
}

/** A dataset's family: its tasks' input fields and `kind`s (core/tasks' learn families tell their kinds apart). */
export function familyOf(tasks: readonly Task[]): string {
  const fields = new Set<string>();
  const kinds = new Set<string>();
  for (const t of tasks) {
    for (const k of Object.keys(t.input)) fields.add(k);
    if (typeof t.input.kind === 'string') kinds.add(t.input.kind);
  }
  return JSON.stringify([[...fields].sort(), [...kinds].sort()]);
}

/** The skills of a graph with their output values (enum), for the oracle's design choice. */
function skillHints(graphs: readonly Graph[]): SkillHints {
  const out = new Map<string, unknown[]>();
  for (const g of graphs) for (const [name, s] of g.skills) if (Array.isArray((s.contract?.schema as Schema | undefined)?.enum)) out.set(name, (s.contract!.schema as Schema).enum!);
  return out;
}

/**
 * Whether a graph can run a dataset's tasks: the fields it reads are there, and the right answer
 * of every task fits every contract of the graph as the oracle writes it (schema and named
 * checks): a number field cannot hold a text answer, an arithmetic expression cannot hold four
 * numbered answers. Returns the reason when not.
 */
export function fits(graph: Graph, tasks: readonly Task[], skills: SkillHints): true | string {
  if (!tasks.length) return 'no tasks';
  const fields = taskFields(graph);
  const missing = fields.find((f) => tasks.some((t) => t.input[f] === undefined));
  if (missing) return `its tasks have no task.${missing}`;
  const checks = new CheckRegistry();
  for (const node of graph.nodes) {
    const schema = node.contract?.schema as Schema | undefined;
    if (!schema) continue;
    const validate = jsonSchemaValidator.compile(schema);
    for (const t of tasks) {
      const value = fill(schema, t, skills);
      if (validate(value) !== true) return `a right answer does not fit ${node.id}'s schema (${jsonSchemaValidator.errorsText(validate.errors)})`;
      const broken = (node.contract?.checks ?? []).find((c) => checks.get(c)?.(value, { inputs: t.input }) != null);
      if (broken) return `a right answer does not pass ${node.id}'s check ${broken}`;
    }
  }
  return true;
}

/** The dataset names of the conformance: each registered one, then its DataWright compositions. */
export function conformanceDatasets(allK = false): string[] {
  const out: string[] = [];
  for (const base of datasetNames()) {
    out.push(base);
    DATAWRIGHT_STRATEGIES.forEach((s, i) => {
      for (const k of allK ? [2, 3, 4] : [2 + i]) out.push(`datawright:${s}:${k}:${base}`);
    });
  }
  return out;
}

/** Runs the conformance (see the module comment); returns one row per example × dataset × model. */
export async function runConformance(o: ConformanceOptions = {}): Promise<ConformanceRow[]> {
  process.env.FLOWLAB_PROBES ??= path.join(os.tmpdir(), `flowlab-conformance-probes-${process.pid}.json`);
  const tools = defaultTools(o.sandbox ? { sandbox: o.sandbox } : {});
  const examples = exampleFiles().filter((f) => !o.only?.example || f.includes(o.only.example)).map((file) => {
    const text = readFileSync(file, 'utf8');
    return { file, text, graph: parseWorkflow(text, { tools }).graph };
  });
  const skills = skillHints(examples.map((e) => e.graph));
  const loaded = new Map<string, { dataset: Dataset; tasks: Task[] } | undefined>();
  const load = (name: string) => {
    if (!loaded.has(name)) {
      try {
        const dataset = getDataset(name, { sharedDir: o.sharedDir, sandbox: o.sandbox });
        loaded.set(name, { dataset, tasks: dataset.load({ split: dataset.splits[0]!, ...(o.limit !== undefined && { limit: o.limit }) }) });
      } catch {
        loaded.set(name, undefined); // a dataset absent from this machine's shared folder, or a base DataWright cannot compose
      }
    }
    return loaded.get(name);
  };
  const families = new Map(examples.map((e) => [e.file, new Set(namedDatasets(e.text).map((n) => load(n)).filter((d) => d !== undefined).map((d) => familyOf(d.tasks)))]));
  const rows: ConformanceRow[] = [];
  for (const name of conformanceDatasets(o.allK)) {
    if (o.only?.dataset && !name.includes(o.only.dataset)) continue;
    if (datasetNeedsSandbox(name.split(':').at(-1)!) && !o.sandbox) continue;
    const base = name.split(':').at(-1)!;
    const got = load(name);
    const baseTasks = load(base)?.tasks;
    if (!got || !baseTasks) continue;
    const { dataset, tasks } = got;
    const pairs = examples.filter((e) => {
      const named = families.get(e.file)!;
      if (named.size && !named.has(familyOf(baseTasks))) return false;
      if (name !== base && datasetNeedsSandbox(base)) {
        o.onSkip?.(e.file, name, "DataWright's one answer per line cannot hold a multi-line function (its grader splits the reply by numbered lines)");
        return false;
      }
      if (name !== base && !writesText(e.graph)) {
        o.onSkip?.(e.file, name, 'its answer is a tool result, a number or a choice: it cannot write one answer per part');
        return false;
      }
      const why = fits(e.graph, tasks, skills);
      if (why !== true) o.onSkip?.(e.file, name, why);
      return why === true;
    });
    if (!pairs.length) continue;
    for (const style of ['oracle', 'messy'] as const) {
      const server = await serveTestModel({ style, tasks, skills });
      try {
        for (const ex of pairs) {
          const before = server.stats.unknown;
          const row = await runPair(ex, dataset, tasks.length, server.ref, style, tools, o);
          row.unknownCalls = server.stats.unknown - before;
          rows.push(row);
          o.onRow?.(row);
        }
      } finally {
        await server.close();
      }
    }
  }
  return rows;
}

async function runPair(ex: { file: string; text: string; graph: Graph }, dataset: Dataset, limit: number, ref: string, style: TestModelStyle, tools: ReturnType<typeof defaultTools>, o: ConformanceOptions): Promise<ConformanceRow> {
  const store = openStore(':memory:');
  try {
    const models = resolveModels(ex.graph, { default: ref }).config;
    const h = await startExperiment(
      { kind: 'run', workflow: { graph: ex.graph, text: ex.text, file: path.resolve(ex.file) }, dataset: dataset.name, split: dataset.splits[0]!, limit, seed: 1, models },
      { store, models: fileModelPort(), tools, datasets: () => dataset },
      {},
    );
    const out = await h.done;
    const runs = store.listRuns(out.experimentId);
    const row: ConformanceRow = { example: path.relative('examples', ex.file), dataset: dataset.name, style, runs: runs.length, accuracy: 0, failures: {}, silent: 0, unblamed: 0, repaired: 0, cut: 0, unknownCalls: 0 };
    let correct = 0;
    for (const r of runs) {
      if (r.correct) correct++;
      for (const [k, v] of Object.entries(r.failures)) row.failures[k] = (row.failures[k] ?? 0) + (v ?? 0);
      const ladders = Object.values(r.ladder ?? {});
      const cut = ladders.reduce((s, l) => s + (l.cut ?? 0), 0);
      row.repaired += ladders.reduce((s, l) => s + (l.repaired ?? 0), 0);
      row.cut += cut;
      const roots = r.credit?.roots ?? [];
      if (!r.correct && !roots.length && !cut) row.silent++;
      if (roots.some((x) => !x.blamed)) row.unblamed++;
    }
    row.accuracy = runs.length ? correct / runs.length : 0;
    return row;
  } finally {
    store.close();
  }
}

/** The conformance table as text: one line per example × dataset, the oracle and the messy model side by side. */
export function formatConformance(rows: readonly ConformanceRow[]): string {
  const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
  const fails = (r: ConformanceRow) => Object.entries(r.failures).filter(([, v]) => v).map(([k, v]) => `${k} ${v}`).join(', ') || '-';
  const cell = (r?: ConformanceRow) => (r ? `${pct(r.accuracy)} (${r.runs}) fail: ${fails(r)}${r.silent ? ` SILENT ${r.silent}` : ''}${r.unblamed ? ` unblamed ${r.unblamed}` : ''}${r.repaired ? ` repaired ${r.repaired}` : ''}${r.cut ? ` cut ${r.cut}` : ''}` : '-');
  const keys = [...new Set(rows.map((r) => `${r.example}\t${r.dataset}`))];
  const lines = ['| example | dataset | oracle: accuracy (runs), failures by class | messy: accuracy (runs), failures by class, repaired / cut outputs |', '|---|---|---|---|'];
  for (const k of keys) {
    const [example, dataset] = k.split('\t');
    const get = (s: TestModelStyle) => rows.find((r) => r.example === example && r.dataset === dataset && r.style === s);
    lines.push(`| ${example} | ${dataset} | ${cell(get('oracle'))} | ${cell(get('messy'))} |`);
  }
  return lines.join('\n') + '\n';
}
