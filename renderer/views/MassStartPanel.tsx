import { useEffect, useState } from 'react';
import type { MassJobKind } from '../../core/api/client.ts';
import type { MassJob, MassJobStart } from '../store/mass.ts';
import { useLabPick } from '../useLab.ts';
import { preferredModel } from '../lib/modelChoice.ts';

/** The MASS task families the start form offers: core/mass/family.ts `massFamilyNames()` (massStartPanel.test.tsx checks they agree). */
export const MASS_DATASETS = ['learn-tool', 'learn-word', 'learn-design', 'learn-unit'] as const;

/** The form's fields; every number has the CLI's default (docs/mass.md, docs/mass-inner.md). */
export interface MassForm {
  job: MassJobKind;
  dataset: string;
  model: string;
  /** evolve: tasks (`--limit`); rank/rsi: training tasks (`--tasks`). */
  tasks: number;
  /** evolve: `--iterations`. */
  iterations: number;
  /** rank/rsi: `--runs`. */
  runs: number;
  /** rsi: `--cycles`, `--heldout`. */
  cycles: number;
  heldout: number;
  /** rank/rsi: '' (off) or a SIMULATED tamperer mode. */
  tamperer: '' | 'expectation' | 'environment';
  /** The evolution or loop id ('' = the default). */
  id: string;
  /** evolve: `--judge` (verifier: the family's grader, a control). */
  judge: 'self' | 'pair' | 'verifier';
  /** evolve: `--proposer` (random: SIMULATED, uniform over the valid new edits; families with an edit menu). */
  proposer: 'model' | 'random';
  /** evolve: `--select-tasks` (0 = the CLI's default: 4 with an edit menu, else 1). */
  selectTasks: number;
  /** evolve: `--heldout` (0 = no held-out comparison of the champion with version 0). */
  evolveHeldout: number;
}

/** The CLI's default task count per job: `flowlab evolve --limit` 1, `rank` / `rsi --tasks` 4. */
export const MASS_TASKS_DEFAULT: Record<MassJobKind, number> = { evolve: 1, rank: 4, rsi: 4 };

/** The form after choosing job `job`: a task count still at the old job's CLI default becomes the new job's. */
export function withJob<F extends Pick<MassForm, 'job' | 'tasks'>>(f: F, job: MassJobKind): F {
  return { ...f, job, tasks: f.tasks === MASS_TASKS_DEFAULT[f.job] ? MASS_TASKS_DEFAULT[job] : f.tasks };
}

export const MASS_FORM_DEFAULTS: Omit<MassForm, 'model'> = { job: 'evolve', dataset: 'learn-tool', tasks: 1, iterations: 11, runs: 18, cycles: 2, heldout: 48, tamperer: '', id: '', judge: 'self', proposer: 'model', selectTasks: 0, evolveHeldout: 0 };

/** The request the form sends (threads 1: a laptop shared with other work). */
export function massStartOf(f: MassForm): MassJobStart {
  const id = f.id.trim();
  if (f.job === 'evolve') {
    return { job: 'evolve', request: {
      dataset: f.dataset, model: f.model, limit: f.tasks, iterations: f.iterations, threads: 1, ...(id && { id }),
      ...(f.judge !== 'self' && { judge: f.judge }), ...(f.proposer !== 'model' && { proposer: f.proposer }),
      ...(f.selectTasks > 0 && { selectTasks: f.selectTasks }), ...(f.evolveHeldout > 0 && { heldout: f.evolveHeldout }),
    } };
  }
  const outer = { dataset: f.dataset, model: f.model, tasks: f.tasks, runs: f.runs, threads: 1, ...(f.tamperer && { simulateTamperer: f.tamperer }), ...(id && { loopId: id }) };
  return f.job === 'rank' ? { job: 'rank', request: outer } : { job: 'rsi', request: { ...outer, cycles: f.cycles, heldout: f.heldout } };
}

const ended = (j: MassJob | null) => !j || j.status === 'completed' || j.status === 'cancelled' || j.status === 'failed';

/**
 * Starts a MASS job from the lab (`startEvolve` / `startRank` / `startRsi`, what `flowlab evolve`
 * / `rank` / `rsi` run), shows its progress as it arrives (status, count, the latest lines) and
 * cancels it. What it stores appears in the panels below when it ends.
 */
