import type { ExperimentSummary } from '../../core/api/client.ts';
import type { CompareView, PairedDelta } from '../../core/api/client.ts';
import { flowlabCommand } from '../lib/commands.ts';
import { filterOptions, groupExperiments, isFiltering, memberLabel, NO_FILTER, type ExperimentFilter } from '../lib/experimentGroups.ts';
import { useLab, useLabPick } from '../useLab.ts';
import { LoadState } from './Status.tsx';
import { modelsLabel } from '../lib/vocabulary.ts';

const FILTER_LABEL: Record<keyof ExperimentFilter, string> = { workflow: 'Workflow', dataset: 'Dataset', kind: 'Kind', model: 'Model' };

/** The list filters: workflow, dataset, kind (a train loop's and a study's experiments too) and model file. */
export function ExperimentFilters({ list }: { list: readonly ExperimentSummary[] }) {
  const { experimentFilter: f, setExperimentFilter } = useLabPick('experimentFilter', 'setExperimentFilter');
  const options = filterOptions(list);
  return (
    <div className="row wrap experiment-filters" role="group" aria-label="Filter experiments" data-testid="experiment-filters">
      {(Object.keys(FILTER_LABEL) as Array<keyof ExperimentFilter>).map((k) => (
        <label key={k} className="stack">
          <span className="muted small">{FILTER_LABEL[k]}</span>
          <select data-testid={`filter-${k}`} value={f[k]} onChange={(e) => setExperimentFilter({ [k]: e.target.value })}>
            <option value="">any</option>
            {options[k].map((v) => (
              <option key={v} value={v}>
                {v}
              </option>
            ))}
          </select>
        </label>
      ))}
      {isFiltering(f) && (
        <button type="button" className="link" data-testid="filter-clear" onClick={() => setExperimentFilter(NO_FILTER)}>
          Clear filters
        </button>
      )}
    </div>
  );
}

/** Whether an experiment can be resumed from the window (`flowlab resume`). */
export const resumable = (status: ExperimentSummary['status']) => status === 'cancelled' || status === 'interrupted';

/** The Resume button of a cancelled or interrupted experiment (a train loop's resumes its loop). */
export function ResumeButton({ experimentId }: { experimentId: string }) {
  const { resuming, resumeExperiment } = useLabPick('resuming', 'resumeExperiment');
  return (
    <button type="button" className="link" data-testid={`resume-${experimentId}`} disabled={resuming !== null} onClick={() => void resumeExperiment(experimentId)} title="Finish its pending tasks with the same workflow, models, seeds and cards (flowlab resume)">
      {resuming === experimentId ? 'resuming…' : 'resume'}
    </button>
  );
}

/** Two experiments compared on the tasks they share, as `flowlab compare` prints them. */
export function ComparePanel({ list }: { list: readonly ExperimentSummary[] }) {
  const { compareIds, setCompareIds, comparison, runCompare } = useLabPick('compareIds', 'setCompareIds', 'comparison', 'runCompare');
  const dbFile = useLab((s) => (s.appInfo.status === 'ready' ? s.appInfo.data.dbFile : null));
  const entries = groupExperiments(list);
  const options = (side: 'a' | 'b') => (
    <select data-testid={`compare-${side}`} value={compareIds[side]} onChange={(e) => setCompareIds({ [side]: e.target.value })}>
      <option value="">— {side === 'a' ? 'baseline A' : 'compared B'} —</option>
      {entries.map((en) =>
        en.type === 'single' ? (
          <option key={en.key} value={en.experiment.id}>
            {en.experiment.id} · {en.experiment.workflowName} · {en.experiment.dataset}
          </option>
        ) : (
          <optgroup key={en.key} label={en.group.label}>
            {en.members.map((e) => (
              <option key={e.id} value={e.id}>
                {e.id} · {memberLabel(e)}
              </option>
            ))}
          </optgroup>
        ),
      )}
    </select>
  );
  const ready = comparison.status === 'ready' && comparison.data.a === compareIds.a && comparison.data.b === compareIds.b ? comparison.data : null;
  return (
    <details className="compare-panel" data-testid="compare-panel" open={Boolean(compareIds.a || compareIds.b)}>
      <summary>Compare two experiments (paired by task: sign test and bootstrap interval)</summary>
      <div className="row wrap">
        {options('a')}
        {options('b')}
        <button type="button" className="primary" data-testid="compare-run" disabled={!compareIds.a || !compareIds.b || compareIds.a === compareIds.b} onClick={() => void runCompare()}>
          Compare
        </button>
      </div>
      {compareIds.a && compareIds.b && (
        <p className="muted small">
          Same as <code data-testid="compare-command">{flowlabCommand(['compare', compareIds.a, compareIds.b], dbFile)}</code>
        </p>
      )}
      <LoadState state={comparison} what="the comparison" />
      {ready && <CompareTable view={ready} models={{ a: list.find((e) => e.id === ready.a)?.models, b: list.find((e) => e.id === ready.b)?.models }} />}
    </details>
  );
}

