/**
 * Runs a study: its training units (one train loop per training condition, seed and model;
 * core/experiments/trainLoop.ts), then every cell as a `run` experiment with an id derived from
 * the study's (core/studies/cells.ts), through the experiment service. Resumable: a cell whose
 * experiment is complete is skipped, one with pending tasks is resumed (only those run), a
 * finished train loop is never trained again (its versions are in the study's state); nothing
 * is duplicated. A token or minute budget stops it cleanly: the run in flight is dropped (not
 * stored) and the cell stays resumable; a train loop stopped midway trains again on resume.
 */
import { finishStudyRecord, recordStudy } from '../repro/study.ts';
import { cardsConfigFor } from '../distill/hooks.ts';
import { labelClassOf } from '../guards/index.ts';
import { FlowlabError, errorMessage } from '../errors.ts';
import type { ToolSource } from '../engine/index.ts';
import { startExperiment } from '../experiments/service.ts';
import { processScheduler, runOrdered, Scheduler, type Group } from '../schedule/index.ts';
import type { ServiceDeps, WorkflowSource } from '../experiments/spec.ts';
import { startTrainLoop } from '../experiments/trainLoop.ts';
import type { ModelConfig, ModelPort } from '../model/config.ts';
import type { Store } from '../store/port.ts';
import type { StudyStatus } from '../store/studies.ts';
import { getDataset } from '../tasks/registry.ts';
import type { Dataset } from '../tasks/types.ts';
import type { Trainer } from '../training/port.ts';
import { loopIdOf, studyCells, trainingUnits, type StudyCell, type TrainingUnit } from './cells.ts';
import type { StudyEstimate, StudySpeeds } from './estimate.ts';
import type { StudyModel, StudyPlan } from './plan.ts';
import { buildStudyTable, type StudyRun, type StudyTable } from './table.ts';

/** A finished train loop of a unit: the versions its cells evaluate. */
export interface UnitResult {
  loopId: string;
  /** Role -> the last version the loop wrote. */
  versions: Record<string, string>;
  seconds: number;
  sampledTokens: number;
}

/** What a study keeps in its row's state (core/store/studies.ts). */
export interface StudyState {
  units?: Record<string, UnitResult>;
  /** Train loops started per unit (a stopped one is retried with the next loop id). */
  attempts?: Record<string, number>;
  skippedZones?: string[];
  speeds?: StudySpeeds;
  /** The last dry run's estimate of the whole study (before anything ran). */
  estimate?: { seconds: number; tokens: number; calls: number; runs: number; at: number };
  /** Wall seconds of every invocation that ran something, in order. */
  wallSeconds?: number[];
}

/** What a study needs from its composition root. */
export interface StudyDeps {
  store: Store;
  models: ModelPort;
  tools?: ToolSource;
  datasets?: (name: string, dataDir?: string) => Dataset;
  /** Loads the trainer (only when a train loop is due). */
  trainer: () => Promise<Trainer>;
  /** Each condition's workflow, by condition id. */
  workflows: Record<string, WorkflowSource>;
  /** The models of a condition's workflow on a plan model, with trained roles on their versions. */
  resolve: (conditionId: string, model: StudyModel, roleVersions?: Record<string, string>) => ModelConfig;
  /** Where train loops write versions. */
  versionsDir: string;
  dataDir?: string;
}

export type StudyEvent =
  | { type: 'note'; message: string }
  | { type: 'unit'; unit: string; phase: 'started' | 'iteration' | 'finished' | 'skipped'; iteration?: number; iterations: number }
  | { type: 'cell'; cell: string; experimentId: string; phase: 'started' | 'run' | 'finished' | 'skipped'; done: number; total: number; resumed?: boolean }
  | { type: 'budget'; message: string };

export interface StudyRunOptions {
  /** Stop once this many tokens (prompt + completion of the model calls of stored runs and train-loop rollouts) were spent in this invocation. */
  budgetTokens?: number;
  /** Stop once this many minutes of wall time have passed in this invocation. */
  budgetMinutes?: number;
  signal?: AbortSignal;
  onEvent?: (e: StudyEvent) => void;
  now?: () => number;
  /**
   * The study's tasks in flight (`--parallel`; core/schedule). Given, the cells ready to run (no
   * training, or their condition trained) run at once, up to `parallel` of them, sharing one
   * budget of `parallel` tasks in flight (a scheduler Group: each widens as the others end).
   * Absent: one cell after another, each at its models' default. The table does not depend on it
   * (each cell stores its runs in task order under its own derived id).
   */
  parallel?: number;
}

