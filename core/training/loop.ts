/**
 * The laptop RL loop: rollouts -> reward ladder -> per-role group advantages -> one
 * policy step per trained role -> a new GGUF version per role -> reload -> repeat.
 *
 * Each iteration is a stored `rollouts` experiment (G on-policy samples per task, decoded
 * together, token ids recorded), so every trajectory, ladder and advantage of the loop can be
 * inspected, compared and exported like any other. Each trained role holds its own weights
 * (its own trainable model and its own model ref, `train:<role>`), so roles co-evolve
 * independently even when they start from the same file. Every version written is recorded in
 * the store with its lineage (parent version, experiment, iteration, hyper-parameters,
 * metrics). Held-out evaluation runs before and after, with the same tasks and seeds (paired).
 *
 * core never imports an ML library: the trainer and the model provider are injected.
 *
 * This file is the loop; each step is a named function of core/training/steps.ts (sample a
 * group, score it, apply a step, write a version, evaluate held-out) over the pure parts in
 * core/training/iteration.ts (tasks of an iteration, per-role batches, metrics).
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import type { RoleName } from '../ids.ts';
import { killPoint } from '../killPoint.ts';
import type { ModelProvider } from '../model/provider.ts';
import type { ExperimentCall } from '../store/types.ts';
import { newWeightVersionId, type NewWeightVersion } from '../store/weights.ts';
import { choiceAllowed, choiceMask } from './choiceMask.ts';
import { isTrainable, type CallMask } from './samples.ts';
import { TrainingError } from './errors.ts';
import { iterationMetrics, iterationSteps, iterationTasks, mean, minScoreOf, roleIterationMetrics, roleSftBatches, roleStepBatches, stepKind, trainRef, wiringRootFailures } from './iteration.ts';
import type { SftSequence, StepResult, TrainableModel } from './port.ts';
import { sweepLoopFolder } from './recover.ts';
import { readOptimizerFile } from './optimizerFile.ts';
import { adoptVersion, applyPolicyStep, applySftStep, evaluateHeldout, modelsSnapshot, sampleGroup, scoreGroup, versionRecord, writeRoleFile } from './steps.ts';
import type { RunRecord } from '../results/index.ts';
import type { HeldoutResult, IterationMetrics, LoopHyper, LoopModels, LoopRun, RoleIterationMetrics, SftSchedule, TrainedRole, TrainLoopOptions, TrainLoopReport, TrainLoopState } from './types.ts';

export type { HeldoutResult, IterationMetrics, LoopEvent, TrainLoopState, LoopHyper, LoopModels, RoleIterationMetrics, TrainLoopOptions, TrainLoopReport } from './types.ts';
export { trainRef };

/** A fresh loop id, `tl-<yyyymmdd>-<hhmmss>-<4 base-36 chars>` (UTC time, random suffix). */
export function newLoopId(now = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `tl-${now.getUTCFullYear()}${p(now.getUTCMonth() + 1)}${p(now.getUTCDate())}-${p(now.getUTCHours())}${p(now.getUTCMinutes())}${p(now.getUTCSeconds())}-${Math.floor(Math.random() * 36 ** 4).toString(36).padStart(4, '0')}`;
}

/**
 * Checks the options before anything is loaded: at least one role, each a role of the workflow,
 * a sampling temperature > 0 (on-policy training samples), training tasks, and a well-formed SFT
 * schedule (warm start >= 0, passes >= 1, lr in (0, 1), success scores in (0, 1] of trained
 * roles). Throws TrainingError (NO_ROLE, NEEDS_TEMPERATURE, NO_TASKS, BAD_SFT) naming what is wrong.
 */
