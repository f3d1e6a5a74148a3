/**
 * The lab's MASS jobs: `startEvolve`, `startRank`, `startRsi` (core/api/massJobs.ts) mapped onto
 * the services `flowlab evolve`, `flowlab rank` and `flowlab rsi` run (core/mass `evolve`,
 * `startRank`, `startRsi`), with the CLI's defaults for every field a request leaves out
 * (cli/commands/evolve.ts, rank.ts, rsi.ts; `cli/massJobs.test.ts` checks they agree), run in
 * the background with their progress pushed as `MassJobEvent`s and a cancel that stops at the
 * next step (what is stored stays; the same request resumes). The runner (host/runner.ts)
 * owns the model-file claims (one job or experiment per model file) and the checks of a file.
 */
import path from 'node:path';
import { ApiError, type LabEvent, type MassJobKind, type StartEvolveRequest, type StartRankRequest, type StartRsiRequest } from '../core/api/index.ts';
import { errorMessage } from '../core/errors.ts';
import {
  championOf, DEFAULT_THRESHOLDS, evolve, evolveEventLine, formatHeldout, heldoutOfEvolution, MassError, modelMismatch, EVOLVE_DEFAULTS, massFamily, OUTER_DEFAULTS, planEvolution, recordOuterSettings, startRank, startRsi, tasksOf,
  type EvolutionOptions, type EvolutionPlan, type OuterSettings, type RsiEvent,
} from '../core/mass/index.ts';
import type { ModelConfig, ModelProvider } from '../core/model/index.ts';
import { defaultParallel } from '../core/schedule/index.ts';
import { storedModels, type Store } from '../core/store/index.ts';
import type { ToolRegistry } from '../core/tools/index.ts';
import type { Trainer } from '../core/training/index.ts';
import { finishEvolutionRecord, recordEvolution } from '../core/repro/index.ts';
import { reproEnvironment } from '../models/environment.ts';
import { verifyModelFiles, withFingerprints } from '../models/resolve.ts';
import { errorText, jobEmitter, JobOwner, MAX_EVENT_TEXT, RunningJobs } from './jobs.ts';
import { apiErrorOf } from './request.ts';
import { besideDatabase } from './dataFolder.ts';

/** `flowlab rank` / `flowlab rsi`'s defaults (their usage text, cli/commands/rsi.ts) for the fields a request leaves out. */
export const OUTER_JOB_DEFAULTS = {
  tasks: 4, ...OUTER_DEFAULTS, btIterations: OUTER_DEFAULTS.iterations, topK: OUTER_DEFAULTS.train, temperature: 1, tamperShare: 0.5,
  maxQuarantined: DEFAULT_THRESHOLDS.maxQuarantinedShare, minAgreement: DEFAULT_THRESHOLDS.minAgreement, seed: 0, threads: 1, contextSize: 1024,
  cycles: 2, heldout: 48, heldoutSamples: 1, heldoutTemperature: 0, sftPasses: 4, sftLr: 1e-3, sftBatch: 32,
} as const;
/** `flowlab evolve`'s defaults (cli/commands/evolve.ts). */
/** Threads are left to the provider (1 for a small file), as the CLI leaves them. */
export const EVOLVE_JOB_DEFAULTS = { split: 'train', limit: 1, offset: 0, iterations: EVOLVE_DEFAULTS.iterations, rule: 'baseline' as 'baseline' | 'direct', seed: 1, contextSize: 2048 };

/** What the jobs need from the runner. */
export interface MassJobsOptions {
  store: Store;
  emit: (event: LabEvent) => void;
  tools: ToolRegistry;
  createProvider: (config: ModelConfig) => Promise<ModelProvider>;
  loadTrainer: () => Promise<Trainer>;
  /** Refuses a model file the host may not read (FORBIDDEN) or that is not a valid GGUF (BAD_REQUEST), naming `field`. */
  checkModel: (file: string, method: string, field: string) => Promise<void>;
  /** Claims model files for a job (BUSY when taken) and releases them. */
  claim: (files: string[], method: string, holder: string) => void;
  release: (files: string[]) => void;
  /** The lab's list of running jobs, where MASS jobs are listed and announced as `evolve` / `rank` / `rsi` jobs (default: one of its own over `emit`). */
  running?: RunningJobs;
}

const stamp = () => new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);

