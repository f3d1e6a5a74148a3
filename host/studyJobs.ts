/**
 * The lab's study jobs: `startStudy` (core/api/studyJobs.ts) mapped onto the service `flowlab
 * study` runs (core/studies `runStudy`, and `calibrateStudy` + `estimateStudy` for a dry run;
 * cli/commands/study.ts), the plan resolved by the same code (host/studyPlan.ts) with the CLI's
 * defaults for every option a request leaves out, run in the background with its progress pushed
 * as `StudyJobEvent`s and a cancel that stops at the next step (what is stored stays; the same
 * request resumes). Model files are checked and claimed through the runner (host/runner.ts),
 * which confines them as it does for runs; on a confining host the plan's workflows must lie in
 * the examples or workflows folders.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ApiError, type LabEvent, type StartStudyRequest, type StudyJobEstimate, type StudyJobStatus, type StudyPlanFile } from '../core/api/index.ts';
import type { ModelPort } from '../core/model/index.ts';
import { openStore, type Store } from '../core/store/index.ts';
import {
  calibrateStudy, estimateRecord, estimateStudy, pendingRuns, runStudy, studyCells, studyReportHtml, studyTableCsv, studyTimingCsv, trainingUnits, StudyError, type StudyEvent, type StudyState,
} from '../core/studies/index.ts';
import type { Dataset } from '../core/tasks/index.ts';
import type { ToolRegistry } from '../core/tools/index.ts';
import type { Trainer } from '../core/training/index.ts';
import { SpecError } from '../core/workflow/index.ts';
import { errorText, jobEmitter, JobOwner, MAX_EVENT_TEXT, RunningJobs } from './jobs.ts';
import { resolveStudyPlan, studyDepsOf, type LoadedStudyPlan } from './studyPlan.ts';
import { besideDatabase } from './dataFolder.ts';

/** `flowlab study`'s defaults (cli/commands/study.ts) for the fields a request leaves out. */
export const STUDY_JOB_DEFAULTS = { dryRun: false, calibrationTasks: 6 } as const;
/** The file name a pasted plan carries in messages; it resolves its relative paths in the plans folder. */
export const PASTED_PLAN_NAME = 'pasted-plan.yaml';

/** What the jobs need from the runner and the host. */
export interface StudyJobsOptions {
  store: Store;
  emit: (event: LabEvent) => void;
  models: ModelPort;
  datasets: (name: string, dataDir?: string) => Dataset;
  tools: ToolRegistry;
  loadTrainer: () => Promise<Trainer>;
  versionsDir: string;
  /** The shipped plans' folder (`examples/studies/`). */
  plansDir: string;
  dataDir?: string;
  /** Folders a plan's workflow files must lie in (undefined: any file). */
  workflowRoots?: readonly string[];
  /** Refuses a model file the host may not read (FORBIDDEN) or that is not a valid GGUF (BAD_REQUEST), naming `field`. */
  checkModel: (file: string, method: string, field: string) => Promise<void>;
  /** The host's rule for a model reference (a file or an endpoint; host/modelPaths.ts `checkModel`), reading nothing. Default: none. */
  confine?: (ref: string, method: string, field: string) => void;
  /** Claims model files for a job (BUSY when taken) and releases them. */
  claim: (files: string[], method: string, holder: string) => void;
  release: (files: string[]) => void;
  /** The lab's list of running jobs, where studies are listed and announced as `study` jobs (default: one of its own over `emit`). */
  running?: RunningJobs;
}

const M = 'startStudy';

/**
 * The plan text and the file it is read as: a shipped plan by name (NOT_FOUND when `plansDir`
 * has no such file) or the pasted text, anchored in `plansDir` as `PASTED_PLAN_NAME`.
 */
