import { groupExperiments, memberLabel } from '../lib/experimentGroups.ts';
import { experimentNumbers, pickerLabel } from '../lib/runsTable.ts';
import { useLabPick } from '../useLab.ts';
import { percent, runStatusLabel } from './format.ts';
import { LoadState, Status } from './Status.tsx';
import { useExperimentWords } from './ExperimentWords.tsx';
import { kindLabel, modelsLabel, runTaskLabel } from '../lib/vocabulary.ts';

/** An experiment in one line: workflow, id, dataset/split, runs, accuracy. */
function experimentLine(e: { workflowName: string; id: string; dataset: string; split: string; runsDone: number; tasksPlanned: number; accuracy: number | null }): string {
  return `${e.workflowName} · ${e.id} · ${e.dataset}/${e.split} · ${e.runsDone}/${e.tasksPlanned} runs · ${percent(e.accuracy)} correct`;
}

/** Pick an experiment, then one of its runs (shared by Trace and Ladder). */
export function RunPicker() {
  const { experiments, selectedExperimentId, selectExperiment, runs, selectedRunId, selectRun } = useLabPick(
    'experiments', 'selectedExperimentId', 'selectExperiment', 'runs', 'selectedRunId', 'selectRun',
  );
  const list = experiments.status === 'ready' ? experiments.data : [];
  const picked = list.find((e) => e.id === selectedExperimentId);
  const numbers = experimentNumbers(list);
  const { group } = useExperimentWords();

  return (
    <nav className="run-picker" aria-label="Experiment and run">
      <label className="stack">
        <span className="muted small">Experiment</span>
        <select data-testid="pick-experiment" value={selectedExperimentId ?? ''} title={picked ? experimentLine(picked) : undefined} onChange={(e) => void selectExperiment(e.target.value || null)}>
          <option value="">{list.length ? '— choose an experiment —' : 'no experiments yet'}</option>
          {groupExperiments(list).map((en) =>
            en.type === 'single' ? (
              <option key={en.key} value={en.experiment.id}>
                {pickerLabel(en.experiment, percent(en.experiment.accuracy), numbers.get(en.experiment.id) ?? 0)}
              </option>
            ) : (
              // A train loop's or a study's experiments under one heading.
              <optgroup key={en.key} label={`${en.group.label} · ${en.group.workflows.join(', ')} · ${percent(en.group.accuracy)}`}>
                {en.members.map((e) => (
                  <option key={e.id} value={e.id}>
                    #{numbers.get(e.id)} {memberLabel(e)} · {e.id} · {percent(e.accuracy)}
                  </option>
                ))}
              </optgroup>
            ),
          )}
        </select>
      </label>
      {/* The closed select is narrower than its text: the whole choice, wrapped, below it. */}
      {picked && (
        <p className="picked-experiment small" data-testid="picked-experiment">
          <strong>{picked.workflowName}</strong> · <code>{picked.id}</code> · {kindLabel(picked.kind)} · {picked.dataset}/{picked.split} · models {modelsLabel(picked.models)} · {picked.runsDone}/{picked.tasksPlanned} runs · {percent(picked.accuracy)} correct
        </p>
      )}
      <LoadState state={experiments} what="experiments" />
      {selectedExperimentId && <LoadState state={runs} what="runs" />}
      {runs.status === 'ready' && selectedExperimentId && (
        <>
          <span className="muted small">Runs</span>
          {runs.data.length === 0 && <p className="muted small">No runs stored yet for this experiment.</p>}
          <ul className="run-list" data-testid="run-list">
            {runs.data.map((r) => (
              <li key={r.runId}>
                <button
                  type="button"
                  className={r.runId === selectedRunId ? 'run-item selected' : 'run-item'}
                  aria-pressed={r.runId === selectedRunId}
                  data-testid={`pick-run-${r.taskIndex}`}
                  onClick={() => void selectRun(r.runId)}
                  title={r.runId}
                >
                  <span data-testid={`run-task-${r.taskIndex}`}>{runTaskLabel(r.taskIndex, group)}</span>
                  <Status label={runStatusLabel(r.status)} />
                  <span className={r.correct ? 'tone-ok' : 'tone-bad'}>{r.correct ? '✓ correct' : '✗ wrong'}</span>
                  {r.credit?.roots.length ? <span className="muted small">{r.credit.roots.length} root</span> : null}
                  {r.credit?.silent ? <span className="muted small">silent</span> : null}
                  {r.simulated && <span className="tag sim">SIMULATED</span>}
                </button>
              </li>
            ))}
          </ul>
        </>
      )}
    </nav>
  );
}