/**
 * The stored settings `flowlab rank` / `flowlab rsi` would build from the same options
 * (cli/commands/rsi.ts `rsiOptionsOf` + `settingsOf`): out folder `flowlab-mass/<loop id>` beside
 * the database (the system's temporary folder for `:memory:`). Errors: ApiError BAD_REQUEST
 * naming `dataset` (no MASS family).
 */
export function outerSettingsOfRequest(command: 'rank' | 'rsi', req: StartRsiRequest, dbFile: string, method: string): OuterSettings & { cycles: number } {
  const d = OUTER_JOB_DEFAULTS;
  try {
    massFamily(req.dataset);
  } catch (err) {
    throw new ApiError('BAD_REQUEST', `${method}: ${errorMessage(err)}`, method, 'dataset', { cause: err });
  }
  const loopId = req.loopId ?? `${command}-${stamp()}`;
  const dbDir = besideDatabase(dbFile);
  return {
    command, dataset: req.dataset, tasks: req.tasks ?? d.tasks, ...(command === 'rsi' && { heldout: req.heldout ?? d.heldout }), ...(req.champions && { champions: req.champions }),
    cycles: command === 'rsi' ? req.cycles ?? d.cycles : 1,
    options: {
      loopId, outDir: path.join(dbDir, 'flowlab-mass', loopId), baseModel: path.resolve(req.model), design: null,
      outer: {
        runs: req.runs ?? d.runs, neighbours: req.neighbours ?? d.neighbours, seed: req.seed ?? d.seed, iterations: req.btIterations ?? d.btIterations,
        train: req.topK ?? d.topK, validation: req.validation ?? d.validation, verifierMin: req.verifierMin ?? d.verifierMin,
        sampling: { temperature: req.temperature ?? d.temperature, topK: 0, topP: 1, minP: 0 },
      },
      ...(req.simulateTamperer && { tamperer: { mode: req.simulateTamperer, share: req.tamperShare ?? d.tamperShare } }),
      thresholds: { maxQuarantinedShare: req.maxQuarantined ?? d.maxQuarantined, minAgreement: req.minAgreement ?? d.minAgreement },
      sft: { passes: req.sftPasses ?? d.sftPasses, lr: req.sftLr ?? d.sftLr, batch: req.sftBatch ?? d.sftBatch },
      heldoutSampling: { temperature: req.heldoutTemperature ?? d.heldoutTemperature, topK: 0, topP: 1, minP: 0 },
      heldoutSamples: req.heldoutSamples ?? d.heldoutSamples,
      ...(req.arms && { arms: [...new Set(req.arms)] }),
    },
  };
}

/** The MASS jobs running in one lab (see the module comment); `cancel` stops one at its next step (JobOwner). */
export class MassJobs extends JobOwner {
  constructor(private readonly o: MassJobsOptions) {
    super(o.running ?? new RunningJobs(o.emit));
  }

