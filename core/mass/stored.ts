/**
 * One MASS step (a workspace run, a judge call, an optimizer call) as an ordinary stored Flowlab
 * experiment of kind `mass` with one planned task: its workflow text, task input, seed and
 * config are recorded when it is created, its run (record, node events, model calls) in one
 * transaction when it ends (core/pipeline/execute.ts). Idempotent by experiment id: a step
 * whose run is stored is read back, never run again; one created but killed before its run was
 * stored is taken over (`claimExperiment`) and run; so a loop killed at any point resumes with
 * nothing run or stored twice. `flowlab show`, `replay` and `export-traces` work on each step.
 */
import type { ToolSource } from '../engine/index.ts';
import { executePending } from '../pipeline/index.ts';
import { asExperimentId } from '../ids.ts';
import { killPoint } from '../killPoint.ts';
import type { RoleName } from '../ids.ts';
import type { ModelProvider, SamplingParams } from '../model/provider.ts';
import type { RunRecord } from '../results/index.ts';
import { computeWorkflowHash, type Store } from '../store/index.ts';
import type { Grader, Task } from '../tasks/types.ts';
import type { NodeEvent } from '../trace/index.ts';
import type { CheckRegistry } from '../workflow/checks.ts';
import { parseWorkflow, type Graph } from '../workflow/index.ts';
import { MassError } from './errors.ts';

/** What every MASS step needs. */
export interface StepDeps {
  store: Store;
  /** The live model; in a replay, `providerFor` serves each step's recorded calls instead. */
  provider: ModelProvider;
  /** Replay: the provider serving the recorded calls of one step's experiment (models/replay). */
  providerFor?: (experimentId: string) => ModelProvider;
  tools: ToolSource;
  signal?: AbortSignal;
  /** Which model reference a role's calls go to (per-role models); default: the role's own. */
  modelFor?: (role: RoleName) => string;
  /** Extra config recorded with every step (e.g. the model files and their fingerprints). */
  config?: Record<string, unknown>;
  /** Record every call's token ids (training data: the outer loop's SFT export). */
  recordTokens?: boolean;
  /** Sampling over every agent node's own (the outer loop samples its N runs; nodes default to greedy). */
  sampling?: Partial<Pick<SamplingParams, 'temperature' | 'topK' | 'topP' | 'minP'>>;
  /**
   * Steps in flight (core/mass/inFlight.ts): awaited just before the step's run is stored, so
   * steps run at once store their runs in step order (runOrdered's `turn`). A step read back
   * from the store does not wait.
   */
  beforeSave?: () => Promise<void>;
}

export interface StepSpec {
  experimentId: string;
  workflowText: string;
  task: Task;
  input: Record<string, unknown>;
  grader: Grader;
  checks: CheckRegistry;
  seed: number;
  /** Recorded in the experiment's config under `mass`. */
  about: Record<string, unknown>;
}

export interface StepResult {
  run: RunRecord;
  events: NodeEvent[];
  graph: Graph;
  /** True when the run was read back from the store (an earlier process ran it). */
  reused: boolean;
}

/**
 * Runs (or reads back) one step; see the module comment. Errors: MassError `MISMATCH` (the
 * stored experiment of that id has another workflow), `HALTED` (the model cannot be found or
 * loaded: nothing stored for the step), StoreError `EXPERIMENT_BUSY` (another live process
 * runs it); a cancelled step throws the signal's reason (an `AbortError`).
 */
export async function runStep(deps: StepDeps, spec: StepSpec): Promise<StepResult> {
  const { store } = deps;
  const id = asExperimentId(spec.experimentId);
  const hash = computeWorkflowHash(spec.workflowText);
  const { graph } = parseWorkflow(spec.workflowText, { tools: deps.tools, checks: spec.checks });
  const existing = store.findExperiment(id);
  if (existing) {
    if (existing.workflowHash !== hash) throw new MassError('MISMATCH', `stored step ${id} ran another workflow (hash ${existing.workflowHash.slice(0, 12)}, now ${hash.slice(0, 12)}); it was started with other options (use another id or store to run these)`, { field: 'experimentId' });
    const done = store.listRuns(id)[0];
    if (done) return { run: done, events: store.getRunEvents(done.runId), graph, reused: true };
    store.claimExperiment(id);
  } else {
    store.createExperiment({
      id,
      kind: 'mass',
      workflowName: graph.name,
      workflowYaml: spec.workflowText,
      workflowHash: hash,
      dataset: spec.task.id.split('/')[0] ?? 'mass',
      split: spec.task.id.split('/')[1] ?? '',
      seed: spec.seed,
      config: { ...deps.config, mass: spec.about },
      tasks: [{ taskIndex: 0, taskId: spec.task.id, input: spec.input, expected: spec.task.expected, ...(spec.task.meta && { meta: spec.task.meta }) }],
    });
  }
  killPoint('mass-step-created');
  const provider = deps.providerFor?.(id) ?? deps.provider;
  const res = await executePending({ store, experimentId: id, graph, grader: spec.grader, provider, tools: deps.tools, checks: spec.checks, seed: spec.seed, signal: deps.signal, modelFor: deps.modelFor, recordTokens: deps.recordTokens, sampling: deps.sampling, ...(deps.beforeSave && { beforeSave: deps.beforeSave }) });
  if (res.cancelled) {
    store.finishExperiment(id, 'cancelled');
    throw deps.signal?.reason ?? new DOMException('cancelled', 'AbortError');
  }
  if (res.halted) {
    store.finishExperiment(id, 'failed');
    throw new MassError('HALTED', `step ${id}: ${res.halted}`);
  }
  store.finishExperiment(id, 'completed');
  const run = store.listRuns(id)[0]!;
  return { run, events: store.getRunEvents(run.runId), graph, reused: false };
}

/**
 * A step's structured answer as a value: the engine hands back parsed JSON, or the text when it
 * kept the raw completion. Returns `undefined` for text that is not JSON (the judge's and the
 * optimizer's readers then treat the answer as malformed).
 */
export function answerValue(answer: unknown): unknown {
  if (typeof answer !== 'string') return answer;
  try {
    return JSON.parse(answer);
  } catch {
    return undefined;
  }
}
