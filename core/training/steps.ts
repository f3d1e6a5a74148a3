/**
 * The train loop's steps that touch the store, the provider or the trainer (core/training/loop.ts
 * runs them in order): sample a group, score it, step each role, write its version, evaluate
 * held-out. The decisions inside them are the pure functions of core/training/iteration.ts.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { ExperimentId, RoleName } from '../ids.ts';
import { killPoint } from '../killPoint.ts';
import { optimizerFileOf, writeOptimizerFile } from './optimizerFile.ts';
import { deriveSeed } from '../random.ts';
import { accuracyByNovelty } from '../guards/index.ts';
import { executePending } from '../pipeline/index.ts';
import { groupRollouts, type RolloutSummary } from '../rollouts/groups.ts';
import type { AdvantageRow } from '../store/improve.ts';
import { computeWorkflowHash } from '../store/ids.ts';
import type { Store } from '../store/index.ts';
import type { ExperimentCall } from '../store/types.ts';
import type { NewWeightVersion, WeightVersion } from '../store/weights.ts';
import type { Task } from '../tasks/types.ts';
import type { RunRecord } from '../results/index.ts';
import { heldoutAccuracy, heldoutResult, sampledTaskList, trainRef, versionFile, type RoleBatch } from './iteration.ts';
import { TrainingError } from './errors.ts';
import type { SftSequence, StepResult } from './port.ts';
import { chunks } from './samples.ts';
import type { HeldoutResult, LoopModels, LoopRun, RoleIterationMetrics, TrainedRole } from './types.ts';

/** The files in use now, copied (what a provider is built over). */
export function modelsSnapshot(models: LoopModels): LoopModels {
  return { models: { ...models.models }, roleModels: { ...models.roleModels } };
}

/** The caller's model settings (fingerprints dropped) with the files in use now, stored so `resume` can rebuild them. */
function modelsConfig(run: LoopRun): Record<string, unknown> {
  const { fingerprints: _f, ...settings } = (run.o.config?.models ?? {}) as Record<string, unknown>;
  return { ...settings, ...modelsSnapshot(run.models) };
}

function experimentBase(run: LoopRun, split: string, limit: number) {
  return {
    workflowName: run.o.graph.name,
    workflowYaml: run.o.workflow.yaml,
    workflowHash: computeWorkflowHash(run.o.workflow.yaml),
    dataset: run.o.dataset.name,
    split,
    limit,
  };
}

const parallelOf = (run: LoopRun, n: number) => Math.max(1, Math.min(run.o.parallel ?? 64, n));
const modelFor = (run: LoopRun) => (role: RoleName) => run.models.roleModels[role] ?? 'default';

/** Marks an experiment finished; a halted one is marked failed and stops the loop (throws, naming why). */
export function finishExperiment(store: Store, id: ExperimentId, res: { cancelled: boolean; halted?: string }): void {
  if (res.halted) {
    store.finishExperiment(id, 'failed');
    throw new TrainingError('HALTED', `train-loop: experiment ${id} halted: ${res.halted}`);
  }
  store.finishExperiment(id, res.cancelled ? 'cancelled' : 'completed');
}

/**
 * The loop's stored experiment for iteration `k` (rollouts) or a held-out phase, when one was
 * created before (a resumed loop): runs its pending tasks again under this process, or nothing
 * when it completed. Undefined when there is none.
 */
function storedExperiment(run: LoopRun, match: { iteration?: number; phase?: string }): { id: ExperimentId; completed: boolean } | undefined {
  const e = run.o.store.trainLoops.experimentsOf(run.loopId).find((x) => (match.iteration !== undefined ? x.iteration === match.iteration && x.phase === undefined : x.phase === match.phase));
  if (!e) return undefined;
  const pending = run.o.store.pendingTasks(e.id).length;
  if (pending === 0 && e.status === 'completed') return { id: e.id, completed: true };
  run.o.store.claimExperiment(e.id);
  return { id: e.id, completed: false };
}

/**
 * Sample a group: stores iteration `k`'s `rollouts` experiment (each task G times, seed derived
 * from the loop seed and k) and runs it on-policy with the current provider: sampling at the
 * loop's temperature with no top-k/top-p/min-p truncation, token ids recorded. Reports each
 * finished rollout through `onEvent`. When the loop already stored iteration k's experiment
 * (a resume), it is used again: its stored rollouts are kept and only its pending tasks run
 * (`reused`: none had to).
 */
