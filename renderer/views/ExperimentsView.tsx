import { useMemo } from 'react';
import { experimentPoints, failuresByClass, FAILURE_CLASSES, isSimulated } from '../lib/experimentStats.ts';
import { useLabPick } from '../useLab.ts';
import { ExperimentsChart } from './lazy.tsx';
import { experimentStatusLabel, percent, timestamp } from './format.ts';
import { LoadState, RefreshButton, Status } from './Status.tsx';
import { TableHead } from './TableHead.tsx';

const CLASS_SHORT: Record<(typeof FAILURE_CLASSES)[number], string> = { wiring: 'W', execution: 'E', cascade: 'C', infrastructure: 'I' };

/** Every experiment with its scores and failures by class, and a chart across them. */
export function ExperimentsView() {
  const { experiments, runsByExperiment, selectedExperimentId: selected, selectExperiment, setView, refresh, theme } = useLabPick(
    'experiments', 'runsByExperiment', 'selectedExperimentId', 'selectExperiment', 'setView', 'refresh', 'theme',
  );
  const list = experiments.status === 'ready' ? experiments.data : [];
  const runsOf = (id: string) => {
    const r = runsByExperiment[id];
    return r?.status === 'ready' ? r.data : undefined;
  };
  // runsOf reads only runsByExperiment, and list only experiments: both are the dependencies.
  const points = useMemo(() => experimentPoints(list, runsOf), [experiments, runsByExperiment]);

  const open = (id: string, view: 'trace' | 'ladder') => {
    void selectExperiment(id);
    setView(view);
  };

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
            <code>npm run flowlab -- run examples/gsm8k-team.yaml --dataset gsm8k --limit 10 --model &lt;file.gguf&gt;</code>
          </pre>
        </div>
      )}
      {list.length > 0 && (
        <>
          <ExperimentsChart points={points} theme={theme} />
          <div className="scroll">
            <table data-testid="experiments-table">
              <TableHead
                columns={[
                  'Experiment', 'Workflow', 'Kind', 'Dataset',
                  { label: 'Runs / planned', num: true }, { label: 'Accuracy', num: true }, { label: 'Completion', num: true },
                  { label: 'Failures W / E / C / I', title: 'Node failures by class: W wiring, E execution, C cascade, I infrastructure' },
                  'Status', 'Open',
                ]}
              />
              <tbody>
                {list.map((e) => {
                  const runs = runsOf(e.id);
                  const f = runs ? failuresByClass(runs) : null;
                  const sim = isSimulated(e, runs);
                  return (
                    <tr key={e.id} className={e.id === selected ? 'selected' : undefined} data-testid={`experiment-row-${e.id}`}>
                      <td>
                        <code title={`created ${timestamp(e.createdAt)}`}>{e.id}</code>
                        {sim && <span className="tag sim">SIMULATED</span>}
                      </td>
                      <td>{e.workflowName}</td>
                      <td>{e.kind}</td>
                      <td>
                        {e.dataset} <span className="muted">{e.split}</span>
                      </td>
                      <td className="num">
                        {e.runsDone} / {e.tasksPlanned}
                      </td>
                      <td className="num">{percent(e.accuracy)}</td>
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
                        <button type="button" className="link" data-testid={`open-trace-${e.id}`} onClick={() => open(e.id, 'trace')}>
                          trace
                        </button>{' '}
                        <button type="button" className="link" onClick={() => open(e.id, 'ladder')}>
                          ladder
                        </button>
                      </td>
                    </tr>
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
