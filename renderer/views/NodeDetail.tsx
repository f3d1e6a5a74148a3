import { blameText, STATE_MARKER, STATE_TEXT, type TraceModel } from '../lib/traceModel.ts';
import { useLabPick } from '../useLab.ts';
import { duration, eventError, eventTokens, failureClassLabel, nodeStatusLabel, showValue } from './format.ts';
import { Status } from './Status.tsx';
import { ForkFromHere } from './ForkPanel.tsx';

/** Everything recorded about one node of the run: attempts, inputs, output, prompts, completions, tokens, timing, error. */
export function NodeDetail({ model }: { model: TraceModel }) {
  const { traceNode: nodeId, traceAttempt: attemptWanted, selectTraceNode, selectedRunId } = useLabPick('traceNode', 'traceAttempt', 'selectTraceNode', 'selectedRunId');
  const node = model.nodes.find((n) => n.id === nodeId);
  if (!node || !nodeId) return null;
  const attempts = model.attempts.get(nodeId) ?? [];
  const event = attempts.find((e) => e.attempt === attemptWanted) ?? attempts[attempts.length - 1];
  const blame = blameText(node);
  const tokens = event ? eventTokens(event) : { prompt: 0, completion: 0 };
  // How the output was written (core/reward outputFlags): its last call cut at max_tokens, its JSON repaired.
  const lastCall = event?.calls.at(-1);
  const cut = lastCall?.stopReason === 'maxTokens';
  const repair = lastCall?.repair;

  return (
    <aside className="node-detail" data-testid="node-detail" aria-label={`Node ${node.id}`}>
      <header className="row">
        <h3>
          <span aria-hidden="true">{STATE_MARKER[node.state]}</span> <code>{node.id}</code>
        </h3>
        <button type="button" aria-label="Close node details (Esc)" onClick={() => selectTraceNode(null)}>
          ✕
        </button>
      </header>
      <p className="row wrap">
        <span>{node.ran ? STATE_TEXT[node.state] : 'not run'}</span>
        <span className="muted">
          {node.kind}
          {node.role ? ` · role ${node.role}` : ''}
        </span>
        {blame && (
          <span className={`badge${node.blamed ? ' blamed' : ''}`} data-testid="blame-badge">
            ⚑ {blame}
          </span>
        )}
        {cut && (
          <span className="tag tone-warn" data-testid="cut-marker" title="The model call stopped at max_tokens: the output may be incomplete">
            cut at max_tokens
          </span>
        )}
        {repair && (
          <span className="tag tone-warn" data-testid="repair-marker" title="The reply was not JSON as a whole; the valid JSON value inside it was taken (strict_output refuses this)">
            repaired: JSON from {repair === 'fenced' ? 'a fenced block' : 'prose'}
          </span>
        )}
        {event?.simulated && (
          <span className="tag sim" data-testid="simulated-marker">
            SIMULATED {event.fault ?? 'fault'}
          </span>
        )}
      </p>
      {event && selectedRunId && <ForkFromHere runId={selectedRunId} event={event} canEditPrompt={node.kind === 'agent' && node.origin !== 'designed'} {...(node.role ? { role: node.role } : {})} />}
      {node.candidates?.length ? <p className="small">Ambiguous: could be {node.candidates.join(' or ')}; blamed on no role.</p> : null}
      {!event && <p className="muted">This node did not run in this task (never reached, or an upstream branch was not taken).</p>}
      {attempts.length > 1 && (
        <div className="attempts row wrap" role="group" aria-label="Attempts">
          <span className="muted small">Attempts:</span>
          {attempts.map((a) => (
            <button type="button" key={`${a.attempt}:${a.seq}`} aria-pressed={a === event} data-testid={`attempt-${a.attempt}`} onClick={() => selectTraceNode(nodeId, a.attempt)}>
              #{a.attempt} {nodeStatusLabel(a.status).symbol}
            </button>
          ))}
        </div>
      )}
      {event && (
        <dl className="facts">
          <dt>Status</dt>
          <dd>
            <Status label={nodeStatusLabel(event.status)} /> {failureClassLabel(event.failureClass)}
          </dd>
          {(event.errorCode || event.message) && (
            <>
              <dt>Error</dt>
              <dd className="tone-bad" data-testid="node-error">
                {eventError(event)}
              </dd>
            </>
          )}
          {event.causes?.length ? (
            <>
              <dt>Caused by</dt>
              <dd>{event.causes.join(', ')}</dd>
            </>
          ) : null}
          <dt>Authors</dt>
          <dd>
            wired by {event.wiredBy}
            {event.runBy ? ` · run by ${event.runBy}` : ''}
          </dd>
          <dt>Timing</dt>
          <dd>
            {duration(event.endedAt - event.startedAt)} · attempt {event.attempt} · seq {event.seq}
          </dd>
          <dt>Tokens</dt>
          <dd>
            {event.calls.length ? `${tokens.prompt} prompt + ${tokens.completion} completion in ${event.calls.length} call${event.calls.length === 1 ? '' : 's'}` : 'no model call'}
          </dd>
        </dl>
      )}
      {event && (
        <>
          <h4>Inputs</h4>
          <pre className="value" data-testid="node-inputs">{showValue(event.inputs)}</pre>
          <h4>Output</h4>
          {event.output === undefined ? <p className="muted small">no output</p> : <pre className="value" data-testid="node-output">{showValue(event.output)}</pre>}
          {event.calls.map((c) => (
            <details key={c.callIndex} open={event.calls.length === 1} className="call">
              <summary>
                Model call {c.callIndex + 1}: {c.model} · {c.promptTokens}+{c.completionTokens} tokens · {duration(c.ms)}
                {c.error ? ' · error' : ''}
              </summary>
              {c.system && (
                <>
                  <h5>System</h5>
                  <pre className="value">{c.system}</pre>
                </>
              )}
              <h5>Prompt</h5>
              <pre className="value" data-testid="node-prompt">{c.prompt}</pre>
              {c.thinking !== undefined && (
                <>
                  <h5>Thinking (kept apart; never checked or graded)</h5>
                  <pre className="value muted" data-testid="node-thinking">{c.thinking}</pre>
                </>
              )}
              <h5>Completion</h5>
              <pre className="value" data-testid="node-completion">{c.completion}</pre>
              <p className="muted small">
                role {c.role} · model {c.modelRef} ({c.model}) · seed {c.seed}
                {c.stopReason ? ` · stop ${c.stopReason}` : ''}
                {c.params.temperature !== undefined ? ` · temperature ${c.params.temperature}` : ''}
              </p>
              {c.error && <p className="tone-bad small">{c.error}</p>}
            </details>
          ))}
        </>
      )}
    </aside>
  );
}
