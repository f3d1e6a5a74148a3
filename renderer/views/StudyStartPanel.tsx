import { useEffect, useState } from 'react';
import type { StartStudyRequest } from '../../core/api/client.ts';
import type { StudyJob } from '../store/studies.ts';
import { useLab, useLabPick } from '../useLab.ts';

/** The form's fields: a shipped plan or a pasted one, and the options of `flowlab study` ('' = the CLI's default). */
export interface StudyForm {
  source: 'shipped' | 'pasted';
  planName: string;
  planText: string;
  /** '' = the plan's models. */
  model: string;
  threads: string;
  budgetTokens: string;
  budgetMinutes: string;
  calibrationTasks: string;
}

export const STUDY_FORM_DEFAULTS: StudyForm = { source: 'shipped', planName: 'laptop.yaml', planText: '', model: '', threads: '', budgetTokens: '', budgetMinutes: '', calibrationTasks: '' };

/**
 * The request the form sends: the plan by name or as text, and each option that is filled in
 * (a blank one keeps the CLI's default). Errors: a message naming the field whose text is not a
 * number in its range.
 */
export function studyStartOf(f: StudyForm, dryRun: boolean): StartStudyRequest | { error: string } {
  const int = (v: string, label: string, min: number, max: number): number | undefined | string => {
    if (!v.trim()) return undefined;
    const n = Number(v);
    return Number.isInteger(n) && n >= min && n <= max ? n : `${label} must be a whole number from ${min} to ${max}`;
  };
  const threads = int(f.threads, 'Threads', 1, 256);
  const budgetTokens = int(f.budgetTokens, 'Token budget', 1, Number.MAX_SAFE_INTEGER);
  const calibrationTasks = int(f.calibrationTasks, 'Calibration tasks', 1, 64);
  const minutes = f.budgetMinutes.trim() ? Number(f.budgetMinutes) : undefined;
  for (const v of [threads, budgetTokens, calibrationTasks]) if (typeof v === 'string') return { error: v };
  if (minutes !== undefined && !(minutes > 0)) return { error: 'Minute budget must be a number greater than 0' };
  if (f.source === 'pasted' && !f.planText.trim()) return { error: 'Paste a plan first' };
  return {
    ...(f.source === 'shipped' ? { planName: f.planName } : { planText: f.planText }),
    ...(dryRun && { dryRun: true }),
    ...(f.model && { model: f.model }),
    ...(typeof threads === 'number' && { threads }),
    ...(typeof budgetTokens === 'number' && { budgetTokens }),
    ...(minutes !== undefined && { budgetMinutes: minutes }),
    ...(typeof calibrationTasks === 'number' && { calibrationTasks }),
  };
}

/** `n` and the noun, plural unless one. */
const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

const running = (j: StudyJob | null) => !!j && (j.status === 'starting' || j.status === 'running');

/**
 * Starts a study from the lab (`startStudy`, what `flowlab study` runs): a shipped plan or a
 * pasted one, the model, threads, budgets; Dry run shows the estimate, Start runs the cells with
 * their progress as it arrives, Cancel stops at the next step (the same plan started again resumes).
 */
