import { useEffect, useState } from 'react';
import type { DesignDiff, EvolutionTimeline, TaskTimeline } from '../../core/api/client.ts';
import { useLab, useLabPick } from '../useLab.ts';
import { modelsLabel, modelsUnder } from '../lib/vocabulary.ts';
import { MassOuterPanel } from './MassOuterPanel.tsx';
import { MassStartPanel } from './MassStartPanel.tsx';
import { LoadState, RefreshButton } from './Status.tsx';

/** The command that makes an evolution (shown when there is none). */
export const EVOLVE_COMMAND = 'flowlab evolve learn-tool --model ../shared/models/stories260K.gguf --threads 1';

/**
 * MASS: the stored evolutions (inner loops), the chosen one's champion timeline per task — each
 * iteration's version or rejected proposal, its external score, every verdict with the side the
 * candidate was shown on, the self-judge's rationale and whether the candidate won, the champion
 * after it — and the diff between any two design versions; then the outer loops (MassOuterPanel.tsx).
 */
export function MassView() {
  const { evolutions, evolution, designDiff, massDiffPick, loadMass, selectEvolution, loadDesignDiff } = useLabPick(
    'evolutions', 'evolution', 'designDiff', 'massDiffPick', 'loadMass', 'selectEvolution', 'loadDesignDiff',
  );
  useEffect(() => {
    void loadMass();
  }, [loadMass]);
  const list = evolutions.status === 'ready' ? evolutions.data : [];
  const experiments = useLab((s) => s.experiments);
  const modelsOf = (id: string) => modelsLabel(modelsUnder(id, experiments.status === 'ready' ? experiments.data : []));
  const shown = evolution.status === 'ready' ? evolution.data : undefined;

  return (
    <section className="view mass-view" aria-labelledby="mass-title">
      <header className="view-head">
        <h2 id="mass-title">MASS</h2>
        <p className="muted small">Inner loops: the same model runs a text workflow, judges it against the bare task (or the champion), and proposes the next one.</p>
        <RefreshButton onRefresh={loadMass} title="Refresh" />
      </header>
      <MassStartPanel />
      <LoadState state={evolutions} what="evolutions" />
      {evolutions.status === 'ready' && list.length === 0 && (
        <div className="empty" data-testid="mass-empty">
          <p>
            <strong>No evolution yet.</strong> Start one above, or from a terminal:
          </p>
          <pre>
            <code>{EVOLVE_COMMAND}</code>
          </pre>
        </div>
      )}
      {list.length > 0 && (
        <label className="mass-pick">
          Evolution{' '}
          <select data-testid="mass-evolution" value={shown?.evolutionId ?? ''} onChange={(e) => void selectEvolution(e.target.value)}>
            {list.map((x) => (
              <option key={x.evolutionId} value={x.evolutionId}>
                {x.evolutionId} — {x.dataset}, models {modelsOf(x.evolutionId)}, rule {x.rule}, {x.iterations} it, champion {x.champions.map((c) => (c === undefined ? '…' : c === null ? 'none' : `v${c}`)).join(', ')}
              </option>
            ))}
          </select>
        </label>
      )}
      {shown && (
        <p className="muted small" data-testid="mass-models">
          models {modelsOf(shown.evolutionId)}
        </p>
      )}
      <LoadState state={evolution} what="the timeline" />
      {shown && shown.tasks.map((t) => <TaskBlock key={t.taskIndex} evo={shown} task={t} diff={massDiffPick?.taskIndex === t.taskIndex ? designDiff : undefined} onDiff={(a, b) => void loadDesignDiff(t.taskIndex, a, b)} />)}
      <MassOuterPanel />
    </section>
  );
}

