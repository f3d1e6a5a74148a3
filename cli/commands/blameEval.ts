import path from 'node:path';
import Table from 'cli-table3';
import { creditGraphOf } from '../../core/credit/index.ts';
import { FaultInjector, parseFaultSpec, scoreBlame, TOOL_FAULT_KINDS, type BlameReport, type FaultSpec } from '../../core/faults/index.ts';
import type { Store } from '../../core/store/index.ts';
import { CheckRegistry, type Graph } from '../../core/workflow/index.ts';
import { satisfiesContract } from '../../core/engine/index.ts';
import type { NodeId } from '../../core/ids.ts';
import { openStore } from '../../core/store/index.ts';
import { defaultTools } from '../../core/tools/index.ts';
import { loadWorkflowFile } from '../../core/workflow/index.ts';
import { intFlag, pairs, parse, UsageError } from '../args.ts';
import { resolveModels, withFingerprints, loadedLlamaProvider } from '../compose.ts';
import { processIo, runPending, type Io, loadTasks, EXPERIMENT_FLAGS, createWorkflowExperiment } from './common.ts';

export const BLAME_EVAL_USAGE = `Usage: flowlab blame-eval <workflow.yaml> --dataset gsm8k --model <file.gguf> --inject role=kind@rate [...] [options]

Runs the workflow with SIMULATED faults injected into chosen roles (or nodes: node:<id>=kind@rate)
and scores structural blame against the injected ground truth: precision and recall per role and
per fault kind, faults structure cannot see, cascades correctly not blamed. Failures the model
makes by itself are counted apart. Kinds: malformed, contract, error, timeout, wrong, dropped.

Options:
  --inject <role=kind@rate>  a fault to inject (repeatable; rate 0..1, default 1)  [required]
  --runs <n>                 injected runs (tasks are cycled)          [default: --limit]
  --dataset, --split, --limit, --offset, --model, --role-model, --seed, --db, --data-dir,
  --threads, --context-size, --gpu   as in \`flowlab run\`
  --json                     print one JSON object
`;

export async function blameEvalCommand(argv: string[], io: Io = processIo): Promise<number> {
  const { values, positionals } = parse(argv, {
    ...EXPERIMENT_FLAGS,
    limit: { type: 'string', default: '10' },
    runs: { type: 'string' },
    inject: { type: 'string', multiple: true },
  }, BLAME_EVAL_USAGE);
  if (positionals.length !== 1) throw new UsageError('missing <workflow.yaml>', BLAME_EVAL_USAGE);
  if (!values.dataset) throw new UsageError('missing --dataset', BLAME_EVAL_USAGE);
  if (!values.inject?.length) throw new UsageError('missing --inject role=kind@rate', BLAME_EVAL_USAGE);
  const limit = intFlag(values.limit, 'limit', BLAME_EVAL_USAGE, { min: 1 })!;
  const offset = intFlag(values.offset, 'offset', BLAME_EVAL_USAGE)!;
  const runs = intFlag(values.runs, 'runs', BLAME_EVAL_USAGE, { min: 1 }) ?? limit;
  const seed = intFlag(values.seed, 'seed', BLAME_EVAL_USAGE)!;
  const specs = values.inject.map((s) => {
    try {
      return parseFaultSpec(s);
    } catch (e) {
      throw new UsageError((e as Error).message, BLAME_EVAL_USAGE);
    }
  });

  const file = path.resolve(positionals[0]!);
  const tools = defaultTools();
  const workflow = loadWorkflowFile(file, { tools });
  const graph = workflow.graph;
  for (const s of specs) {
    if (s.role && !graph.roles.has(s.role)) throw new UsageError(`--inject names role "${s.role}", which the workflow does not have (roles: ${[...graph.roles.keys()].join(', ')})`, BLAME_EVAL_USAGE);
    const node = s.node ? graph.nodes.find((n) => n.id === s.node) : undefined;
    if (s.node && !node) throw new UsageError(`--inject names node "${s.node}", which the workflow does not have`, BLAME_EVAL_USAGE);
    if (node?.kind === 'tool' && !TOOL_FAULT_KINDS.includes(s.kind)) {
      throw new UsageError(`--inject node:${s.node}=${s.kind}: ${s.node} is a tool node, which takes only ${TOOL_FAULT_KINDS.join(', ')} faults`, BLAME_EVAL_USAGE);
    }
  }
  const { dataset, tasks } = loadTasks(values.dataset, { dataDir: values['data-dir'], split: values.split!, limit, offset }, io);
  const models = resolveModels(graph, {
    model: values.model, roleModel: pairs(values['role-model'], 'role-model', BLAME_EVAL_USAGE),
    threads: intFlag(values.threads, 'threads', BLAME_EVAL_USAGE, { min: 1 }), contextSize: intFlag(values['context-size'], 'context-size', BLAME_EVAL_USAGE, { min: 256 }), gpu: values.gpu,
  }, BLAME_EVAL_USAGE);
  const inner = await loadedLlamaProvider(models);
  const injector = buildInjector(graph, specs, seed);

  const store = openStore(values.db!);
  try {
    const exp = createWorkflowExperiment(store, {
      kind: 'blame-eval',
      workflow,
      dataset: dataset.name,
      split: values.split!,
      limit,
      seed,
      config: { workflowFile: file, offset, dataDir: values['data-dir'], models: withFingerprints(models), inject: values.inject, simulated: true },
      tasks: Array.from({ length: runs }, (_, i) => {
        const t = tasks[i % tasks.length]!;
        return { taskIndex: i, taskId: t.id, input: t.input, expected: t.expected };
      }),
    });
    io.stderr(`Blame evaluation ${exp.id}: ${runs} runs of ${graph.name} with SIMULATED faults ${values.inject.join(', ')}\n`);
    const report = await runPending({
      store, experimentId: exp.id, graph, grader: dataset.grader, provider: injector.wrapProvider(inner), tools: injector.wrapTools(tools), seed, models, io,
      faultAt: (k, n, a) => injector.faultAt(k, n, a),
    });
    const blame = blameReportOf(store, exp.id, graph);
    if (values.json) io.stdout(JSON.stringify({ experimentId: exp.id, simulated: true, inject: values.inject, ...blame }) + '\n');
    else io.stdout(formatBlame(blame, exp.id, values.inject, report.accuracy));
    return report.status === 'completed' ? 0 : 130;
  } finally {
    store.close();
  }
}