const f3 = (x: number) => x.toFixed(3);
const signed3 = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`;

/** `flowlab compare`'s table: each measure's A, B, delta, 95% bootstrap interval and sign test (the Experiments view; the Learning view's held-out change). */
export function CompareTable({ view, models }: { view: CompareView; /** Each side's model files (the experiments list's), shown as `flowlab ls` prints them. */ models?: { a?: readonly string[] | undefined; b?: readonly string[] | undefined } }) {
  if (view.pairs === 0) {
    return (
      <p className="note warn" role="note" data-testid="compare-result">
        {view.a} and {view.b} share no task: nothing to compare. Run B on the same dataset, split and tasks as A.
      </p>
    );
  }
  const rows: Array<[string, PairedDelta]> = [['score (accuracy)', view.score], ...Object.entries(view.roles).map(([r, d]) => [`h ${r}`, d] as [string, PairedDelta])];
  return (
    <div data-testid="compare-result">
      <p className="small">
        A = <code>{view.a}</code> ({view.sides.a.workflowName}, {view.sides.a.dataset} {view.sides.a.split}{models ? `, models ${modelsLabel(models.a)}` : ''}), B = <code>{view.b}</code> ({view.sides.b.workflowName}, {view.sides.b.dataset}{' '}
        {view.sides.b.split}{models ? `, models ${modelsLabel(models.b)}` : ''}): <strong>{view.pairs}</strong> paired task{view.pairs === 1 ? '' : 's'}
        {view.unpairedA || view.unpairedB ? ` (${view.unpairedA} only in A, ${view.unpairedB} only in B, left out)` : ''}.
      </p>
      {!view.seedsMatch && <p className="note warn small">Paired runs used different seeds: the differences mix the change with sampling noise.</p>}
      <table className="compare-table">
        <thead>
          <tr>
            <th scope="col">measure (B − A)</th>
            <th scope="col" className="num">A</th>
            <th scope="col" className="num">B</th>
            <th scope="col" className="num">delta</th>
            <th scope="col">95% bootstrap CI</th>
            <th scope="col" title="pairs where B is above / below / equal to A">sign + / − / =</th>
            <th scope="col" className="num">p (sign test)</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(([name, d]) => (
            <tr key={name} data-testid={`compare-row-${name}`}>
              <th scope="row">{name}</th>
              <td className="num">{f3(d.a)}</td>
              <td className="num">{f3(d.b)}</td>
              <td className="num">{signed3(d.delta)}</td>
              <td className="nowrap">
                [{f3(d.ci.low)}, {f3(d.ci.high)}]
              </td>
              <td>
                {d.signTest.positive} / {d.signTest.negative} / {d.signTest.ties}
              </td>
              <td className="num">{d.signTest.p.toFixed(4)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