  /**
   * Starts `flowlab evolve` in the background. Errors (ApiError, method `startEvolve`):
   * BAD_REQUEST (no MASS family, a split the dataset lacks, an offset past it, a bad model file,
   * changed model files under an existing id), FORBIDDEN (a model outside the lab's folders),
   * BUSY (the model or the id in use).
   */
  async startEvolve(req: StartEvolveRequest): Promise<{ jobId: string }> {
    const M = 'startEvolve';
    const d = EVOLVE_JOB_DEFAULTS;
    const options: EvolutionOptions = {
      dataset: req.dataset, model: req.model, split: req.split ?? d.split, limit: req.limit ?? d.limit, offset: req.offset ?? d.offset, iterations: req.iterations ?? d.iterations,
      rule: req.rule ?? d.rule, seed: req.seed ?? d.seed, judge: req.judge ?? 'self', proposer: req.proposer ?? 'model', heldoutSplit: req.heldoutSplit ?? 'heldout',
      ...(req.id !== undefined && { id: req.id }), ...(req.optimizer !== undefined && { optimizer: req.optimizer }), ...(req.selectTasks !== undefined && { selectTasks: req.selectTasks }),
      ...(req.auditSwaps !== undefined && { auditSwaps: req.auditSwaps }), ...(req.heldout !== undefined && { heldout: req.heldout }),
    };
    // The plan `flowlab evolve` makes (core/mass/evolveJob.ts): the same tasks, selection set, first design, id and spec.
    let plan: EvolutionPlan;
    try {
      plan = planEvolution(options, this.o.store);
    } catch (err) {
      // The family's own first design not validating is ours (INTERNAL); a bad option names its field; anything else is the dataset's.
      const code = err instanceof MassError ? err.code : undefined;
      if (code === 'INVALID_DESIGN') throw new ApiError('INTERNAL', `${M}: ${errorMessage(err)}`, M, undefined, { cause: err });
      const field = code === 'BAD_OPTIONS' ? ((err as MassError).location.field ?? 'dataset') : 'dataset';
      throw new ApiError('BAD_REQUEST', `${M}: ${errorMessage(err)}`, M, field, { cause: err });
    }
    if (!plan.tasks.length) throw new ApiError('BAD_REQUEST', `${M}: no task of ${req.dataset}/${options.split} at offset ${options.offset}`, M, 'offset');
    const jobId = plan.evolutionId;
    const cfg = withFingerprints({ models: { default: path.resolve(req.model) }, roleModels: {}, gpu: false, contextSize: req.contextSize ?? d.contextSize, ...(req.threads !== undefined && { threads: req.threads }) });
    const step = this.o.store.listExperiments().find((x) => x.id.startsWith(`${jobId}.`));
    const recorded = step && storedModels(step);
    const other = recorded && modelMismatch(jobId, recorded, cfg);
    if (other) throw new ApiError('BAD_REQUEST', `${M}: ${other}`, M, 'model');
    try {
      if (recorded) verifyModelFiles(recorded, cfg);
    } catch (err) {
      throw new ApiError('BAD_REQUEST', `${M}: ${errorMessage(err)}`, M, 'model', { cause: err });
    }
    return this.launch('evolve', jobId, req.model, M, async (signal, emit) => {
      const provider = await this.o.createProvider(cfg);
      try {
        await provider.load?.();
        const total = plan.tasks.length * options.iterations;
        let done = 0;
        // As `flowlab evolve`: the evolution gets its reproducibility record (core/repro/evolution.ts).
        recordEvolution(this.o.store, jobId, { tasks: plan.tasks, firstDesign: plan.firstDesign, settings: plan.settings, seed: options.seed, models: cfg, environment: reproEnvironment() });
        const deps = { store: this.o.store, provider, tools: this.o.tools, signal, config: { models: cfg } };
        await evolve(plan.spec, { ...deps, parallel: req.parallel ?? defaultParallel(cfg).parallel, onEvent: (e) => {
          if (e.type === 'workspace' || e.type === 'rejected') done = Math.min(total, done + (e.type === 'workspace' && e.version === null ? 0 : 1));
          emit(evolveEventLine(e), done, total);
        } });
        if (!signal.aborted && options.heldout) {
          const held = await heldoutOfEvolution(plan, options, this.o.store.mass.list(jobId), { ...deps, family: plan.family }, (line) => emit(line.trimEnd(), done, total));
          for (const h of held) emit(`task ${h.taskIndex}: ${formatHeldout(h.comparison).trimEnd()}`, done, total);
        }
        if (!signal.aborted) finishEvolutionRecord(this.o.store, jobId);
      } finally {
        await provider.dispose().catch(() => {});
      }
    });
  }

  /** Starts `flowlab rank` in the background. Errors as `startEvolve`'s (method `startRank`), and MISMATCH-as-BAD_REQUEST for other settings under an existing loop id. */
  async startRank(req: StartRankRequest): Promise<{ jobId: string }> {
    const M = 'startRank';
    const s = outerSettingsOfRequest('rank', req, this.o.store.file, M);
    this.checkSettings(s, M);
    return this.launch('rank', s.options.loopId, req.model, M, async (signal, emit) => {
      const provider = await this.providerOf(s.options.baseModel, req);
      try {
        const { cycles: _c, ...settings } = s;
        await startRank({ store: this.o.store, provider, signal, ...(req.parallel !== undefined && { parallel: req.parallel }), onEvent: (e) => emit(`${e.taskId}: ${e.type}s ${e.done}/${e.total}`, e.done, e.total) }, settings);
      } finally {
        await provider.dispose().catch(() => {});
      }
    });
  }