export interface StudyOutcome {
  studyId: string;
  status: Extract<StudyStatus, 'completed' | 'stopped' | 'failed'> | 'cancelled';
  table: StudyTable;
  /** Wall seconds of this invocation, and the tokens it spent. */
  wallSeconds: number;
  tokens: number;
  message?: string;
}

const toRun = (r: StudyRun): StudyRun => ({ taskId: r.taskId, seed: r.seed, score: r.score, correct: r.correct, promptTokens: r.promptTokens, completionTokens: r.completionTokens, startedAt: r.startedAt, endedAt: r.endedAt, ...(r.answer !== undefined && { answer: r.answer }), ...(r.expected !== undefined && { expected: r.expected }) });

/**
 * The novelty of each task of a zone (`meta.novelty`: `in-template` / `new-wording`), for
 * datasets that state what their split tests (`Dataset.novelty`); undefined for others (never
 * loads a file dataset). Never throws.
 */
function zoneNovelty(zone: StudyPlan['zones'][number]): ((taskId: string) => string | undefined) | undefined {
  try {
    const ds = getDataset(zone.dataset);
    if (!ds.novelty?.[zone.split]) return undefined;
    const by = new Map(ds.load({ split: zone.split, limit: zone.limit, offset: zone.offset }).map((t) => [t.id, t.meta?.novelty]));
    return (taskId) => {
      const n = by.get(taskId);
      return typeof n === 'string' ? n : undefined;
    };
  } catch {
    return undefined;
  }
}

/** The table of a study from what the store holds now (cells not run yet count no run). */
export function studyTableNow(store: Store, plan: StudyPlan, studyId: string, state: StudyState): StudyTable {
  const cells = studyCells(plan, studyId, new Set(state.skippedZones ?? []));
  const trainingSeconds: Record<string, number> = {};
  for (const u of trainingUnits(plan)) {
    const r = state.units?.[u.key];
    if (r) trainingSeconds[u.condition.id] = (trainingSeconds[u.condition.id] ?? 0) + r.seconds;
  }
  return buildStudyTable(plan, studyId, cells, (c) => (store.findExperiment(c.experimentId) ? store.listRuns(c.experimentId).map(toRun) : []), trainingSeconds, labelClassOf, zoneNovelty);
}

/** Pending runs of a cell: its zone's limit when its experiment does not exist yet. */
export function pendingRuns(store: Store, cell: StudyCell): number {
  return store.findExperiment(cell.experimentId) ? store.pendingTasks(cell.experimentId).length : cell.zone.limit;
}

/**
 * Runs (or resumes) a study whose row exists (core/store studies). Returns its outcome with the
 * table; never leaves a cell half-recorded. Errors thrown (not returned): the experiment
 * service's and train loop's start errors (bad roles, a model that does not load, datasets).
 */