export async function sampleGroup(run: LoopRun, k: number, tasks: readonly Task[]): Promise<{ experimentId: ExperimentId; cancelled: boolean; reused: boolean }> {
  const { o } = run;
  const G = o.group;
  const seed = deriveSeed(o.seed, 'iteration', k);
  const stored = storedExperiment(run, { iteration: k });
  if (stored?.completed) return { experimentId: stored.id, cancelled: false, reused: true };
  const id = stored?.id ?? o.store.createExperiment({
    kind: 'rollouts',
    ...experimentBase(run, 'train', tasks.length),
    seed,
    config: {
      ...o.config,
      workflowFile: o.workflow.file,
      models: modelsConfig(run),
      rollouts: { group: G, temperature: o.temperature, mode: 'train-loop', learningRoles: [...o.roles], recordTokens: true },
      trainLoop: { loopId: run.loopId, iteration: k, hyper: run.hyper },
    },
    tasks: sampledTaskList(tasks, G),
  }).id;
  const res = await executePending({
    store: o.store, experimentId: id, graph: o.graph, grader: o.dataset.grader, provider: run.provider, tools: o.tools, seed, signal: o.signal, modelFor: modelFor(run),
    parallel: parallelOf(run, tasks.length * G), sampling: { temperature: o.temperature, topK: 0, topP: 1, minP: 0 }, recordTokens: true,
    onRun: (_run, done, total) => {
      killPoint('rollout-stored');
      o.onEvent?.({ type: 'rollout', iteration: k, done, total });
    },
  });
  finishExperiment(o.store, id, res);
  return { experimentId: id, cancelled: res.cancelled, reused: false };
}

/** Score a group: the experiment's runs and calls, their group advantages (core/rollouts/groups.ts), stored. */
export function scoreGroup(store: Store, experimentId: ExperimentId, G: number, roles: readonly string[]): { runs: RunRecord[]; calls: ExperimentCall[]; rows: AdvantageRow[]; summary: RolloutSummary } {
  const runs = store.listRuns(experimentId);
  const calls = store.getExperimentCalls(experimentId);
  const { rows, summary } = groupRollouts(runs, G, roles);
  store.improve.saveAdvantages(rows);
  return { runs, calls, rows, summary };
}

/** Apply a step: one policy step of a role's model on its batch (none for an empty batch). */
export async function applyPolicyStep(run: LoopRun, role: TrainedRole, batch: RoleBatch): Promise<StepResult | undefined> {
  const { o } = run;
  if (!batch.samples.length) return undefined;
  return await role.model.policyStep(batch.samples, { lr: o.lr, kl: o.kl, temperature: o.temperature, ...(o.maxGradNorm !== undefined ? { maxGradNorm: o.maxGradNorm } : {}), ...(o.entropy ? { entropy: o.entropy } : {}) });
}

/** Sequences per SFT optimiser step (as `flowlab train --mode sft`'s default batch). */
export const SFT_BATCH = 32;

/**
 * Apply the SFT step: `passes` passes over a role's successful sequences, in batches of at most
 * SFT_BATCH, each an Adam step at `lr` with the loop's gradient clip; none for an empty batch.
 * Returns one StepResult: the mean loss of the batches, their tokens and milliseconds summed.
 */
export async function applySftStep(run: LoopRun, role: TrainedRole, seqs: readonly SftSequence[], passes: number, lr: number): Promise<StepResult | undefined> {
  if (!seqs.length) return undefined;
  const results: StepResult[] = [];
  for (let p = 0; p < passes; p++) {
    for (const b of chunks(seqs, SFT_BATCH)) results.push(await role.model.sftStep(b, { lr, ...(run.o.maxGradNorm !== undefined ? { maxGradNorm: run.o.maxGradNorm } : {}) }));
  }
  return {
    loss: results.reduce((s, r) => s + r.loss, 0) / results.length,
    tokens: results.reduce((s, r) => s + r.tokens, 0),
    ms: results.reduce((s, r) => s + r.ms, 0),
  };
}

/**
 * Write a version's file: the role's stepped weights as iteration `k`'s GGUF (`versionFile`,
 * written by the trainer through a temp file and a rename). Returns the file and the seconds the
 * write took. Nothing is recorded: the loop records every role's version of an iteration at
 * once (`versionRecord`, `store.trainLoops.commitIteration`).
 */
export async function writeRoleFile(run: LoopRun, roleName: string, role: TrainedRole, k: number): Promise<{ file: string; seconds: number }> {
  const file = versionFile(run.o.versionsDir, run.loopId, roleName, k);
  mkdirSync(path.dirname(file), { recursive: true });
  const t0 = performance.now();
  // The optimiser's state first (a resume continues from it; core/training/optimizerFile.ts): a kill
  // between the two leaves a state file whose version is not recorded, rewritten when the iteration runs again.
  const optimizer = role.model.optimizerState?.();
  if (optimizer) writeOptimizerFile(optimizerFileOf(file), optimizer);
  await role.model.writeGguf(file);
  killPoint('version-file-written');
  return { file, seconds: (performance.now() - t0) / 1000 };
}