export function studyPlanSource(req: Pick<StartStudyRequest, 'planName' | 'planText'>, plansDir: string): { text: string; file: string; field: 'planName' | 'planText' } {
  if (req.planText !== undefined) return { text: req.planText, file: path.join(plansDir, PASTED_PLAN_NAME), field: 'planText' };
  const name = req.planName ?? '';
  if (!/\.ya?ml$/.test(name) || path.basename(name) !== name) throw new ApiError('BAD_REQUEST', `${M}: planName must be a plan file name, got "${name}"`, M, 'planName');
  const file = path.join(plansDir, name);
  try {
    return { text: readFileSync(file, 'utf8'), file, field: 'planName' };
  } catch {
    throw new ApiError('NOT_FOUND', `${M}: no shipped plan "${name}" (see listStudyPlans)`, M, 'planName');
  }
}

/**
 * The shipped plans in `plansDir` (`*.yaml` / `*.yml` whose document is a study plan: a mapping
 * with a `conditions` list), by name; an absent folder lists none. The folder also holds the
 * workflows the plans name (single-agent.yaml...): they are not plans (they were listed as ones,
 * and a dry run of one failed on `baseline`).
 */
export function listStudyPlans(plansDir: string): StudyPlanFile[] {
  let names: string[];
  try {
    names = readdirSync(plansDir).filter((n) => /\.ya?ml$/.test(n)).sort();
  } catch {
    return [];
  }
  return names.map((name) => ({ name, text: readFileSync(path.join(plansDir, name), 'utf8') })).filter((p) => isStudyPlanText(p.text));
}

/** Whether a YAML text reads as a study plan (a mapping with a `conditions` list) rather than a workflow or anything else. */
export function isStudyPlanText(text: string): boolean {
  try {
    const doc: unknown = parseYaml(text);
    return typeof doc === 'object' && doc !== null && Array.isArray((doc as { conditions?: unknown }).conditions);
  } catch {
    return false;
  }
}

/**
 * Whether a study event completes a cell: finished (or skipped as stored) with every run stored.
 * A cell a budget stopped also ends with `finished`, with fewer runs; counting it made the job's
 * "4 / 15 cells" disagree with the study's summary "3/15" (studyHandlers counts done >= total).
 */
export function cellCompleted(e: StudyEvent): boolean {
  return e.type === 'cell' && (e.phase === 'finished' || e.phase === 'skipped') && e.done >= e.total;
}

/** One progress line of a study event as `flowlab study` prints it (a cell's runs counted `done/total`; one line per stored run too). */
export function studyEventLine(e: StudyEvent): string {
  switch (e.type) {
    case 'note': return e.message;
    case 'budget': return `Budget: ${e.message}; start the same plan again to resume.`;
    case 'unit': return e.phase === 'iteration' ? `train ${e.unit}: iteration ${e.iteration}/${e.iterations}` : `train ${e.unit}: ${e.phase}${e.phase === 'started' ? ` (${e.iterations} iterations)` : ''}`;
    case 'cell': return e.phase === 'run' ? `cell ${e.cell}: run ${e.done}/${e.total}` : `cell ${e.cell}: ${e.phase}${e.resumed ? ' (resumed)' : ''} ${e.done}/${e.total} (${e.experimentId})`;
  }
}

/** The study jobs running in one lab, by study id (see the module comment); `cancel` stops one at its next step (JobOwner). */
export class StudyJobs extends JobOwner {
  constructor(private readonly o: StudyJobsOptions) {
    super(o.running ?? new RunningJobs(o.emit));
  }

  /** The shipped plans. */
  plans(): StudyPlanFile[] {
    return listStudyPlans(this.o.plansDir);
  }

  /**
   * Resolves the request's plan as `flowlab study` would (`--model`, `--threads` applied).
   * Errors (ApiError, method `startStudy`): BAD_REQUEST naming `planText` / `planName` (a bad
   * plan, located; a workflow that does not validate), NOT_FOUND (no such shipped plan),
   * FORBIDDEN (a workflow outside the lab's folders).
   */
  resolve(req: StartStudyRequest): LoadedStudyPlan & { file: string; field: 'planName' | 'planText' } {
    const src = studyPlanSource(req, this.o.plansDir);
    const roots = this.o.workflowRoots?.map((r) => path.resolve(r) + path.sep);
    try {
      const loaded = resolveStudyPlan(src.text, src.file, {
        tools: this.o.tools, ...(req.model !== undefined && { model: req.model }), ...(req.threads !== undefined && { threads: req.threads }), ...(this.o.dataDir !== undefined && { dataDir: this.o.dataDir }),
        checkWorkflow: (file, at) => {
          if (roots && !roots.some((r) => file.startsWith(r))) throw new ApiError('FORBIDDEN', `${M}: ${at}: ${file} is outside the lab's examples and workflows folders`, M, src.field);
        },
      });
      return { ...loaded, file: src.file, field: src.field };
    } catch (err) {
      if (err instanceof ApiError) throw err;
      if (err instanceof StudyError || err instanceof SpecError) throw new ApiError('BAD_REQUEST', `${M}: ${err.message}`, M, src.field, { cause: err });
      throw err;
    }
  }

