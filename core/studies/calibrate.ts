/**
 * The dry run's quick calibration: measured speeds for the estimate (estimate.ts). Each distinct
 * (workflow, model) of the plan runs `tasks` tasks of the plan's first zone through the experiment
 * service on a scratch store (time to load, seconds, calls and tokens per run; the first load of
 * the process, which starts the runtime, is kept apart as `startSeconds`); each training
 * condition runs two iterations of its train loop (same roles, tasks per iteration, G and SFT
 * schedule; no held-out) on the scratch store (the mean seconds, calls and tokens of the two
 * iterations; what the loop spends outside them: trainer and model load). Nothing is written to
 * the study's store. `onNote` is told what starts, each stored run and each train-loop iteration
 * (with the seconds since its workflow's or loop's start), so a long calibration shows progress.
 */
import { startExperiment } from '../experiments/service.ts';
import type { ExperimentEvent } from '../experiments/spec.ts';
import { startTrainLoop } from '../experiments/trainLoop.ts';
import { computeWorkflowHash } from '../store/ids.ts';
import type { Store } from '../store/port.ts';
import { inContext, type StudyDeps } from './run.ts';
import { speedKey, type RunSpeed, type StudySpeeds, type TrainSpeed } from './estimate.ts';
import type { StudyPlan } from './plan.ts';

export interface CalibrateDeps extends Omit<StudyDeps, 'store' | 'versionsDir'> {
  /** A throwaway store (e.g. a temporary file), closed by the caller. */
  scratch: Store;
  /** A throwaway folder for the calibration's versions. */
  scratchVersionsDir: string;
}

/**
 * Measures the speeds of every condition and model of `plan` (see the file's comment). Zones
 * in `skipZones` are not used. `tasks`: runs per workflow and model (default 6).
 * Errors: those of the experiment service and the train loop (a model that does not load).
 */