/**
 * The fault injector of a blame evaluation. Deterministic in (seed, spec, task, node, attempt),
 * so a resumed evaluation injects exactly the faults the uninterrupted one would have.
 */
export function buildInjector(graph: Graph, specs: FaultSpec[], seed: number): FaultInjector {
  const byId = new Map(graph.nodes.map((n) => [n.id as string, n]));
  const checks = new CheckRegistry();
  return new FaultInjector(specs, seed, (id: NodeId) => byId.get(id)?.role, (id, output) => {
    const node = byId.get(id);
    return node ? satisfiesContract(node, output, checks) : true;
  });
}

/** Scores every stored run of a blame evaluation against its injected ground truth. */
export function blameReportOf(store: Store, experimentId: string, graph: Graph): BlameReport {
  const cg = creditGraphOf(graph);
  return scoreBlame(store.listRuns(experimentId).filter((r) => r.credit).map((r) => ({ graph: cg, events: store.getRunEvents(r.runId), credit: r.credit! })));
}

const p = (x: number | null) => (x === null ? '-' : x.toFixed(2));

export function formatBlame(b: BlameReport, id: string, inject: string[], accuracy: number): string {
  const roles = new Table({ head: ['role', 'precision', 'recall', 'injected', 'blamed'], style: { head: [], border: [], compact: true } });
  for (const [r, v] of Object.entries(b.byRole)) roles.push([r, p(v.precision), p(v.recall), String(v.injected), String(v.blamed)]);
  const kinds = new Table({ head: ['fault kind', 'precision', 'recall', 'injected', 'surfaced', 'unseen by structure'], style: { head: [], border: [], compact: true } });
  for (const [k, v] of Object.entries(b.byKind)) {
    if (!v.injected) continue;
    kinds.push([k, p(v.precision), p(v.recall), String(v.injected), String(v.surfaced), `${v.injected - v.surfaced} (${(((v.injected - v.surfaced) / v.injected) * 100).toFixed(0)}%)`]);
  }
  const nat = Object.entries(b.natural.byRole).map(([r, n]) => `${r} ${n}`).join(', ') || 'none';
  return [
    `Blame evaluation with SIMULATED faults (${inject.join(', ')}), ${b.runs} runs, accuracy ${(accuracy * 100).toFixed(1)}%`,
    roles.toString(),
    kinds.toString(),
    `Cascades below injected faults not blamed: ${b.cascadesNotBlamed} / ${b.cascadesTotal}`,
    `Faults structure cannot see (no node failed: wrong answers, dropped optional fields): ${b.unseen} (${(b.unseenShare * 100).toFixed(0)}% of injected) — only the correctness rung carries them.`,
    `Natural failures (the model's own, not counted in precision): ${b.natural.roots} root(s) [${nat}], ${b.natural.ambiguous} ambiguous, ${b.natural.infrastructure} infrastructure.`,
    `Experiment: ${id}`,
    '',
  ].join('\n');
}
