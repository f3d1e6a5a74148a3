import { useMemo } from 'react';
import { countOf } from '../lib/messages.ts';
import { meanLadders, RUNG_KEYS, RUNG_SYMBOL, rungText, runLadders, validityMeaning, wiredNodes, type LadderValues } from '../lib/ladderBars.ts';
import { useLabPick } from '../useLab.ts';
import { LadderChart, RungKeyLegend } from './LadderChart.tsx';
import { RoleTrendsPanel } from './RoleTrendsPanel.tsx';
import { RunPicker } from './RunPicker.tsx';
import { LoadState } from './Status.tsx';
import { ExperimentContextLine, useExperimentWords } from './ExperimentWords.tsx';
import { outcomeText, runTaskLabel } from '../lib/vocabulary.ts';
import { TableHead } from './TableHead.tsx';

/**
 * The hierarchical reward ladder per role: for the chosen run, and the mean across its experiment.
 * A role that wired nodes (a designer) stands beside the roles that ran them, marked ✎, with the
 * nodes each ran and wired and what its validity rung means (its graph well-formed).
 */
export function LadderView() {
  const { selectedExperimentId: experimentId, runs, selectedRunId: runId, trace } = useLabPick('selectedExperimentId', 'runs', 'selectedRunId', 'trace');
  const run = trace.status === 'ready' && trace.data.run.runId === runId ? trace.data.run : runs.status === 'ready' ? runs.data.find((r) => r.runId === runId) : undefined;
  const runLadder = useMemo(() => (run ? runLadders(run) : []), [run]);
  const mean = useMemo(() => (runs.status === 'ready' ? meanLadders(runs.data) : []), [runs]);
  const { experiments, setView } = useLabPick('experiments', 'setView');
  const words = useExperimentWords();
  if (experiments.status === 'ready' && experiments.data.length === 0) {
    return (
      <section className="view ladder-view" aria-labelledby="ladder-title">
        <header className="view-head">
          <h2 id="ladder-title">Reward ladder</h2>
        </header>
        <div className="empty" data-testid="ladder-empty">
          <p>
            <strong>No runs to score yet.</strong> Start an experiment in{' '}
            <button type="button" className="link" onClick={() => setView('run')}>
              Run (Alt+2)
            </button>
            ; each run gets a ladder per role: how far each role climbed (format, validity, completion, correctness, credit).
          </p>
        </div>
      </section>
    );
  }

  return (
    <section className="view ladder-view" aria-labelledby="ladder-title">
      <header className="view-head">
        <h2 id="ladder-title">Reward ladder</h2>
        <p className="muted small">
          h<sub>ρ</sub> = w<sub>f</sub>·f + w<sub>v</sub>·v<sub>ρ</sub> + w<sub>e</sub>·e + w<sub>a</sub>·a + w<sub>c</sub>·c<sub>ρ</sub> — each bar segment is weight × rung value; blame (c &lt; 0) is drawn left of zero.
        </p>
      </header>
      <div className="trace-grid">
        <RunPicker />
        <div className="ladder-body">
          <ExperimentContextLine context={experimentId ? words.context : null} testId="ladder-experiment" />
          <RungKeyLegend />
          {!experimentId && (
            <div className="empty">
              <p>Choose an experiment on the left: its mean ladder per role appears here; choose a run to see that run's ladder.</p>
            </div>
          )}
          {runId && (
            <section aria-labelledby="ladder-run-title" data-testid="ladder">
              <h3 id="ladder-run-title" data-testid="ladder-run-title">Run {run ? `${run.runId} · task ${runTaskLabel(run.taskIndex, words.group)} · ${outcomeText(run)}` : ''}</h3>
              {run?.simulated && <p className="small"><span className="tag sim">SIMULATED</span> faults were injected in this run.</p>}
              {run?.credit?.silent && <p className="banner warn small">Silent failure: no node failed but the answer is wrong — only the correctness rung (a) shows it.</p>}
              {!run && <LoadState state={trace} what="the run" />}
              {run && runLadder.length === 0 && <p className="muted">This run has no ladder recorded.</p>}
              {runLadder.length > 0 && (
                <>
                  <LadderChart ladders={runLadder} title="Reward ladder of the run" testId="ladder-chart" />
                  <LadderTable ladders={runLadder} />
                </>
              )}
            </section>
          )}
          {experimentId && (
            <section aria-labelledby="ladder-mean-title" data-testid="ladder-mean">
              <h3 id="ladder-mean-title">
                Mean across experiment <code>{experimentId}</code>
                {runs.status === 'ready' ? <span className="muted small"> ({countOf(runs.data.length, 'run')})</span> : null}
              </h3>
              <LoadState state={runs} what="runs" />
              {runs.status === 'ready' && mean.length === 0 && <p className="muted">No run of this experiment has a ladder yet.</p>}
              {mean.length > 0 && (
                <>
                  <LadderChart ladders={mean} title="Mean reward ladder per role" testId="ladder-mean-chart" />
                  <LadderTable ladders={mean} mean />
                </>
              )}
            </section>
          )}
          <RoleTrendsPanel />
        </div>
      </div>
    </section>
  );
}

