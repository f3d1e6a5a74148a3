import { Fragment, useEffect, useMemo } from 'react';
import { constantFlag, type ExperimentSummary } from '../../core/api/client.ts';
import { flowlabCommand } from '../lib/commands.ts';
import { experimentChartData } from '../lib/experimentChart.ts';
import { experimentGuard, guardSummary } from '../lib/experimentGuard.ts';
import { kindLabel } from '../lib/vocabulary.ts';
import { filterExperiments, groupExperiments, memberLabel, modelText, type GroupSummary } from '../lib/experimentGroups.ts';
import { failuresByClass, FAILURE_CLASSES, isSimulated } from '../lib/experimentStats.ts';
import { useLab, useLabPick } from '../useLab.ts';
import { ExperimentsChart } from './lazy.tsx';
import { BlameEvalPanel } from './BlameEvalPanel.tsx';
import { ComparePanel, ExperimentFilters, ResumeButton, resumable } from './ExperimentParts.tsx';
import { experimentStatusLabel, percent, timestamp } from './format.ts';
import { LoadState, RefreshButton, Status } from './Status.tsx';
import { TableHead } from './TableHead.tsx';

const CLASS_SHORT: Record<(typeof FAILURE_CLASSES)[number], string> = { wiring: 'W', execution: 'E', cascade: 'C', infrastructure: 'I' };

/** The command the empty state suggests (without `--db`, which the view appends). */
export const RUN_COMMAND_ARGS = ['run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--limit', '10', '--model', '<file.gguf>'];

/**
 * Every experiment with its scores, model files and failures by class, a train loop's or a
 * study's experiments under one entry (opened with its toggle), filters, a chart across them,
 * Resume for cancelled ones and a paired comparison of two.
 */