  /** Starts `flowlab rsi` in the background. Errors as `startRank`'s (method `startRsi`), and UNAVAILABLE when the trainer cannot load. */
  async startRsi(req: StartRsiRequest): Promise<{ jobId: string }> {
    const M = 'startRsi';
    const s = outerSettingsOfRequest('rsi', req, this.o.store.file, M);
    this.checkSettings(s, M);
    let trainer: Trainer;
    try {
      trainer = await this.o.loadTrainer();
    } catch (err) {
      throw new ApiError('UNAVAILABLE', `${M}: the trainer cannot load: ${errorMessage(err)}`, M, undefined, { cause: err });
    }
    return this.launch('rsi', s.options.loopId, req.model, M, async (signal, emit) => {
      const { cycles, ...settings } = s;
      const line = (e: RsiEvent) => (e.type === 'stage' ? `cycle ${e.cycle} [${e.arm}] ${e.stage}` : `cycle ${e.cycle} [${e.arm}] ${e.what} ${e.done}/${e.total}`);
      await startRsi({
        store: this.o.store, trainer, signal, makeProvider: (file) => this.providerOf(file, req), ...(req.parallel !== undefined && { parallel: req.parallel }),
        onEvent: (e) => emit(line(e), e.type === 'progress' ? e.done : undefined, e.type === 'progress' ? e.total : undefined),
      }, settings, cycles);
    });
  }

  /** Refuses, before anything loads, a champion source that lacks a task and other settings under a stored loop id (BAD_REQUEST naming the field); records the settings. */
  private checkSettings(s: OuterSettings & { cycles: number }, method: string): void {
    const { cycles: _c, ...settings } = s;
    try {
      const { train } = tasksOf(settings);
      if (settings.champions) train.forEach((t, i) => championOf(this.o.store, settings.champions!, i, t));
      recordOuterSettings(this.o.store, settings);
    } catch (err) {
      const e = apiErrorOf(err, method);
      if (e instanceof ApiError) throw e;
      const field = (err as { location?: { field?: string } }).location?.field;
      throw new ApiError('BAD_REQUEST', `${method}: ${errorMessage(err)}`, method, field === 'champions' ? 'champions' : field?.startsWith('options.') ? field.slice(8) : field ?? 'loopId', { cause: err });
    }
  }

  private async providerOf(file: string, req: StartRankRequest): Promise<ModelProvider> {
    const p = await this.o.createProvider({ models: { default: file }, roleModels: {}, threads: req.threads ?? OUTER_JOB_DEFAULTS.threads, contextSize: req.contextSize ?? OUTER_JOB_DEFAULTS.contextSize, gpu: false });
    await p.load?.();
    return p;
  }

  private async launch(kind: MassJobKind, jobId: string, model: string, method: string, body: (signal: AbortSignal, emit: (line: string, done?: number, total?: number) => void) => Promise<void>): Promise<{ jobId: string }> {
    const refuseRunning = () => {
      if (this.jobs.has(jobId)) throw new ApiError('BUSY', `${method}: ${jobId} is running here`, method, kind === 'evolve' ? 'id' : 'loopId');
    };
    refuseRunning();
    const file = path.resolve(model);
    await this.o.checkModel(file, method, 'model');
    refuseRunning(); // the same id started meanwhile
    this.o.claim([file], method, `MASS ${kind} ${jobId}`);
    const send = jobEmitter<LabEvent>(this.o.emit);
    const emit = (line: string, done?: number, total?: number) => {
      send({ type: 'massProgress', jobId, job: kind, line: line.slice(0, MAX_EVENT_TEXT), ...(done !== undefined && { done }), ...(total !== undefined && { total }) });
      this.jobs.report(jobId)?.progress({ summary: line, ...(done !== undefined && { done }), ...(total !== undefined && { total }) });
    };
    send({ type: 'massJob', jobId, job: kind, status: 'running' });
    this.jobs.start(jobId, undefined, (signal, job) => body(signal, emit).then(
      () => {
        job.close('completed');
        send({ type: 'massJob', jobId, job: kind, status: 'completed' });
      },
      (err: unknown) => {
        const cancelled = signal.aborted;
        const message = cancelled ? undefined : errorText(apiErrorOf(err, method));
        job.close(cancelled ? 'cancelled' : 'failed', message);
        send({ type: 'massJob', jobId, job: kind, status: cancelled ? 'cancelled' : 'failed', ...(message !== undefined && { message }) });
      },
    ), () => this.o.release([file]), { kind });
    return { jobId };
  }
}