/** Nodes a role ran and wired: counts for a run, means (one decimal) across an experiment. */
const count = (x: number | undefined, mean: boolean) => (x === undefined ? '–' : mean && !Number.isInteger(x) ? x.toFixed(1) : String(x));

function LadderTable({ ladders, mean = false }: { ladders: Array<LadderValues & { runs?: number; rungCounts?: number[] }>; mean?: boolean }) {
  const wirers = ladders.filter(wiredNodes);
  return (
    <>
      <table className="ladder-table">
        <TableHead
          columns={[
            'Role',
            { label: mean ? 'Nodes run · wired (mean)' : 'Nodes run · wired', num: true, title: 'nodes the role ran that executed · nodes it wired into the graph' },
            ...RUNG_KEYS.map((r) => ({ key: r, num: true, title: r, label: <>{RUNG_SYMBOL[r]} <span className="muted small">{r} × weight</span></> })),
            { label: 'h', num: true },
            { label: mean ? 'Mean highest rung' : 'Highest rung', num: true },
            mean && 'Runs stopping at rung 0…5',
          ]}
        />
        <tbody>
          {ladders.map((l) => (
            <tr key={l.role} data-testid={`ladder-row-${l.role}`}>
              <td>
                {l.role}
                {wiredNodes(l) && <span className="author author-wired" title="this role wired nodes into the graph (a designer)">✎ wired the graph</span>}
              </td>
              <td className="num">
                {count(l.nodesRun, mean)} · {count(l.nodesWired, mean)}
              </td>
              {RUNG_KEYS.map((r) => (
                <td className="num" key={r}>
                  {l[r].toFixed(2)} <span className="muted small">× {l.weights[r]}</span>
                </td>
              ))}
              <td className="num">{l.reward.toFixed(2)}</td>
              <td className="num">{rungText({ ...l, highestRung: mean ? Math.round(l.highestRung * 10) / 10 : l.highestRung }, '')}</td>
              {mean && <td className="small">{l.rungCounts?.join(' · ')}</td>}
            </tr>
          ))}
        </tbody>
      </table>
      <ul className="small validity-notes">
        {wirers.map((l) => (
          <li key={l.role} data-testid={`ladder-validity-${l.role}`}>
            v for <strong>{l.role}</strong> (wired {count(l.nodesWired, mean)} node{l.nodesWired === 1 ? '' : 's'}): {validityMeaning(l)}.
          </li>
        ))}
        {ladders.length > wirers.length && (
          <li className="muted">
            v for {ladders.filter((l) => !wiredNodes(l)).map((l) => l.role).join(', ')}: {validityMeaning({ nodesWired: 0 })}.
          </li>
        )}
      </ul>
    </>
  );
}