export function checkLoopOptions(o: Pick<TrainLoopOptions, 'roles' | 'graph' | 'temperature' | 'trainTasks' | 'sft'>): void {
  if (!o.roles.length) throw new TrainingError('NO_ROLE', 'train-loop: no role to train');
  for (const role of o.roles) {
    if (!o.graph.roles.has(role as RoleName)) throw new TrainingError('NO_ROLE', `train-loop: the workflow has no role "${role}" (roles: ${[...o.graph.roles.keys()].join(', ')})`);
  }
  if (!(o.temperature > 0)) throw new TrainingError('NEEDS_TEMPERATURE', 'train-loop: on-policy training needs a sampling temperature > 0');
  if (!o.trainTasks.length) throw new TrainingError('NO_TASKS', 'train-loop: no training tasks');
  const sft = o.sft;
  if (sft) {
    if (!(Number.isInteger(sft.warmStart) && sft.warmStart >= 0)) throw new TrainingError('BAD_SFT', `train-loop: the warm start must be a whole number of iterations >= 0, got ${String(sft.warmStart)}`);
    if (!(Number.isInteger(sft.steps) && sft.steps >= 1)) throw new TrainingError('BAD_SFT', `train-loop: SFT passes must be a whole number >= 1, got ${String(sft.steps)}`);
    if (sft.pool !== undefined && !(Number.isInteger(sft.pool) && sft.pool >= 0)) throw new TrainingError('BAD_SFT', `train-loop: the SFT pool must be a whole number of successes per class >= 0, got ${String(sft.pool)}`);
    if (!(sft.lr > 0 && sft.lr < 1)) throw new TrainingError('BAD_SFT', `train-loop: the SFT learning rate must be in (0, 1), got ${String(sft.lr)}`);
    const scores = typeof sft.minScore === 'number' ? { '*': sft.minScore } : sft.minScore;
    for (const [role, x] of Object.entries(scores)) {
      if (!(x > 0 && x <= 1)) throw new TrainingError('BAD_SFT', `train-loop: the SFT success score${role === '*' ? '' : ` of role "${role}"`} must be in (0, 1], got ${String(x)}`);
      if (role !== '*' && !o.roles.includes(role)) throw new TrainingError('BAD_SFT', `train-loop: an SFT success score names role "${role}", which is not trained (roles: ${o.roles.join(', ')})`);
    }
    for (const role of sft.roles ?? []) {
      if (!o.roles.includes(role)) throw new TrainingError('BAD_SFT', `train-loop: the SFT roles name "${role}", which is not trained (roles: ${o.roles.join(', ')})`);
    }
  }
}

/** The loop's hyper-parameters as stored with every experiment and version. */
export function loopHyper(o: TrainLoopOptions, loopId: string): LoopHyper {
  return { lr: o.lr, kl: o.kl, temperature: o.temperature, group: o.group, tasksPerIteration: o.tasksPerIteration, maxGradNorm: o.maxGradNorm ?? null, ...(o.entropy ? { entropy: o.entropy } : {}), seed: o.seed, dataset: o.dataset.name, loopId, ...(o.sft && { sft: o.sft }) };
}

/**
 * Runs the loop: held-out before; then per iteration k = 1..iterations: sample a group (G
 * rollouts per task), score it (group advantages, stored), build each trained role's batch,
 * apply one policy step per role — or, under `o.sft`, the SFT step on the role's successful
 * calls instead (warm start) or before it (mix) — write each stepped role's version file, record
 * the iteration's versions together (one transaction, with the loop's progress:
 * store.trainLoops.commitIteration) and reload the provider over the new files; held-out after.
 * Cancellation (signal) stops between or within iterations and skips the held-out after. The
 * provider and every trainable model are disposed at the end; the stored loop is marked
 * completed, cancelled or failed (a killed process leaves it running until the store marks it
 * interrupted).
 *
 * A resume (`o.resume`) claims the stored loop, sweeps its versions folder (core/training/recover.ts:
 * temp files and unrecorded version files removed), loads each role from its newest recorded
 * version (KL reference: the file the loop started it from) and continues at the first
 * iteration not recorded, using that iteration's stored rollouts when it has them. A new loop
 * first sweeps the folders of the other loops under `versionsDir` that are stored and not running.
 */