  /** Starts the study or its dry run in the background (see `resolve` for the errors; BUSY when the study or a model file is in use). */
  async start(req: StartStudyRequest): Promise<{ studyId: string }> {
    const loaded = this.resolve(req);
    const { plan, studyId } = loaded;
    const dryRun = req.dryRun ?? STUDY_JOB_DEFAULTS.dryRun;
    const refuseRunning = () => {
      if (this.jobs.has(studyId)) throw new ApiError('BUSY', `${M}: study ${studyId} is running here`, M, loaded.field);
    };
    refuseRunning();
    const files = [...new Set(plan.models.map((m) => m.model))];
    for (const f of files) await this.o.checkModel(f, M, req.model !== undefined ? 'model' : loaded.field);
    // A workflow's own `models.<ref>.path` beats the plan's model for its roles (models/resolve.ts), so it meets the same rule.
    for (const wf of Object.values(loaded.workflows)) for (const m of wf.graph.models.values()) if (m.path) this.o.confine?.(m.path, M, loaded.field);
    refuseRunning(); // the same study started meanwhile
    this.o.claim(files, M, `study ${studyId}`);
    const send = jobEmitter<LabEvent>(this.o.emit);
    const progress = (line: string, done?: number, total?: number) => {
      send({ type: 'studyProgress', studyId, line: line.slice(0, MAX_EVENT_TEXT), ...(done !== undefined && { done }), ...(total !== undefined && { total }) });
      this.jobs.report(studyId)?.progress({ summary: line, ...(done !== undefined && { done }), ...(total !== undefined && { total }) });
    };
    const close = (status: StudyJobStatus, extra: { message?: string; estimate?: StudyJobEstimate } = {}) => {
      // A study a budget stopped ends early and resumes like a cancelled one: the one job event says `cancelled`, with the reason.
      this.jobs.report(studyId)?.close(status === 'stopped' || status === 'running' ? 'cancelled' : status, extra.message);
      send({ type: 'studyJob', studyId, dryRun, status, ...extra });
    };
    send({ type: 'studyJob', studyId, dryRun, status: 'running' });
    for (const n of loaded.notes) progress(`Note: ${n}`);
    this.jobs.start(studyId, undefined, (signal) => (dryRun ? this.dryRun(loaded, req, signal, progress) : this.run(loaded, req, signal, progress)).then(
      (r) => close(r.status, r),
      (err: unknown) => close(signal.aborted ? 'cancelled' : 'failed', signal.aborted ? {} : { message: errorText(err) }),
    ), () => this.o.release(files), { kind: 'study' });
    return { studyId };
  }

  private rowOf(loaded: LoadedStudyPlan & { file: string }) {
    const { store } = this.o;
    return store.studies.find(loaded.studyId) ?? store.studies.create({ id: loaded.studyId, name: loaded.plan.name, plan: loaded.plan, planFile: loaded.file, state: { skippedZones: [...loaded.skipZones] } });
  }

  private deps(loaded: LoadedStudyPlan) {
    const o = this.o;
    return studyDepsOf(o.store, loaded, { models: o.models, datasets: o.datasets, tools: o.tools, loadTrainer: o.loadTrainer, versionsDir: o.versionsDir, ...(o.dataDir !== undefined && { dataDir: o.dataDir }) });
  }