/**
 * A version's record: the role's file of iteration `k` as the child of the role's newest
 * version (`hyper.mode`: the step kind, `grpo`, `sft` or `sft+grpo`; `step`: the policy step,
 * absent in an SFT-only iteration) with the iteration's metrics and seconds (sampling and
 * training of the iteration, and the write).
 */
export function versionRecord(
  run: LoopRun,
  roleName: string,
  role: TrainedRole,
  k: number,
  experimentId: ExperimentId,
  step: StepResult | undefined,
  m: RoleIterationMetrics,
  score: number,
  seconds: { sampling: number; training: number; write: number },
  file: string,
): NewWeightVersion {
  return {
    role: roleName,
    basePath: role.basePath,
    path: file,
    ...(role.parentId ? { parentId: role.parentId } : {}),
    experimentId,
    iteration: k,
    hyper: { ...run.hyper, mode: m.step },
    metrics: {
      reward: m.reward, score, loss: step?.loss ?? null, kl: step?.kl ?? null, samples: m.samples, signalSamples: m.signalSamples, tokens: m.trainTokens,
      ...(m.sftSequences !== undefined && { sftSequences: m.sftSequences, sftLoss: m.sftLoss ?? null }),
      rungs: m.rungs, trainTokensPerSecond: m.trainTokensPerSecond ?? null,
      seconds,
    },
  };
}

/** After a version is recorded: moves the role and its `train:<role>` ref to its file (the caller reloads the provider). */
export function adoptVersion(run: LoopRun, roleName: string, role: TrainedRole, version: WeightVersion): void {
  role.parentId = version.id;
  role.path = version.path;
  role.versions.push(version.id);
  run.models.models[trainRef(roleName)] = version.path;
}

/**
 * Evaluate held-out: stores a `run` experiment over the held-out tasks, K samples each (1 when
 * greedy: `heldoutTemperature` 0), with a seed fixed by the loop seed, so `before` and `after`
 * see the same tasks and seeds (paired). Token ids are not recorded: nothing trains on it.
 * Returns undefined when there are no held-out tasks.
 */
export async function evaluateHeldout(run: LoopRun, phase: 'before' | 'after'): Promise<HeldoutResult | undefined> {
  const { o } = run;
  if (!o.heldoutTasks.length) return undefined;
  const greedy = !(o.heldoutTemperature > 0);
  const K = greedy ? 1 : Math.max(1, o.heldoutSamples);
  const seed = deriveSeed(o.seed, 'heldout');
  const stored = storedExperiment(run, { phase: `heldout-${phase}` });
  const id = stored?.id ?? o.store.createExperiment({
    kind: 'run',
    ...experimentBase(run, 'heldout', o.heldoutTasks.length),
    seed,
    config: { ...o.config, workflowFile: o.workflow.file, models: modelsConfig(run), trainLoop: { loopId: run.loopId, phase: `heldout-${phase}`, samples: K, temperature: greedy ? 0 : o.heldoutTemperature } },
    tasks: sampledTaskList(o.heldoutTasks, K, true),
  }).id;
  if (!stored?.completed) {
    const res = await executePending({
      store: o.store, experimentId: id, graph: o.graph, grader: o.dataset.grader, provider: run.provider, tools: o.tools, seed, signal: o.signal, modelFor: modelFor(run),
      parallel: parallelOf(run, o.heldoutTasks.length * K), sampling: greedy ? { temperature: 0 } : { temperature: o.heldoutTemperature, topK: 0, topP: 1, minP: 0 },
    });
    finishExperiment(o.store, id, res);
  }
  const runs = o.store.listRuns(id);
  const result: HeldoutResult = { ...heldoutResult(id, runs, o.store.getExperimentCalls(id), o.roles), ...heldoutAccuracy(runs, o.roles, o.dataset.classOf) };
  // What the split tests: accuracy per task novelty (in-template / new-wording) where the split has both.
  const noveltyById = new Map(sampledTaskList(o.heldoutTasks, K, true).map((t, i) => [t.taskId, o.heldoutTasks[Math.floor(i / K)]!.meta?.novelty]));
  const classOf = o.dataset.classOf;
  const novelty = accuracyByNovelty(runs, (taskId) => { const n = noveltyById.get(taskId); return typeof n === 'string' ? n : undefined; }, classOf && ((label) => classOf({ expected: label })));
  if (novelty) result.novelty = novelty;
  if (o.dataset.heldoutNovelty) result.what = o.dataset.heldoutNovelty;
  o.onEvent?.({ type: 'heldout', phase, result });
  return result;
}

