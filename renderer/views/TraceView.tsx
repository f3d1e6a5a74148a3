import { useLab } from '../useLab.ts';
import { eventError, eventTokens, failureClassLabel, nodeStatusLabel } from './format.ts';
import { LoadState, Status } from './Status.tsx';

/** The node events of the selected run, in completion order. */
export function TraceView() {
  const runId = useLab((s) => s.selectedRunId);
  const trace = useLab((s) => s.trace);
  if (!runId) return null;

  return (
    <section aria-labelledby="trace-title">
      <header className="section-head">
        <h2 id="trace-title">
          Node events of <code>{runId}</code>
        </h2>
      </header>
      <LoadState state={trace} what="the run's events" />
      {trace.status === 'ready' && trace.data.events.length === 0 && <p className="note">This run recorded no node events.</p>}
      {trace.status === 'ready' && trace.data.events.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col" className="num">#</th>
              <th scope="col">Node</th>
              <th scope="col" className="num">Attempt</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
              <th scope="col">Failure class</th>
              <th scope="col">Error</th>
              <th scope="col" className="num">Tokens (prompt + completion)</th>
            </tr>
          </thead>
          <tbody>
            {trace.data.events.map((e) => {
              const tokens = eventTokens(e);
              return (
                <tr key={`${e.nodeId}:${e.attempt}:${e.seq}`} className={e.status === 'ok' ? undefined : `row-${e.status}`}>
                  <td className="num">{e.seq}</td>
                  <td>
                    <code>{e.nodeId}</code> <span className="muted">{e.kind}</span>
                    {e.simulated && <span className="tag" title="A fault was injected here (simulated)">simulated</span>}
                  </td>
                  <td className="num">{e.attempt}</td>
                  <td>{e.role ?? <span className="muted">–</span>}</td>
                  <td>
                    <Status label={nodeStatusLabel(e.status)} />
                  </td>
                  <td>{failureClassLabel(e.failureClass)}</td>
                  <td className="clip" title={eventError(e)}>
                    {eventError(e)}
                  </td>
                  <td className="num">{e.calls.length ? `${tokens.prompt} + ${tokens.completion}` : <span className="muted">no model call</span>}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