export async function runTrainLoop(o: TrainLoopOptions): Promise<TrainLoopReport> {
  checkLoopOptions(o);
  const loopId = o.loopId ?? newLoopId();
  const hyper = loopHyper(o, loopId);
  const loops = o.store.trainLoops;
  let state: TrainLoopState;
  let claimedDir: string | undefined;
  if (o.resume) {
    const row = loops.claim(loopId);
    state = row.state as unknown as TrainLoopState;
    claimedDir = row.versionsDir;
  } else {
    sweepStaleLoops(o);
    state = { roles: {}, iterations: [] };
    for (const role of o.roles) {
      const start = o.startVersions?.[role];
      const file = start?.path ?? o.models.models[o.models.roleModels[role] ?? 'default'];
      if (!file) throw new TrainingError('NO_MODEL_FILE', `train-loop: role "${role}" has no model file`);
      state.roles[role] = { basePath: start?.basePath ?? file, startPath: file, path: file, ...(start ? { parentId: start.id } : {}), versions: [] };
    }
    loops.create({ id: loopId, iterations: o.iterations, versionsDir: path.resolve(o.versionsDir), plan: o.plan ?? {}, state: state as unknown as Record<string, unknown> });
  }
  let status: 'completed' | 'cancelled' | 'failed' = 'failed';
  try {
    if (claimedDir !== undefined) {
      // Claimed: from here on a failure marks the loop failed (resumable), never leaves it running.
      const missing = o.roles.filter((r) => !state.roles?.[r]);
      if (missing.length) throw new TrainingError('NO_ROLE', `train-loop: loop ${loopId} has no stored lineage for role(s) ${missing.join(', ')}`);
      sweepLoopFolder(claimedDir, loopId, recordedFiles(o, loopId));
    }
    const report = await runLoop(o, loopId, hyper, state);
    status = report.cancelled ? 'cancelled' : 'completed';
    return report;
  } finally {
    try {
      loops.finish(loopId, status);
    } catch {
      // the store is closed or gone: the loop reads as interrupted on the next open
    }
  }
}

/** Absolute paths of every version file recorded for loop `loopId` (hyper.loopId). */
function recordedFiles(o: TrainLoopOptions, loopId: string): Set<string> {
  return new Set(o.store.weights.list().filter((v) => v.hyper['loopId'] === loopId).map((v) => path.resolve(v.path)));
}

/** Sweeps the folders under `versionsDir` of stored loops that are not running now (a new loop's start). */
function sweepStaleLoops(o: TrainLoopOptions): void {
  let names: string[];
  try {
    names = readdirSync(o.versionsDir);
  } catch {
    return; // no folder yet
  }
  for (const name of names) {
    const row = o.store.trainLoops.find(name);
    if (!row || path.resolve(row.versionsDir) !== path.resolve(o.versionsDir) || o.store.trainLoops.isLive(name)) continue;
    sweepLoopFolder(o.versionsDir, name, recordedFiles(o, name));
  }
}

