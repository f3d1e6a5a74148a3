/**
 * Resuming a train loop (`flowlab resume <loop-id | experiment-id>`, the lab's
 * `resumeTrainLoop`): the stored loop (store.trainLoops) is rebuilt from its plan — the same
 * workflow text, data, roles, schedule, seeds, starting models (fingerprints checked) and start
 * versions — and continued by core/training/loop.ts from its last complete iteration under the
 * same loop id, so the lineage, the iteration numbers, the tasks and the seeds are those of the
 * uninterrupted loop, and an iteration's stored rollouts are trained on instead of sampled again.
 */
import { z } from 'zod';
import type { ModelConfig } from '../model/config.ts';
import { decodeStored, modelConfigSchema, type Store, type TrainLoopRow } from '../store/index.ts';
import type { WeightVersion } from '../store/weights.ts';
import { defaultTools } from '../tools/index.ts';
import type { LoopEvent } from '../training/loop.ts';
import type { Trainer } from '../training/port.ts';
import { parseWorkflow } from '../workflow/index.ts';
import { overrideModels } from './service.ts';
import { ExperimentSpecError, type ResumeSpec, type ServiceDeps } from './spec.ts';
import { launchTrainLoop, type TrainLoopHandle, type TrainLoopPlan, type TrainLoopSpec } from './trainLoop.ts';

const num = z.number();
/** A stored loop's plan (`TrainLoopPlan`, store.trainLoops `plan_json`), as resume and verify read it. */
const loopPlanSchema = z.looseObject({
  workflow: z.looseObject({ text: z.string(), file: z.string().optional() }),
  roles: z.array(z.string()),
  startVersions: z.record(z.string(), z.string()),
  models: modelConfigSchema,
  dataset: z.string(),
  dataDir: z.string().optional(),
  split: z.string(),
  heldoutSplit: z.string(),
  heldout: num,
  maxGradNorm: num,
  group: num,
  iterations: num,
  tasksPerIteration: num,
  lr: num,
  kl: num,
  temperature: num,
  entropy: num.optional(),
  heldoutSamples: num,
  heldoutTemperature: num,
  seed: num,
  sft: z.looseObject({ warmStart: num, mix: z.boolean(), steps: num, lr: num, minScore: z.union([num, z.record(z.string(), num)]), roles: z.array(z.string()).optional(), pool: num.optional() }).optional(),
}) satisfies z.ZodType<TrainLoopPlan>;

/**
 * The plan of a stored loop, decoded (never cast).
 * @throws StoreError `CORRUPT_RECORD` naming the loop and the field (`plan.models.roleModels`).
 */
export function loopPlanOf(loop: { id: string; plan: unknown }): TrainLoopPlan {
  return decodeStored(loopPlanSchema, loop.plan, `train loop ${loop.id}`, 'plan');
}

/** What a train-loop resume names: the loop (or one of its experiments), moved model files, `force`. */
export interface ResumeTrainLoopSpec {
  /** A loop id (`tl-…`), or the id of one of the loop's experiments. */
  id: string;
  /** Moved starting model files, given again (they must be the same files). */
  models?: ResumeSpec['models'];
  /** Take over a loop marked running by a live process (a reused pid after a crash). */
  force?: boolean;
}

/**
 * The stored loop `id` names: a loop id, or an experiment whose `config.trainLoop.loopId` is a
 * stored loop. Undefined when it names neither (a plain experiment, or a loop of a database from
 * before loops were stored).
 */
export function trainLoopOf(store: Store, id: string): TrainLoopRow | undefined {
  const loop = store.trainLoops.find(id);
  if (loop) return loop;
  const exp = store.findExperiment(id);
  const loopId = exp?.config?.trainLoop?.loopId;
  return loopId !== undefined ? store.trainLoops.find(loopId) : undefined;
}

/**
 * Resumes a stored train loop in the background, or says there is nothing to resume.
 * `nothing`: the loop completed (every iteration recorded and its held-out after evaluated).
 * Errors: StoreError `NOT_FOUND` (no such loop or experiment of a loop); ExperimentSpecError
 * `RUNNING` (field `force`: it runs in a live process), `UNKNOWN_ROLE` / `NO_DEFAULT_REF` (a moved
 * file for a reference the loop does not have); the model port's `verify` errors (a starting
 * model file changed or missing); the errors of startTrainLoop.
 */
export function resumeTrainLoop(
  spec: ResumeTrainLoopSpec,
  deps: ServiceDeps & { trainer: Trainer },
  options: { onEvent?: (e: LoopEvent) => void; signal?: AbortSignal } = {},
): { loop: TrainLoopRow; nothing: true } | { loop: TrainLoopRow; nothing: false; handle: TrainLoopHandle } {
  const { store } = deps;
  const loop = trainLoopOf(store, spec.id) ?? store.trainLoops.get(spec.id);
  if (loop.status === 'completed') return { loop, nothing: true };
  if (loop.status === 'running' && store.trainLoops.isLive(loop.id)) {
    if (!spec.force || loop.pid === process.pid) {
      throw new ExperimentSpecError('RUNNING', 'force', `train loop ${loop.id} is marked running in process ${loop.pid}; stop that process, or pass --force if that pid was reused by another program`, { pid: loop.pid ?? null });
    }
    store.trainLoops.finish(loop.id, 'interrupted');
  }
  const tools = deps.tools ?? defaultTools();
  const full = storedLoopSpec(loop, store, tools, spec.models, deps.models.verify);
  return { loop, nothing: false, handle: launchTrainLoop(full, { ...deps, tools }, options, true) };
}

/**
 * The spec a stored loop was started with (its plan), to continue it (`resumeTrainLoop`) or run it
 * again elsewhere (`flowlab verify`): moved starting files in `moved`, checked by `verify` (the
 * model port's) against the recorded fingerprints; start versions looked up in `store`.
 * Errors: as resumeTrainLoop's.
 */
export function storedLoopSpec(loop: TrainLoopRow, store: Store, tools: NonNullable<ServiceDeps['tools']>, moved?: ResumeSpec['models'], verify?: ServiceDeps['models']['verify']): TrainLoopSpec {
  const plan = loopPlanOf(loop);
  const file = plan.workflow.file ? plan.workflow.file.split(/[\\/]/).pop() : undefined;
  const { graph } = parseWorkflow(plan.workflow.text, { tools, ...(file !== undefined && { file }) });
  const models: ModelConfig = overrideModels(plan.models, moved);
  verify?.(plan.models, models); // the same starting files as when it started, or refuse
  const startVersions: Record<string, WeightVersion> = Object.fromEntries(Object.entries(plan.startVersions ?? {}).map(([role, id]) => [role, store.weights.get(id)]));
  const { workflow: _w, startVersions: _s, ...rest } = plan;
  return {
    ...rest,
    workflow: { graph, text: plan.workflow.text, ...(plan.workflow.file !== undefined && { file: plan.workflow.file }) },
    models,
    startVersions,
    versionsDir: loop.versionsDir,
    loopId: loop.id,
  };
}