  /** `flowlab study --dry-run`: calibration on a scratch store, the estimate recorded as the CLI records it. */
  private async dryRun(loaded: LoadedStudyPlan & { file: string }, req: StartStudyRequest, signal: AbortSignal, progress: (line: string) => void): Promise<{ status: StudyJobStatus; estimate: StudyJobEstimate }> {
    const { store } = this.o;
    const { plan, studyId } = loaded;
    const state = this.rowOf(loaded).state as StudyState;
    const cells = studyCells(plan, studyId, loaded.skipZones);
    const units = trainingUnits(plan);
    const scratchDir = mkdtempSync(path.join(os.tmpdir(), 'flowlab-study-'));
    const scratch = openStore(path.join(scratchDir, 'calibration.db'));
    let speeds;
    try {
      speeds = await calibrateStudy(plan, { ...this.deps(loaded), scratch, scratchVersionsDir: path.join(scratchDir, 'versions') }, { tasks: req.calibrationTasks ?? STUDY_JOB_DEFAULTS.calibrationTasks, skipZones: loaded.skipZones, onNote: (m) => progress(m) });
    } finally {
      scratch.close();
      rmSync(scratchDir, { recursive: true, force: true });
    }
    if (signal.aborted) throw new Error('cancelled');
    const estimate = estimateStudy(cells, units, speeds, { pendingRuns: (c) => pendingRuns(store, c), unitDone: (u) => Boolean(state.units?.[u.key]) });
    const nothingRan = cells.every((c) => !store.findExperiment(c.experimentId)) && !state.units;
    store.studies.update(studyId, { state: { speeds, ...(nothingRan && { estimate: estimateRecord(estimate) }) } });
    const T = estimate.total;
    progress(`Dry run: ${T.cells} cells and ${T.units} train loops left, ${T.runs} runs, ${Math.round(T.calls)} model calls, ${Math.round(T.tokens)} tokens, estimated ${Math.round(T.seconds)} s.`);
    return { status: 'completed', estimate: { cells: T.cells, units: T.units, runs: T.runs, calls: T.calls, tokens: T.tokens, seconds: T.seconds } };
  }

  /** `flowlab study`: the cells and train loops run, the CSV and HTML written to `flowlab-studies/<study id>/` beside the database. */
  private async run(loaded: LoadedStudyPlan & { file: string }, req: StartStudyRequest, signal: AbortSignal, progress: (line: string, done?: number, total?: number) => void): Promise<{ status: StudyJobStatus; message?: string }> {
    const { store } = this.o;
    const { plan, studyId } = loaded;
    this.rowOf(loaded);
    const cells = studyCells(plan, studyId, loaded.skipZones);
    // done/total of every progress event: the cells finished (or skipped as already complete) of the study's cells.
    let cellsDone = 0;
    const units = trainingUnits(plan).length;
    progress(`Study ${studyId}: ${cells.length} cell${cells.length === 1 ? '' : 's'}, ${units} train loop${units === 1 ? '' : 's'}`, 0, cells.length);
    const outcome = await runStudy(plan, studyId, this.deps(loaded), {
      ...(req.budgetTokens !== undefined && { budgetTokens: req.budgetTokens }), ...(req.budgetMinutes !== undefined && { budgetMinutes: req.budgetMinutes }), signal,
      onEvent: (e) => {
        if (cellCompleted(e)) cellsDone++;
        progress(studyEventLine(e), cellsDone, cells.length);
      },
    });
    const outDir = besideDatabase(store.file, ['flowlab-studies', studyId]);
    mkdirSync(outDir, { recursive: true });
    writeFileSync(path.join(outDir, 'table.csv'), studyTableCsv(outcome.table));
    writeFileSync(path.join(outDir, 'timing.csv'), studyTimingCsv(outcome.table));
    writeFileSync(path.join(outDir, 'report.html'), studyReportHtml(outcome.table, [`Wall time: ${Math.round(outcome.wallSeconds)} s this run.`]));
    progress(`Status: ${outcome.status}. CSV and HTML: ${outDir}`);
    return { status: outcome.status, ...(outcome.message && { message: outcome.message }) };
  }
}