async function runLoop(o: TrainLoopOptions, loopId: string, hyper: LoopHyper, state: TrainLoopState): Promise<TrainLoopReport> {
  // Each trained role: its own ref, file, trainable model and lineage.
  const models: LoopModels = modelsSnapshot(o.models);
  const roles = new Map<string, TrainedRole>();
  const trainables: TrainableModel[] = [];
  let live: ModelProvider | undefined;
  try {
    for (const role of o.roles) {
      const s = state.roles[role]!;
      const model = await o.trainer.load(s.path, s.path === s.startPath ? {} : { reference: s.startPath });
      trainables.push(model);
      // A resumed loop continues with the optimiser state its last version was written with (not zeros).
      if (o.resume && s.versions.length > 0 && model.restoreOptimizerState) {
        const saved = readOptimizerFile(s.path);
        if (saved) model.restoreOptimizerState(saved);
      }
      roles.set(role, { model, basePath: s.basePath, startPath: s.startPath, path: s.path, ...(s.parentId ? { parentId: s.parentId } : {}), versions: [...s.versions] });
      models.models[trainRef(role)] = s.path;
      models.roleModels[role] = trainRef(role);
    }
    live = await o.makeProvider(modelsSnapshot(models));
    const run: LoopRun = { o, loopId, hyper, models, provider: live };
    // Each trained role's token texts: what a grammar allowed at a choice (core/training/choiceMask.ts).
    const vocabularies = new Map([...roles].map(([role, r]) => [role, r.model.vocabulary?.()]));
    const piecesOf = (role: string) => vocabularies.get(role);
    const stateOf = (iterations: IterationMetrics[], heldoutBefore: HeldoutResult | undefined): TrainLoopState => ({
      roles: Object.fromEntries([...roles].map(([role, r]) => [role, { basePath: r.basePath, startPath: r.startPath, path: r.path, ...(r.parentId ? { parentId: r.parentId } : {}), versions: [...r.versions] }])),
      iterations,
      ...(heldoutBefore && { heldoutBefore }),
    });

    const iterations: IterationMetrics[] = [...state.iterations];
    let before = state.heldoutBefore;
    if (!before && iterations.length === 0) {
      before = await evaluateHeldout(run, 'before');
      if (before) o.store.trainLoops.saveState(loopId, stateOf(iterations, before) as unknown as Record<string, unknown>);
    }
    let cancelled = false;
    const perIteration = Math.max(1, o.tasksPerIteration);
    for (let k = iterations.length + 1; k <= o.iterations; k++) {
      if (o.signal?.aborted) {
        cancelled = true;
        break;
      }
      const t0 = performance.now();
      const sampled = await sampleGroup(run, k, iterationTasks(o.trainTasks, k, perIteration));
      if (sampled.cancelled) {
        cancelled = true;
        break;
      }
      killPoint('rollouts-done');
      const { runs, calls, rows, summary } = scoreGroup(o.store, sampled.experimentId, o.group, o.roles);
      const tSampled = performance.now();

      // Per trained role: the SFT step on its successful calls (warm start, or mixed), then the
      // policy step on its own calls and advantages (after the warm start).
      const plans = new Map(o.roles.map((role) => [role, iterationSteps(k, o.sft, role)]));
      // Grammar-bound calls train on their chosen tokens only, each under the distribution renormalised
      // over what the grammar allowed there (core/training/choiceMask.ts).
      const masks = await choiceMasks(live, calls.filter((c) => o.roles.includes(c.role)), piecesOf);
      const maskOf = (c: (typeof calls)[number]) => masks.get(c);
      const batches = roleStepBatches(calls, rows, o.roles, maskOf);
      const sftRoles = o.roles.filter((role) => plans.get(role)!.sft);
      // The SFT data: this iteration's rollouts, or with a replay pool every iteration's so far, newest first.
      const pool = o.sft?.pool && sftRoles.length ? loopRollouts(o.store, loopId, k) : undefined;
      const sftRuns = pool?.runs ?? runs;
      const sftCalls = pool?.calls ?? calls;
      const sftMasks = pool ? await choiceMasks(live, successfulCalls(pool, sftRoles, o.sft!.minScore), piecesOf) : masks;
      const expectedOf = new Map(sftRuns.map((r) => [r.runId as string, r.expected]));
      const classOf = o.dataset.classOf && ((id: string) => (expectedOf.has(id) ? o.dataset.classOf!({ expected: expectedOf.get(id)! }) : undefined));
      const sftBatches = o.sft && sftRoles.length ? roleSftBatches(sftCalls, sftRuns, sftRoles, o.sft.minScore, (c) => sftMasks.get(c), classOf, o.sft.pool) : new Map<string, SftSequence[]>();
      const steps = new Map<string, StepResult | undefined>();
      const sftSteps = new Map<string, StepResult | undefined>();
      for (const role of o.roles) {
        const plan = plans.get(role)!;
        if (plan.sft && o.sft) sftSteps.set(role, await applySftStep(run, roles.get(role)!, sftBatches.get(role) ?? [], o.sft.steps, o.sft.lr));
        if (plan.policy) steps.set(role, await applyPolicyStep(run, roles.get(role)!, batches.get(role)!));
      }
      const tTrained = performance.now();

      // Write each updated role's version file, then record the iteration's versions together
      // with the loop's progress (all or nothing), then reload the provider with the new files.
      const score = mean(runs.map((r) => r.score));
      const roleMetrics: Record<string, RoleIterationMetrics> = {};
      const records: Array<{ role: string; record: NewWeightVersion }> = [];
      for (const role of o.roles) {
        const st = roles.get(role)!;
        const step = steps.get(role);
        const sftStep = sftSteps.get(role);
        const m = roleIterationMetrics(runs, role, summary, batches.get(role)!, step, st.path, plans.get(role)!.sft ? { sequences: sftBatches.get(role)?.length ?? 0, step: sftStep } : undefined);
        m.step = stepKind(sftStep, step);
        m.wiringRootFailures = wiringRootFailures(runs, role);
        if (step || sftStep) {
          const written = await writeRoleFile(run, role, st, k);
          const record = { ...versionRecord(run, role, st, k, sampled.experimentId, step, m, score, { sampling: (tSampled - t0) / 1000, training: (tTrained - tSampled) / 1000, write: written.seconds }, written.file), id: newWeightVersionId() };
          records.push({ role, record });
          m.versionId = record.id;
          m.path = written.file;
        }
        roleMetrics[role] = m;
      }
      const draft = iterationMetrics(k, sampled.experimentId, runs, calls, roleMetrics, { start: t0, sampled: tSampled, trained: tTrained, end: performance.now() }, o.dataset.classOf);
      const next = stateOf([...iterations, draft], before);
      for (const { role, record } of records) {
        const r = next.roles[role]!;
        next.roles[role] = { ...r, path: record.path, parentId: record.id!, versions: [...r.versions, record.id!] };
      }
      const saved = o.store.trainLoops.commitIteration(loopId, k, records.map((r) => r.record), next as unknown as Record<string, unknown>);
      records.forEach((r, i) => adoptVersion(run, r.role, roles.get(r.role)!, saved[i]!));
      killPoint('iteration-committed');
      if (records.length) {
        await live.dispose();
        live = undefined;
        run.provider = live = await o.makeProvider(modelsSnapshot(models));
      }
      const metrics = iterationMetrics(k, sampled.experimentId, runs, calls, roleMetrics, { start: t0, sampled: tSampled, trained: tTrained, end: performance.now() }, o.dataset.classOf);
      iterations.push(metrics);
      if (records.length) o.store.trainLoops.saveState(loopId, stateOf(iterations, before) as unknown as Record<string, unknown>); // the seconds with the reload
      o.onEvent?.({ type: 'iteration', metrics });
    }
    const after = before && !cancelled ? await evaluateHeldout(run, 'after') : undefined;
    return {
      loopId,
      roles: [...o.roles],
      iterations,
      ...(before && after ? { heldout: { before, after } } : {}),
      versions: Object.fromEntries([...roles].map(([role, r]) => [role, r.versions])),
      finalModels: Object.fromEntries([...roles].map(([role, r]) => [role, r.path])),
      cancelled,
      hyper,
    };
  } finally {
    await live?.dispose();
    for (const m of trainables) m.dispose();
  }
}