export function ExperimentsView() {
  const { experiments, runsByExperiment, setView, refresh, theme, experimentFilter, openGroups, selectedExperimentId } = useLabPick(
    'experiments', 'runsByExperiment', 'setView', 'refresh', 'theme', 'experimentFilter', 'openGroups', 'selectedExperimentId',
  );
  const dbFile = useLab((s) => (s.appInfo.status === 'ready' ? s.appInfo.data.dbFile : null));
  // Entering the view reads the list again (an experiment may have ended since: Resume then shows).
  useEffect(() => void refresh(), [refresh]);
  const list = experiments.status === 'ready' ? experiments.data : [];
  const runsOf = (id: string) => {
    const r = runsByExperiment[id];
    return r?.status === 'ready' ? r.data : undefined;
  };
  const shown = useMemo(() => filterExperiments(list, experimentFilter), [experiments, experimentFilter]);
  const entries = useMemo(() => groupExperiments(shown), [shown]);
  // runsOf reads only runsByExperiment, and entries only experiments and the filter: both are the dependencies.
  const chart = useMemo(() => experimentChartData(entries, runsOf), [entries, runsByExperiment]);

  return (
    <section className="view experiments-view" aria-labelledby="experiments-title">
      <header className="view-head">
        <h2 id="experiments-title">Experiments</h2>
        <RefreshButton onRefresh={refresh} />
      </header>
      <LoadState state={experiments} what="experiments" />
      {experiments.status === 'ready' && list.length === 0 && (
        <div className="empty" data-testid="experiments-empty">
          <p>
            <strong>No experiments yet.</strong> Open a workflow in the{' '}
            <button type="button" className="link" onClick={() => setView('editor')}>
              Editor
            </button>{' '}
            and start it from{' '}
            <button type="button" className="link" onClick={() => setView('run')}>
              Run
            </button>
            , or from a terminal:
          </p>
          <pre>
            <code>{flowlabCommand(RUN_COMMAND_ARGS, dbFile)}</code>
          </pre>
        </div>
      )}
      {list.length > 0 && (
        <>
          <ExperimentFilters list={list} />
          {entries.length > 0 && <ExperimentsChart data={chart} theme={theme} />}
          <ComparePanel list={list} />
          <BlameEvalPanel />
          {entries.length === 0 && <p className="note" data-testid="experiments-none-match">No experiment matches these filters.</p>}
          <div className="scroll">
            <table data-testid="experiments-table">
              <TableHead
                columns={[
                  'Experiment', 'Workflow', 'Kind', 'Dataset', 'Model',
                  { label: 'Runs / planned', num: true }, { label: 'Accuracy', num: true }, { label: 'Completion', num: true },
                  { label: 'Failures W / E / C / I', title: 'Node failures by class: W wiring, E execution, C cascade, I infrastructure' },
                  'Status', 'Open',
                ]}
              />
              <tbody>
                {entries.map((en) => {
                  if (en.type === 'single') return <ExperimentRow key={en.key} e={en.experiment} />;
                  const open = openGroups[en.key] ?? en.members.some((m) => m.id === selectedExperimentId);
                  return (
                    <Fragment key={en.key}>
                      <GroupRow entryKey={en.key} group={en.group} open={open} newest={en.members[0]!} />
                      {open && en.members.map((m) => <ExperimentRow key={m.id} e={m} member />)}
                    </Fragment>
                  );
                })}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}

/** A train loop's or a study's row: totals, and the toggle that shows its experiments. */
function GroupRow({ entryKey, group, open, newest }: { entryKey: string; group: GroupSummary; open: boolean; newest: ExperimentSummary }) {
  const toggleGroup = useLab((s) => s.toggleGroup);
  return (
    <tr className="group-row" data-testid={`experiment-group-${group.id}`}>
      <td>
        <button type="button" className="link" aria-expanded={open} data-testid={`group-toggle-${group.id}`} onClick={() => toggleGroup(entryKey)} title={open ? 'Hide its experiments' : 'Show its experiments'}>
          <span aria-hidden="true">{open ? '▾' : '▸'}</span> {group.label}
        </button>{' '}
        <span className="muted small">{group.experiments} experiments</span>
      </td>
      <td>{group.workflows.join(', ')}</td>
      <td>{group.kind === 'study' ? 'study' : 'train loop'}</td>
      <td>{group.datasets.join(', ')}</td>
      <td className="wrap-anywhere">{modelText(group.models)}</td>
      <td className="num">
        {group.runsDone} / {group.tasksPlanned}
      </td>
      <td className="num">{percent(group.accuracy)}</td>
      <td className="num">–</td>
      <td />
      <td>
        <Status label={experimentStatusLabel(group.status)} />
      </td>
      <td className="nowrap">{group.kind === 'train-loop' && resumable(group.status) && <ResumeButton experimentId={newest.id} />}</td>
    </tr>
  );
}

/** Under an experiment's accuracy: the best constant policy and the distinct answers, and CONSTANT when the answers collapsed (as `flowlab run` prints them). */
function AccuracyGuard({ id, runs, dataset }: { id: string; runs: Parameters<typeof experimentGuard>[0] | undefined; dataset: string }) {
  const g = runs && experimentGuard(runs, dataset);
  if (!g) return null;
  const flag = constantFlag(g);
  return (
    <div className="small" data-testid={`experiment-guard-${id}`}>
      <span className="muted">{guardSummary(g)}</span>
      {flag && (
        <>
          {' '}
          <strong className="error" title="The answers collapsed: this accuracy is a constant policy's (core/guards)">
            {flag}
          </strong>
        </>
      )}
    </div>
  );
}

function ExperimentRow({ e, member = false }: { e: ExperimentSummary; member?: boolean }) {
  const { runsByExperiment, selectedExperimentId: selected, selectExperiment, setView, openBlameEval } = useLabPick('runsByExperiment', 'selectedExperimentId', 'selectExperiment', 'setView', 'openBlameEval');
  const r = runsByExperiment[e.id];
  const runs = r?.status === 'ready' ? r.data : undefined;
  const f = runs ? failuresByClass(runs) : null;
  const sim = isSimulated(e, runs);
  const open = (view: 'trace' | 'ladder') => {
    void selectExperiment(e.id);
    setView(view);
  };
  const classes = [e.id === selected ? 'selected' : '', member ? 'member-row' : ''].filter(Boolean).join(' ');
  return (
    <tr className={classes || undefined} data-testid={`experiment-row-${e.id}`}>
      <td>
        {member && <span className="muted small member-label">{memberLabel(e)} </span>}
        <code title={`created ${timestamp(e.createdAt)}`}>{e.id}</code>
        {sim && <span className="tag sim">SIMULATED</span>}
      </td>
      <td>{e.workflowName}</td>
      <td data-testid={`experiment-kind-${e.id}`}>{kindLabel(e.kind)}</td>
      <td>
        {e.dataset} <span className="muted">{e.split}</span>
      </td>
      <td className="wrap-anywhere" data-testid={`experiment-model-${e.id}`}>
        {modelText(e.models)}
      </td>
      <td className="num">
        {e.runsDone} / {e.tasksPlanned}
      </td>
      <td className="num">
        {percent(e.accuracy)}
        <AccuracyGuard id={e.id} runs={runs} dataset={e.dataset} />
      </td>
      <td className="num">{percent(e.completionRate)}</td>
      <td className="nowrap">
        {f ? (
          FAILURE_CLASSES.map((c) => (
            <span key={c} className="fail-count" title={`${c}: ${f[c]}`}>
              {CLASS_SHORT[c]} {f[c]}
            </span>
          ))
        ) : (
          <span className="muted">…</span>
        )}
      </td>
      <td>
        <Status label={experimentStatusLabel(e.status)} />
      </td>
      <td className="nowrap">
        <button type="button" className="link" data-testid={`open-trace-${e.id}`} onClick={() => open('trace')}>
          trace
        </button>{' '}
        <button type="button" className="link" onClick={() => open('ladder')}>
          ladder
        </button>
        {e.kind === 'blame-eval' && (
          <>
            {' '}
            <button type="button" className="link" data-testid={`open-blame-eval-${e.id}`} title="Precision and recall of blame per role and fault kind, as flowlab blame-eval prints them" onClick={() => void openBlameEval(e.id)}>
              evaluation
            </button>
          </>
        )}
        {resumable(e.status) && (
          <>
            {' '}
            <ResumeButton experimentId={e.id} />
          </>
        )}
      </td>
    </tr>
  );
}