export async function calibrateStudy(plan: StudyPlan, deps: CalibrateDeps, opts: { tasks?: number; skipZones?: ReadonlySet<string>; now?: () => number; onNote?: (m: string) => void } = {}): Promise<StudySpeeds> {
  const now = opts.now ?? (() => performance.now());
  const k = opts.tasks ?? 6;
  const zone = plan.zones.find((z) => !opts.skipZones?.has(z.id)) ?? plan.zones[0]!;
  const t0 = now();
  const secondsSince = (t: number) => ((now() - t) / 1000).toFixed(1);
  const runs: Record<string, RunSpeed> = {};
  const training: Record<string, TrainSpeed> = {};
  const byWorkflow = new Map<string, RunSpeed>();
  const serviceDeps = { store: deps.scratch, models: deps.models, ...(deps.tools && { tools: deps.tools }), ...(deps.datasets && { datasets: deps.datasets }) };
  let n = 0;
  const loads: number[] = [];
  for (const model of plan.models) {
    for (const c of plan.conditions) {
      const wf = deps.workflows[c.id]!;
      const wk = `${computeWorkflowHash(wf.text)}/${model.id}/${(c.cards ?? []).join(',')}`;
      const known = byWorkflow.get(wk);
      if (known) {
        runs[speedKey(c.id, model.id)] = known;
        continue;
      }
      opts.onNote?.(`calibrating ${c.id} on ${model.id}: ${k} tasks of ${zone.dataset}/${zone.split}`);
      const start = now();
      // Each stored run is a line (a window's dry run showed only the line above for minutes).
      const onEvent = (e: ExperimentEvent) => {
        if (e.type === 'run' && e.status !== 'cancelled') opts.onNote?.(`calibrating ${c.id} on ${model.id}: run ${e.done} of ${e.total} done after ${secondsSince(start)} s`);
      };
      const handle = await startExperiment({
        kind: 'run', workflow: wf, dataset: zone.dataset, split: zone.split, limit: k, offset: zone.offset, seed: plan.seeds[0]!, models: deps.resolve(c.id, model), source: 'study calibration',
        experimentId: `calibration-${n++}-${Date.now().toString(36)}`, ...(deps.dataDir !== undefined && { dataDir: deps.dataDir }),
      }, serviceDeps, { onEvent });
      const loaded = now();
      loads.push((loaded - start) / 1000);
      const outcome = await handle.done;
      const end = now();
      const stored = deps.scratch.listRuns(outcome.experimentId);
      const calls = deps.scratch.getExperimentCalls(outcome.experimentId).length;
      const m = Math.max(1, stored.length);
      const speed: RunSpeed = {
        secondsPerRun: (end - loaded) / 1000 / m,
        callsPerRun: calls / m,
        tokensPerRun: stored.reduce((s, r) => s + r.promptTokens + r.completionTokens, 0) / m,
        loadSeconds: (loaded - start) / 1000,
      };
      byWorkflow.set(wk, speed);
      runs[speedKey(c.id, model.id)] = speed;
    }
    for (const c of plan.conditions.filter((x) => x.train)) {
      const t = c.train!;
      opts.onNote?.(`calibrating ${c.id}'s train loop on ${model.id}: 2 iterations of ${t.limit} tasks x G ${t.group}`);
      const start = now(); // the trainer's first load counts, as it does in the study
      const trainer = await deps.trainer();
      const loop = startTrainLoop({
        workflow: deps.workflows[c.id]!, dataset: plan.train!.dataset, split: plan.train!.split, heldoutSplit: plan.train!.split, heldout: 0, roles: t.roles,
        group: t.group, iterations: 2, tasksPerIteration: t.limit, lr: t.lr, kl: t.kl, temperature: t.temperature, maxGradNorm: t.maxGradNorm, heldoutSamples: 1, heldoutTemperature: 0,
        seed: plan.seeds[0]!, models: deps.resolve(c.id, model), startVersions: {}, versionsDir: deps.scratchVersionsDir, ...(deps.dataDir !== undefined && { dataDir: deps.dataDir }),
        ...(t.sft && { sft: { warmStart: t.sft.warmStart, mix: t.sft.mix, steps: t.sft.steps, lr: t.sft.lr, minScore: t.sft.minScore, ...(t.sft.roles && { roles: t.sft.roles }) } }),
      }, { ...serviceDeps, trainer }, {
        // Each iteration of the train loop is a line (an iteration of a real model takes minutes).
        onEvent: (e) => {
          if (e.type === 'iteration') opts.onNote?.(`calibrating ${c.id}'s train loop on ${model.id}: iteration ${e.metrics.iteration} of 2 done after ${secondsSince(start)} s`);
        },
      });
      const report = await loop.done.catch((err: unknown) => {
        throw inContext(`calibrating ${c.id}'s train loop on ${model.id}`, err);
      });
      const wall = (now() - start) / 1000;
      const its = report.iterations;
      const k = Math.max(1, its.length);
      const iterSeconds = its.length ? its.reduce((s, m) => s + m.seconds.total, 0) : wall;
      const calls = its.flatMap((m) => deps.scratch.getExperimentCalls(m.experimentId));
      training[speedKey(c.id, model.id)] = {
        secondsPerIteration: iterSeconds / k,
        callsPerIteration: calls.length / k,
        tokensPerIteration: calls.reduce((s, x) => s + x.promptTokens + x.completionTokens, 0) / k,
        overheadSeconds: Math.max(0, wall - iterSeconds),
      };
    }
  }
  // Loads after the first are warm (the runtime is up): every cell pays the warm load, the study once the difference.
  const warm = loads.length > 1 ? Math.min(...loads.slice(1)) : (loads[0] ?? 0);
  for (const s of Object.values(runs)) s.loadSeconds = Math.min(s.loadSeconds, warm);
  return { runs, training, startSeconds: Math.max(0, (loads[0] ?? 0) - warm), calibrationSeconds: (now() - t0) / 1000 };
}
