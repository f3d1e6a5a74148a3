import { SingleBar, Presets } from 'cli-progress';
import type { ExperimentId, RoleName } from '../../core/ids.ts';
import { executePending, summarizeRuns, type ExecuteOptions, type ExperimentReport } from '../../core/experiments/index.ts';
import type { ModelProvider } from '../../core/model/index.ts';
import { computeWorkflowHash, type ExperimentRow, type NewExperiment, type Store } from '../../core/store/index.ts';
import { getDataset, type Dataset, type Grader, type Task } from '../../core/tasks/index.ts';
import type { ToolSource } from '../../core/engine/index.ts';
import type { Graph } from '../../core/workflow/index.ts';
import type { ModelConfig } from '../compose.ts';

export { processIo, type Io } from '../io.ts';
import type { Io } from '../io.ts';

/**
 * Runs an experiment's pending tasks with a progress bar on stderr, handles Ctrl-C (the run in
 * flight is cancelled and not stored; the experiment is marked cancelled and can be resumed),
 * marks the experiment completed, and returns the report over all its stored runs.
 */
export async function runPending(args: {
  store: Store;
  experimentId: ExperimentId;
  graph: Graph;
  grader: Grader;
  provider: ModelProvider;
  tools: ToolSource;
  seed: number;
  models: ModelConfig;
  io: Io;
  /** Fault injection (simulated): labels injected node runs. */
  faultAt?: (taskKey: string, nodeId: string, attempt: number) => string | undefined;
  /** Tasks run at once (rollout groups). */
  parallel?: number;
  /** Sampling override for every agent node (rollouts). */
  sampling?: ExecuteOptions['sampling'];
  /** Record every model call's token ids (training data). */
  recordTokens?: boolean;
  /** Hint-card injection, use counts and online meta-distillation (cli/commands/cards.ts cardHooksFor). */
  cards?: Pick<ExecuteOptions, 'hints' | 'cardsUsed' | 'afterRun'>;
}): Promise<ExperimentReport> {
  const { store, experimentId, io } = args;
  const t0 = performance.now();
  const total = store.listTasks(experimentId).length;
  const already = total - store.pendingTasks(experimentId).length;
  const bar = new SingleBar(
    {
      stream: process.stderr,
      format: 'tasks {bar} {value}/{total} | acc {acc} | {eta_formatted} left',
      noTTYOutput: !io.isTTY,
      notTTYSchedule: 5000,
      hideCursor: io.isTTY,
    },
    Presets.shades_classic,
  );
  let correct = store.listRuns(experimentId).filter((r) => r.correct).length;
  bar.start(total, already, { acc: '-' });
  const controller = new AbortController();
  const onSigint = () => {
    io.stderr('\nCancelling: the run in flight is dropped; `flowlab resume` finishes the rest.\n');
    controller.abort();
  };
  process.once('SIGINT', onSigint);
  let cancelled = false;
  let halted: string | undefined;
  try {
    const res = await executePending({
      store,
      experimentId,
      graph: args.graph,
      grader: args.grader,
      provider: args.provider,
      tools: args.tools,
      seed: args.seed,
      signal: controller.signal,
      modelFor: (role: RoleName) => args.models.roleModels[role] ?? 'default',
      faultAt: args.faultAt,
      parallel: args.parallel,
      sampling: args.sampling,
      recordTokens: args.recordTokens,
      ...args.cards,
      onRun: (run, done) => {
        if (run.correct) correct++;
        bar.update(done, { acc: `${((correct / done) * 100).toFixed(0)}%` });
      },
    });
    cancelled = res.cancelled;
    halted = res.halted;
  } finally {
    process.off('SIGINT', onSigint);
    bar.stop();
    await args.provider.dispose();
  }
  if (halted) {
    store.finishExperiment(experimentId, 'failed');
    throw new Error(`experiment ${experimentId} halted: ${halted}`);
  }
  const status = cancelled ? 'cancelled' : 'completed';
  store.finishExperiment(experimentId, status);
  return summarizeRuns(experimentId, store.listRuns(experimentId), { tasksPlanned: total, wallSeconds: (performance.now() - t0) / 1000, status });
}

/** The JSON form of a report (`--json`). */
export function reportJson(r: ExperimentReport): string {
  return JSON.stringify(r) + '\n';
}

/**
 * A dataset's tasks `offset .. offset+limit-1` of a split. Errors (exit 1) when the offset is past
 * the end; notes on stderr when fewer than `limit` remain.
 */
export function loadTasks(name: string, opts: { dataDir?: string; split: string; limit: number; offset: number }, io: Io): { dataset: Dataset; tasks: Task[] } {
  const dataset = getDataset(name, { dataDir: opts.dataDir });
  const tasks = dataset.load({ split: opts.split, limit: opts.limit, offset: opts.offset });
  if (tasks.length === 0) throw new Error(`no tasks: --offset ${opts.offset} is past the end of ${dataset.name}/${opts.split}`);
  if (tasks.length < opts.limit) io.stderr(`Note: ${dataset.name}/${opts.split} has only ${tasks.length} task(s) from offset ${opts.offset}; running those.\n`);
  return { dataset, tasks };
}

/**
 * The flags every experiment-creating command shares (`run`, `blame-eval`, `rollouts`):
 * dataset selection, models, seed, database, threads, GPU and JSON output. `--limit` is left
 * to each command (their defaults differ).
 */
export const EXPERIMENT_FLAGS = {
  dataset: { type: 'string' },
  split: { type: 'string', default: 'test' },
  offset: { type: 'string', default: '0' },
  model: { type: 'string' },
  'role-model': { type: 'string', multiple: true },
  seed: { type: 'string', default: '0' },
  db: { type: 'string', default: process.env.FLOWLAB_DB ?? 'flowlab.db' },
  'data-dir': { type: 'string' },
  threads: { type: 'string' },
  'context-size': { type: 'string' },
  gpu: { type: 'string' },
  json: { type: 'boolean', default: false },
} as const;

/**
 * Creates an experiment for a workflow on a dataset split (one transaction, see
 * Store.createExperiment), hashing the workflow text it stores.
 */
export function createWorkflowExperiment(store: Store, args: {
  kind: NewExperiment['kind'];
  workflow: { graph: Graph; text: string };
  dataset: string;
  split: string;
  limit: number;
  seed: number;
  config: unknown;
  tasks: NewExperiment['tasks'];
}): ExperimentRow {
  return store.createExperiment({
    kind: args.kind,
    workflowName: args.workflow.graph.name,
    workflowYaml: args.workflow.text,
    workflowHash: computeWorkflowHash(args.workflow.text),
    dataset: args.dataset,
    split: args.split,
    limit: args.limit,
    seed: args.seed,
    config: args.config,
    tasks: args.tasks,
  });
}
