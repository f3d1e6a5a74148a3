import { useLab } from '../useLab.ts';
import { duration, runStatusLabel } from './format.ts';
import { LoadState, Status } from './Status.tsx';

/** The runs of the selected experiment; choosing one shows its node events. */
export function RunsView() {
  const experimentId = useLab((s) => s.selectedExperimentId);
  const runs = useLab((s) => s.runs);
  const selected = useLab((s) => s.selectedRunId);
  const selectRun = useLab((s) => s.selectRun);
  if (!experimentId) return null;

  return (
    <section aria-labelledby="runs-title">
      <header className="section-head">
        <h2 id="runs-title">
          Runs of <code>{experimentId}</code>
        </h2>
      </header>
      <LoadState state={runs} what="runs" />
      {runs.status === 'ready' && runs.data.length === 0 && <p className="note">No runs stored yet for this experiment.</p>}
      {runs.status === 'ready' && runs.data.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col" className="num">Task</th>
              <th scope="col">Task id</th>
              <th scope="col">Status</th>
              <th scope="col">Answer</th>
              <th scope="col">Expected</th>
              <th scope="col">Graded</th>
              <th scope="col" className="num">Tokens (prompt + completion)</th>
              <th scope="col" className="num">Time</th>
            </tr>
          </thead>
          <tbody>
            {runs.data.map((r) => (
              <tr key={r.runId} className={r.runId === selected ? 'selected' : undefined}>
                <td className="num">
                  <button type="button" className="link" aria-pressed={r.runId === selected} onClick={() => void selectRun(r.runId === selected ? null : r.runId)}>
                    #{r.taskIndex}
                  </button>
                </td>
                <td>{r.taskId}</td>
                <td>
                  <Status label={runStatusLabel(r.status)} />
                </td>
                <td className="clip">{r.answer ?? <span className="muted">none</span>}</td>
                <td className="clip">{r.expected ?? ''}</td>
                <td>
                  <Status label={r.correct ? { symbol: '✓', text: 'correct', tone: 'ok' } : { symbol: '✗', text: 'wrong', tone: 'bad' }} />
                </td>
                <td className="num">
                  {r.promptTokens} + {r.completionTokens}
                </td>
                <td className="num">{duration(r.endedAt - r.startedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
