import { useEffect, useState } from 'react';
import type { ForkSummary, NodeEvent, RunRecord } from '../../core/api/client.ts';
import { useLabPick } from '../useLab.ts';
import { ModelSelect } from './RoleModels.tsx';

/**
 * "Fork from here" on a node run of the trace (docs/fork.md): replace its output (or its prompt)
 * and re-run the run from it — everything upstream from the recording, the node and what depends
 * on it live — then see the fork beside its parent in the diff, the first divergence highlighted.
 */
export function ForkFromHere({ runId, event, canEditPrompt, role }: { runId: string; event: NodeEvent; canEditPrompt: boolean; role?: string }) {
  const { forking, forkFromHere, clearFork, loadModels } = useLabPick('forking', 'forkFromHere', 'clearFork', 'loadModels');
  const [open, setOpen] = useState(false);
  const [what, setWhat] = useState<'output' | 'prompt' | 'model'>('output');
  const [model, setModel] = useState<string | null>(null);
  const recorded = what === 'output' ? (event.calls.at(-1)?.completion ?? (event.output === undefined ? '' : JSON.stringify(event.output))) : '';
  const [text, setText] = useState(recorded);
  useEffect(() => setText(recorded), [recorded, event.nodeId, event.attempt]);
  if (event.status !== 'ok' && event.status !== 'failed') return null;
  if (!open) {
    return (
      <button type="button" data-testid="fork-open" onClick={() => { clearFork(); setOpen(true); void loadModels(); }}>
        ⑂ Fork from here
      </button>
    );
  }
  const busy = forking?.status === 'loading';
  return (
    <form
      className="fork-form"
      data-testid="fork-form"
      onSubmit={(e) => {
        e.preventDefault();
        const change = what === 'output' ? { output: text } : what === 'prompt' ? { prompt: text } : { roleModel: { role: role!, path: model! } };
        void forkFromHere({ runId, nodeId: event.nodeId, attempt: event.attempt, ...change });
      }}
    >
      <h4>
        Fork from <code>{event.nodeId}#{event.attempt}</code>
      </h4>
      <p className="muted small">Upstream is served from the recording (no model); this node and everything after it run live on the run's models. The parent is not changed.</p>
      <label className="row">
        <span className="small">Replace its</span>
        <select data-testid="fork-what" value={what} onChange={(e) => setWhat(e.target.value as 'output' | 'prompt' | 'model')}>
          <option value="output">output</option>
          {canEditPrompt && <option value="prompt">prompt template</option>}
          {role && <option value="model">model of role {role}</option>}
        </select>
      </label>
      {what === 'model' ? (
        <ModelSelect value={model} onChange={setModel} noneLabel="— choose a model —" testId="fork-model" label={`Model of role ${role ?? ''} from this node on`} />
      ) : (
        <textarea data-testid="fork-text" rows={4} value={text} onChange={(e) => setText(e.target.value)} aria-label={`New ${what} of ${event.nodeId}`} />
      )}
      <div className="row">
        <button type="submit" data-testid="fork-run" disabled={busy || (what === 'prompt' && !text.trim()) || (what === 'model' && !model)}>
          {busy ? 'Forking…' : 'Run the fork'}
        </button>
        <button type="button" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
      {forking?.status === 'error' && (
        <p className="tone-bad small" data-testid="fork-error" role="alert">
          {forking.message}
        </p>
      )}
      {forking?.status === 'ready' && (
        <p className="small" data-testid="fork-result">
          Fork <code>{forking.data.runId}</code>: {forking.data.correct ? '✓ correct' : '✗ wrong'} · {sum(forking.data.recorded)} call(s) from the recording, {sum(forking.data.live)} live
        </p>
      )}
    </form>
  );
}

const sum = (m: Record<string, number>) => Object.values(m).reduce((a, b) => a + b, 0);

/** The trace's run's place among forks: its parent (when it is a fork) and its own forks, each opening the diff. */
export function RunForks({ run }: { run: RunRecord }) {
  const { runForks, loadForks, openDiff } = useLabPick('runForks', 'loadForks', 'openDiff');
  useEffect(() => void loadForks(run.runId), [run.runId, loadForks]);
  if (runForks.status !== 'ready' || runForks.runId !== run.runId) return null;
  const { parent, forks } = runForks.data;
  if (!parent && !forks.length) return null;
  const item = (f: ForkSummary, a: string, b: string, label: string) => (
    <li key={f.runId}>
      <button type="button" className="link" data-testid={`fork-item-${f.runId}`} onClick={() => void openDiff(a, b)}>
        {label}
      </button>{' '}
      <span className="muted small">
        at {f.nodeId}#{f.attempt} ({f.intervention}) · {f.correct ? '✓' : '✗'}
      </span>
    </li>
  );
  return (
    <div className="run-forks small" data-testid="run-forks">
      {parent && <ul className="plain">{item(parent, parent.parentRunId, run.runId, `⑂ fork of ${parent.parentRunId}`)}</ul>}
      {forks.length > 0 && (
        <>
          <span className="muted">Forks of this run ({forks.length}):</span>
          <ul className="plain">{forks.map((f) => item(f, run.runId, f.runId, f.runId))}</ul>
        </>
      )}
    </div>
  );
}