function TaskBlock({ evo, task, diff, onDiff }: { evo: EvolutionTimeline; task: TaskTimeline; diff?: { status: string; data?: DesignDiff; message?: string; code?: string }; onDiff: (a: number, b: number) => void }) {
  const versions = task.designs.map((d) => d.version);
  const [a, setA] = useState(0);
  const [b, setB] = useState(versions.at(-1) ?? 0);
  return (
    <article className="mass-task" data-testid={`mass-task-${task.taskIndex}`}>
      <h3>
        Task {task.taskIndex} <code>{task.taskId}</code>: champion {task.champion === null ? 'none' : `v${task.champion}`}
        {task.baselineScore !== null && <span className="muted small"> · bare-task baseline external score {task.baselineScore.toFixed(2)}</span>}
      </h3>
      <table className="mass-timeline" data-testid={`mass-timeline-${task.taskIndex}`}>
        <thead>
          <tr>
            <th scope="col">it</th>
            <th scope="col">version</th>
            <th scope="col">external score</th>
            <th scope="col">verdicts ({evo.rule === 'baseline' ? 'vs baseline, then arbitration' : 'vs champion'})</th>
            <th scope="col">champion</th>
          </tr>
        </thead>
        <tbody>
          {task.iterations.map((it) => (
            <tr key={it.iteration} className={it.championChanged ? 'mass-new-champion' : undefined}>
              <td>{it.iteration}</td>
              <td>{it.version === null ? <span className="mass-rejected">rejected</span> : `v${it.version}`}</td>
              <td>{it.score === undefined ? '–' : it.score.toFixed(2)}</td>
              <td>
                {it.version === null ? (
                  <span className="small">{(it.rejected ?? []).join('; ')}</span>
                ) : (
                  it.verdicts.map((v) => (
                    <div key={v.kind} className="small">
                      vs {v.against}: {v.valid ? v.winner : 'no valid verdict'} (candidate shown as {v.candidateSide}) → <strong>{v.candidateWon ? 'candidate wins' : 'candidate does not win'}</strong>
                      {v.rationale && <span className="muted"> “{v.rationale}”</span>}
                    </div>
                  ))
                )}
              </td>
              <td>
                {it.champion === null ? 'none' : `v${it.champion}`}
                {it.championChanged && <span aria-label="new champion"> ★</span>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {versions.length > 1 && (
        <div className="mass-diff-pick">
          Design diff from{' '}
          <select aria-label="from version" value={a} onChange={(e) => setA(Number(e.target.value))}>
            {versions.map((v) => <option key={v} value={v}>v{v}</option>)}
          </select>{' '}
          to{' '}
          <select aria-label="to version" value={b} onChange={(e) => setB(Number(e.target.value))}>
            {versions.map((v) => <option key={v} value={v}>v{v}</option>)}
          </select>{' '}
          <button type="button" onClick={() => onDiff(a, b)}>Show diff</button>
        </div>
      )}
      {diff && <LoadState state={diff} what="the design diff" />}
      {diff?.status === 'ready' && diff.data && <DiffBlock diff={diff.data} />}
      <details>
        <summary>Designs ({task.designs.length})</summary>
        {task.designs.map((d) => (
          <div key={d.version}>
            <h4>
              v{d.version} <span className="muted small">{d.source === 'first' ? 'first design' : `from v${d.parent}, iteration ${d.iteration}`}</span>
            </h4>
            <pre className="mass-design">{d.text}</pre>
          </div>
        ))}
      </details>
    </article>
  );
}

function DiffBlock({ diff }: { diff: DesignDiff }) {
  if (diff.identical) return <p className="note" data-testid="mass-diff">The designs are identical.</p>;
  return (
    <div data-testid="mass-diff">
      {(diff.agents.added.length > 0 || diff.agents.removed.length > 0) && (
        <p className="small">
          {diff.agents.added.length > 0 && <>Added: {diff.agents.added.join(', ')}. </>}
          {diff.agents.removed.length > 0 && <>Removed: {diff.agents.removed.join(', ')}.</>}
        </p>
      )}
      {diff.agents.changed.length > 0 && (
        <ul className="small">
          {diff.agents.changed.map((c) => (
            <li key={`${c.agent_id}.${c.field}`}>
              {c.agent_id} {c.field}: “{c.from}” → “{c.to}”
            </li>
          ))}
        </ul>
      )}
      <pre className="mass-diff-lines">
        {diff.lines.map((l, i) => (
          <span key={i} className={l.op === '+' ? 'diff-add' : l.op === '-' ? 'diff-del' : undefined}>
            {l.op} {l.text}
            {'\n'}
          </span>
        ))}
      </pre>
    </div>
  );
}