/**
 * The runs and calls of this loop's rollouts experiments of iterations 1..k, newest iteration
 * first (the SFT replay pool, SftSchedule.pool). Read from the store, so a resumed loop pools
 * what its earlier process sampled.
 */
function loopRollouts(store: TrainLoopOptions['store'], loopId: string, k: number): { runs: RunRecord[]; calls: ExperimentCall[] } {
  const exps = store.trainLoops.experimentsOf(loopId).filter((e) => e.phase === undefined && e.iteration !== undefined && e.iteration <= k).sort((a, b) => b.iteration! - a.iteration!);
  return { runs: exps.flatMap((e) => store.listRuns(e.id)), calls: exps.flatMap((e) => store.getExperimentCalls(e.id)) };
}

/** The calls of `roles` in runs that are a success for their role (score above 0 and at least its minScore). */
function successfulCalls(pool: { runs: readonly RunRecord[]; calls: readonly ExperimentCall[] }, roles: readonly string[], minScore: SftSchedule['minScore']): ExperimentCall[] {
  const score = new Map(pool.runs.map((r) => [r.runId as string, r.score]));
  return pool.calls.filter((c) => roles.includes(c.role) && (score.get(c.runId) ?? 0) > 0 && score.get(c.runId)! >= minScoreOf(minScore, c.role));
}

/**
 * The loss masks of the grammar-bound calls among `calls` (those with a JSON schema and recorded
 * ids), from the provider's token offsets (ModelProvider.tokenOffsets); none when the provider
 * cannot say where tokens start, or a call's text is not one JSON value (choiceMask).
 */
async function choiceMasks(provider: ModelProvider, calls: readonly ExperimentCall[], piecesOf: (role: string) => readonly string[] | undefined): Promise<Map<ExperimentCall, CallMask>> {
  const out = new Map<ExperimentCall, CallMask>();
  if (!provider.tokenOffsets) return out;
  for (const c of calls) {
    if (!c.jsonSchema || !isTrainable(c)) continue;
    const offsets = await provider.tokenOffsets(c.modelRef, c.completionTokenIds);
    const mask = choiceMask(c.completion, c.jsonSchema, offsets);
    if (!mask) continue;
    const pieces = piecesOf(c.role);
    const allowed = pieces?.length ? choiceAllowed(c.completion, c.jsonSchema, offsets, c.completionTokenIds, pieces) : undefined;
    out.set(c, { mask, ...(allowed && { allowed }) });
  }
  return out;
}