export async function runStudy(plan: StudyPlan, studyId: string, deps: StudyDeps, opts: StudyRunOptions = {}): Promise<StudyOutcome> {
  const { store } = deps;
  const now = opts.now ?? (() => performance.now());
  const emit = (e: StudyEvent) => {
    try {
      opts.onEvent?.(e);
    } catch {
      // a broken listener must not break the study
    }
  };
  const t0 = now();
  let tokens = 0;
  const row = store.studies.get(studyId);
  let state = row.state as StudyState;
  store.markInterrupted();
  store.studies.update(studyId, { status: 'running' });
  recordStudy(store, studyId, row.plan, deps.models.environment?.());
  const overBudget = (): string | undefined => {
    if (opts.budgetTokens !== undefined && tokens >= opts.budgetTokens) return `token budget reached: ${tokens} of ${opts.budgetTokens} tokens spent`;
    if (opts.budgetMinutes !== undefined && (now() - t0) / 60_000 >= opts.budgetMinutes) return `time budget reached: ${((now() - t0) / 60_000).toFixed(2)} of ${opts.budgetMinutes} minutes`;
    return undefined;
  };
  const serviceDeps: ServiceDeps = { store, models: deps.models, ...(deps.tools && { tools: deps.tools }), ...(deps.datasets && { datasets: deps.datasets }) };
  let stopped: string | undefined;
  let group: Group | undefined;
  let status: StudyOutcome['status'] = 'completed';
  let message: string | undefined;

  const finish = (): StudyOutcome => {
    group?.close();
    const wall = (now() - t0) / 1000;
    state = { ...state, wallSeconds: [...(state.wallSeconds ?? []), wall] };
    store.studies.update(studyId, { status: status === 'cancelled' ? 'stopped' : status, state: { wallSeconds: state.wallSeconds } });
    if (status === 'completed') finishStudyRecord(store, studyId, studyCells(plan, studyId, new Set(state.skippedZones ?? [])));
    return { studyId, status, table: studyTableNow(store, plan, studyId, state), wallSeconds: wall, tokens, ...(message !== undefined && { message }) };
  };

  try {
    const cells = studyCells(plan, studyId, new Set(state.skippedZones ?? []));
    const units = trainingUnits(plan);
    // With `parallel`, the cells share one budget of that many tasks in flight (core/schedule Group).
    if (opts.parallel !== undefined) {
      group = processScheduler().group(`study ${studyId}`, opts.parallel);
      for (const c of cells) group.add(c.experimentId);
    }
    let trainer: Trainer | undefined;
    const trainUnit = async (u: TrainingUnit): Promise<boolean> => {
      if (state.units?.[u.key]) {
        emit({ type: 'unit', unit: u.key, phase: 'skipped', iterations: u.condition.train!.iterations });
        return true;
      }
      const attempt = state.attempts?.[u.key] ?? 0;
      state = { ...state, attempts: { ...state.attempts, [u.key]: attempt + 1 } };
      store.studies.update(studyId, { state: { attempts: state.attempts } });
      const t = u.condition.train!;
      const workflow = deps.workflows[u.condition.id]!;
      trainer ??= await deps.trainer();
      const started = now();
      emit({ type: 'unit', unit: u.key, phase: 'started', iterations: t.iterations });
      const loop = startTrainLoop({
        workflow, dataset: plan.train!.dataset, ...(deps.dataDir !== undefined && { dataDir: deps.dataDir }), split: plan.train!.split, heldoutSplit: plan.train!.split, heldout: 0,
        roles: t.roles, group: t.group, iterations: t.iterations, tasksPerIteration: t.limit, lr: t.lr, kl: t.kl, temperature: t.temperature, maxGradNorm: t.maxGradNorm,
        heldoutSamples: 1, heldoutTemperature: 0, seed: u.seed, models: deps.resolve(u.condition.id, u.model), startVersions: {}, versionsDir: deps.versionsDir,
        loopId: loopIdOf(studyId, u.key, attempt),
        ...(t.sft && { sft: { warmStart: t.sft.warmStart, mix: t.sft.mix, steps: t.sft.steps, lr: t.sft.lr, minScore: t.sft.minScore, ...(t.sft.roles && { roles: t.sft.roles }) } }),
      }, { ...serviceDeps, trainer }, {
        onEvent: (e) => {
          if (e.type !== 'iteration') return;
          tokens += store.getExperimentCalls(e.metrics.experimentId).reduce((n, c) => n + c.promptTokens + c.completionTokens, 0);
          emit({ type: 'unit', unit: u.key, phase: 'iteration', iteration: e.metrics.iteration, iterations: t.iterations });
          stopped ??= overBudget();
          if (stopped || opts.signal?.aborted) loop.cancel();
        },
      });
      const onAbort = () => loop.cancel();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      const report = await loop.done.catch((err: unknown) => {
        throw inContext(`train loop ${u.key}`, err);
      }).finally(() => opts.signal?.removeEventListener('abort', onAbort));
      if (report.cancelled) return false;
      const versions = Object.fromEntries(report.roles.map((role) => [role, report.versions[role]?.at(-1)]).filter(([, v]) => v !== undefined)) as Record<string, string>;
      const result: UnitResult = { loopId: report.loopId, versions, seconds: (now() - started) / 1000, sampledTokens: report.iterations.reduce((s, m) => s + m.sampledTokens, 0) };
      state = { ...state, units: { ...state.units, [u.key]: result } };
      store.studies.update(studyId, { state: { units: state.units } });
      emit({ type: 'unit', unit: u.key, phase: 'finished', iterations: t.iterations });
      return true;
    };

    const runCell = async (cell: StudyCell, width?: number): Promise<boolean> => {
      const existing = store.findExperiment(cell.experimentId);
      const total = cell.zone.limit;
      if (existing && store.pendingTasks(cell.experimentId).length === 0) {
        emit({ type: 'cell', cell: cell.key, experimentId: cell.experimentId, phase: 'skipped', done: store.listRuns(cell.experimentId).length, total });
        return true;
      }
      const roleVersions = cell.unitKey ? state.units?.[cell.unitKey]?.versions : undefined;
      const c = cell.condition;
      const handle = existing
        ? await startExperiment({ kind: 'resume', experimentId: cell.experimentId, ...(width !== undefined && { parallel: width }) }, serviceDeps)
        : await startExperiment({
            ...(width !== undefined && { parallel: width }),
            kind: 'run', workflow: deps.workflows[c.id]!, dataset: cell.zone.dataset, split: cell.zone.split, limit: cell.zone.limit, offset: cell.zone.offset, seed: cell.seed,
            ...(deps.dataDir !== undefined && { dataDir: deps.dataDir }), models: deps.resolve(c.id, cell.model, roleVersions), source: `study ${studyId}`, experimentId: cell.experimentId,
            ...(roleVersions && { roleVersions }),
            ...(c.cards && { cards: cardsConfigFor({ selection: c.cards, budgetTokens: c.cardBudget ?? 256 }, deps.workflows[c.id]!.graph, store.improve.listCards()).config }),
          }, serviceDeps);
      emit({ type: 'cell', cell: cell.key, experimentId: cell.experimentId, phase: 'started', done: total - store.pendingTasks(cell.experimentId).length, total, resumed: Boolean(existing) });
      const onAbort = () => handle.cancel();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      handle.on((e) => {
        if (e.type !== 'run' || e.status === 'cancelled') return;
        const r = store.getRun(e.runId);
        tokens += r.promptTokens + r.completionTokens;
        emit({ type: 'cell', cell: cell.key, experimentId: cell.experimentId, phase: 'run', done: e.done, total: e.total });
        stopped ??= overBudget();
        if (stopped) handle.cancel();
      });
      const outcome = await handle.done.finally(() => opts.signal?.removeEventListener('abort', onAbort));
      emit({ type: 'cell', cell: cell.key, experimentId: cell.experimentId, phase: 'finished', done: store.listRuns(cell.experimentId).length, total });
      if (outcome.status === 'failed' && !outcome.halted) throw outcome.error ?? new Error(outcome.message ?? `cell ${cell.key} failed`);
      if (outcome.halted) {
        message = outcome.message;
        return false;
      }
      return outcome.status === 'completed';
    };

    // Cells of untrained conditions first, then each unit's train loop followed by its cells;
    // with `parallel`, the cells ready between two train loops run at once (runOrdered, cell order).
    let next = 0;
    while (next < cells.length) {
      stopped ??= overBudget();
      if (stopped || opts.signal?.aborted) break;
      const cell = cells[next]!;
      if (cell.unitKey && !state.units?.[cell.unitKey]) {
        const unit = units.find((u) => u.key === cell.unitKey)!;
        if (!(await trainUnit(unit))) break;
        stopped ??= overBudget();
        if (stopped || opts.signal?.aborted) break;
      }
      let end = next + 1;
      if (opts.parallel !== undefined) while (end < cells.length && (!cells[end]!.unitKey || state.units?.[cells[end]!.unitKey!])) end++;
      const ready = cells.slice(next, end);
      next = end;
      if (ready.length === 1 || opts.parallel === undefined) {
        if (!(await runCell(ready[0]!, opts.parallel))) break;
        continue;
      }
      const atOnce = Math.min(ready.length, opts.parallel);
      const lane = new Scheduler({ capacity: atOnce }).lane(`study ${studyId}`, atOnce);
      const out = await runOrdered({ items: ready, lane, window: ready.length, run: (c) => runCell(c, opts.parallel), commit: (ok) => ok });
      if (out.stopped) break;
    }
    if (stopped) {
      status = 'stopped';
      message = stopped;
      emit({ type: 'budget', message: stopped });
    } else if (opts.signal?.aborted) status = 'cancelled';
    else if (message) status = 'stopped';
    else if (cells.some((c) => pendingRuns(store, c) > 0)) status = 'stopped';
  } catch (err) {
    status = 'failed';
    message = errorMessage(err);
    const out = finish();
    throw Object.assign(err instanceof Error ? err : new Error(message), { studyOutcome: out });
  }
  return finish();
}

/**
 * `err` with where it happened: a Flowlab error (which says what and where itself) as it is;
 * anything else (a runtime's own error, e.g. WebAssembly's "memory access out of bounds") as an
 * Error whose message starts with `what` and whose `cause` is the original.
 */
export function inContext(what: string, err: unknown): unknown {
  if (err instanceof FlowlabError) return err;
  return new Error(`${what}: ${errorMessage(err)}`, { cause: err });
}

/** The estimate a dry run stores (whole study, before anything ran). */
export function estimateRecord(e: StudyEstimate, at = Date.now()): NonNullable<StudyState['estimate']> {
  return { seconds: e.total.seconds, tokens: e.total.tokens, calls: e.total.calls, runs: e.total.runs, at };
}