export function MassStartPanel() {
  const { models, loadModels, massJob, massJobError, startMassJob, cancelMassJob, experiments } = useLabPick('models', 'loadModels', 'massJob', 'massJobError', 'startMassJob', 'cancelMassJob', 'experiments');
  useEffect(() => {
    if (models.status === 'idle') void loadModels();
  }, [models.status, loadModels]);
  const usable = models.status === 'ready' ? models.data.filter((m) => m.info && !m.error) : [];
  const [form, setForm] = useState<Omit<MassForm, 'model'> & { model: string }>({ ...MASS_FORM_DEFAULTS, model: '' });
  // The model MASS last ran with, else the first without random weights (not simply the first file).
  const model = form.model || preferredModel(usable, experiments.status === 'ready' ? experiments.data : [], (e) => e.kind === 'mass');
  const set = <K extends keyof MassForm>(k: K, v: MassForm[K]) => setForm((f) => ({ ...f, [k]: v }));
  const num = (k: 'tasks' | 'iterations' | 'runs' | 'cycles' | 'heldout' | 'selectTasks' | 'evolveHeldout', label: string, min: number) => (
    <label className="row">
      <span>{label}</span>
      <input type="number" min={min} data-testid={`mass-start-${k}`} value={form[k]} onChange={(e) => set(k, Math.max(min, Math.floor(Number(e.target.value) || min)))} />
    </label>
  );
  const running = !ended(massJob);
  return (
    <section className="mass-start" aria-labelledby="mass-start-title">
      <h3 id="mass-start-title">Start a MASS job</h3>
      <div className="row wrap">
        <label className="row">
          <span>Job</span>
          <select data-testid="mass-start-job" value={form.job} onChange={(e) => setForm((f) => withJob(f, e.target.value as MassJobKind))}>
            <option value="evolve">evolve (inner loop)</option>
            <option value="rank">rank (outer loop, no training)</option>
            <option value="rsi">rsi (whole cycles)</option>
          </select>
        </label>
        <label className="row">
          <span>Dataset</span>
          <select data-testid="mass-start-dataset" value={form.dataset} onChange={(e) => set('dataset', e.target.value)}>
            {MASS_DATASETS.map((d) => <option key={d} value={d}>{d}</option>)}
          </select>
        </label>
        <label className="row">
          <span>Model</span>
          <select data-testid="mass-start-model" value={model} onChange={(e) => set('model', e.target.value)}>
            {usable.map((m) => <option key={m.path} value={m.path}>{m.fileName}</option>)}
          </select>
        </label>
        {num('tasks', 'Tasks', 1)}
        {form.job === 'evolve' && num('iterations', 'Iterations', 1)}
        {form.job === 'evolve' && (
          <label className="row">
            <span>Judge</span>
            <select data-testid="mass-start-judge" value={form.judge} onChange={(e) => set('judge', e.target.value as MassForm['judge'])}>
              <option value="self">self (the same model)</option>
              <option value="pair">pair (the same model, the family's pairwise prompt)</option>
              <option value="verifier">verifier (the grader: a control)</option>
            </select>
          </label>
        )}
        {form.job === 'evolve' && form.dataset === 'learn-design' && (
          <label className="row">
            <span>Proposer</span>
            <select data-testid="mass-start-proposer" value={form.proposer} onChange={(e) => set('proposer', e.target.value as MassForm['proposer'])}>
              <option value="model">the model</option>
              <option value="random">random (SIMULATED baseline)</option>
            </select>
          </label>
        )}
        {form.job === 'evolve' && num('selectTasks', 'Selection tasks (0: default)', 0)}
        {form.job === 'evolve' && num('evolveHeldout', 'Held-out tasks (0: none)', 0)}
        {form.job !== 'evolve' && num('runs', 'Runs per task', 2)}
        {form.job === 'rsi' && num('cycles', 'Cycles', 1)}
        {form.job === 'rsi' && num('heldout', 'Held-out tasks', 1)}
        {form.job !== 'evolve' && (
          <label className="row">
            <span>SIMULATED tamperer</span>
            <select data-testid="mass-start-tamperer" value={form.tamperer} onChange={(e) => set('tamperer', e.target.value as MassForm['tamperer'])}>
              <option value="">off</option>
              <option value="expectation">expectation</option>
              <option value="environment">environment</option>
            </select>
          </label>
        )}
        <label className="row">
          <span>{form.job === 'evolve' ? 'Evolution id' : 'Loop id'}</span>
          <input type="text" data-testid="mass-start-id" placeholder="default" value={form.id} onChange={(e) => set('id', e.target.value)} />
        </label>
      </div>
      <div className="row">
        <button type="button" className="primary" data-testid="mass-start" disabled={!model || running} onClick={() => void startMassJob(massStartOf({ ...form, model }))}>
          Start
        </button>
        <button type="button" data-testid="mass-cancel" disabled={!running} onClick={() => void cancelMassJob()}>
          Cancel
        </button>
        {!model && models.status === 'ready' && <span className="muted small">No usable model in the lab's model folder.</span>}
      </div>
      {massJobError && (
        <p className="note error" role="alert" data-testid="mass-start-error">
          <span aria-hidden="true">✗</span> {massJobError}
        </p>
      )}
      {massJob && <JobProgress job={massJob} />}
    </section>
  );
}

function JobProgress({ job }: { job: MassJob }) {
  const tone = job.status === 'completed' ? 'ok' : job.status === 'failed' ? 'bad' : job.status === 'cancelled' ? 'muted' : 'busy';
  return (
    <div className="progress" data-testid="mass-job" data-status={job.status}>
      <div className="row">
        <strong>
          {job.job} <code>{job.jobId}</code>
        </strong>
        <span className={`status tone-${tone}`} data-testid="mass-job-status">{job.status}</span>
        {job.total !== undefined && <span className="small" data-testid="mass-job-count">{job.done ?? 0} / {job.total}</span>}
      </div>
      {job.total !== undefined && <progress max={Math.max(1, job.total)} value={job.done ?? 0} aria-label={`${job.done ?? 0} of ${job.total}`} />}
      {job.message && <p className="note error small">{job.message}</p>}
      <ol className="small" data-testid="mass-job-lines">
        {job.lines.map((l, i) => <li key={i}>{l}</li>)}
      </ol>
    </div>
  );
}