export function StudyStartPanel() {
  const { studyPlans, loadStudyPlans, models, loadModels, studyJob, studyJobError, startStudyJob, cancelStudyJob } = useLabPick('studyPlans', 'loadStudyPlans', 'models', 'loadModels', 'studyJob', 'studyJobError', 'startStudyJob', 'cancelStudyJob');
  const offline = useLab((s) => s.serverDown);
  useEffect(() => {
    if (studyPlans.status === 'idle') void loadStudyPlans();
    if (models.status === 'idle') void loadModels();
  }, [studyPlans.status, models.status, loadStudyPlans, loadModels]);
  const [form, setForm] = useState<StudyForm>(STUDY_FORM_DEFAULTS);
  const [formError, setFormError] = useState<string | null>(null);
  const plans = studyPlans.status === 'ready' ? studyPlans.data : [];
  const usable = models.status === 'ready' ? models.data.filter((m) => m.info && !m.error) : [];
  const set = <K extends keyof StudyForm>(k: K, v: StudyForm[K]) => {
    setFormError(null);
    setForm((f) => ({ ...f, [k]: v }));
  };
  const busy = running(studyJob);
  const go = (dryRun: boolean) => {
    const req = studyStartOf(form, dryRun);
    if ('error' in req) return setFormError(req.error);
    void startStudyJob(req);
  };
  const text = (k: 'threads' | 'budgetTokens' | 'budgetMinutes' | 'calibrationTasks', label: string, placeholder: string) => (
    <label className="row">
      <span>{label}</span>
      <input type="text" inputMode="decimal" size={8} data-testid={`study-start-${k}`} placeholder={placeholder} value={form[k]} onChange={(e) => set(k, e.target.value)} />
    </label>
  );
  return (
    <section className="study-start" aria-labelledby="study-start-title">
      <h3 id="study-start-title">Start a study</h3>
      <div className="row wrap">
        <label className="row">
          <input type="radio" name="study-source" data-testid="study-source-shipped" checked={form.source === 'shipped'} onChange={() => set('source', 'shipped')} />
          <span>Shipped plan</span>
        </label>
        <select data-testid="study-start-plan" value={form.planName} disabled={form.source !== 'shipped'} onChange={(e) => set('planName', e.target.value)} aria-label="Shipped plan">
          {plans.map((p) => <option key={p.name} value={p.name}>{p.name}</option>)}
        </select>
        <label className="row">
          <input type="radio" name="study-source" data-testid="study-source-pasted" checked={form.source === 'pasted'}
            onChange={() => setForm((f) => ({ ...f, source: 'pasted', planText: f.planText || plans.find((p) => p.name === f.planName)?.text || '' }))} />
          <span>Paste a plan</span>
        </label>
      </div>
      {form.source === 'pasted' && (
        <textarea data-testid="study-start-text" aria-label="Study plan (YAML)" rows={10} spellCheck={false} value={form.planText} onChange={(e) => set('planText', e.target.value)}
          placeholder="A study plan (docs/studies.md); workflow paths are relative to examples/studies/" />
      )}
      <div className="row wrap">
        <label className="row">
          <span>Model</span>
          <select data-testid="study-start-model" value={form.model} onChange={(e) => set('model', e.target.value)}>
            <option value="">the plan's models</option>
            {usable.map((m) => <option key={m.path} value={m.path}>{m.fileName}</option>)}
          </select>
        </label>
        {text('threads', 'Threads', "plan's")}
        {text('budgetTokens', 'Token budget', 'none')}
        {text('budgetMinutes', 'Minute budget', 'none')}
        {text('calibrationTasks', 'Calibration tasks', '6')}
      </div>
      <div className="row">
        <button type="button" data-testid="study-dry-run" disabled={busy || offline} onClick={() => go(true)}>Dry run</button>
        <button type="button" className="primary" data-testid="study-start" disabled={busy || offline} onClick={() => go(false)}>Start</button>
        <button type="button" data-testid="study-cancel" disabled={!busy || offline} onClick={() => void cancelStudyJob()}>Cancel</button>
      </div>
      {(formError ?? studyJobError) && (
        <p className="note error" role="alert" data-testid="study-start-error">
          <span aria-hidden="true">✗</span> {formError ?? studyJobError}
        </p>
      )}
      {studyJob && <StudyJobProgress job={studyJob} />}
    </section>
  );
}

function StudyJobProgress({ job }: { job: StudyJob }) {
  const tone = job.status === 'completed' ? 'ok' : job.status === 'failed' ? 'bad' : job.status === 'cancelled' || job.status === 'stopped' ? 'muted' : 'busy';
  const e = job.estimate;
  return (
    <div className="progress" data-testid="study-job" data-status={job.status} data-dry-run={String(job.dryRun)}>
      <div className="row wrap">
        <strong>{job.dryRun ? 'Dry run' : 'Study'} <code>{job.studyId}</code></strong>
        <span className={`status tone-${tone}`} data-testid="study-job-status">{job.status}</span>
        {job.total !== undefined && <span className="small" data-testid="study-job-count">{job.done ?? 0} / {job.total} cells</span>}
      </div>
      {job.total !== undefined && <progress max={Math.max(1, job.total)} value={job.done ?? 0} aria-label={`${job.done ?? 0} of ${job.total} cells`} />}
      {e && (
        <p data-testid="study-estimate">
          Estimate: {count(e.cells, 'cell')} and {count(e.units, 'train loop')} left, {count(e.runs, 'run')}, {count(Math.round(e.calls), 'model call')}, {count(Math.round(e.tokens), 'token')}, about {Math.max(1, Math.round(e.seconds))} s.
        </p>
      )}
      {job.message && <p className="note error small">{job.message}</p>}
      <ol className="small" data-testid="study-job-lines">
        {job.lines.map((l, i) => <li key={i}>{l}</li>)}
      </ol>
    </div>
  );
}
