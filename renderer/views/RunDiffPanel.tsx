import type { AlignedNode, Difference, Divergence, RunDiffSide, RunDiffView, RunRecord } from '../../core/api/client.ts';
import { ASPECT_LABEL, clipAround, diffCandidates, differsText, sideValue } from '../lib/runDiff.ts';
import { useLabPick } from '../useLab.ts';
import { LoadState } from './Status.tsx';
import { TableHead } from './TableHead.tsx';

/**
 * "Diff with…": picks a run to diff the trace's run with — its task in other experiments of the
 * same workflow first, then the other tasks of its experiment.
 */
export function DiffPicker({ run }: { run: RunRecord }) {
  const { experiments, runsByExperiment, runs, experiment, diffPair, openDiff } = useLabPick('experiments', 'runsByExperiment', 'runs', 'experiment', 'diffPair', 'openDiff');
  const workflow = experiment.status === 'ready' ? experiment.data.workflowName : undefined;
  const groups = diffCandidates(run, workflow, experiments.status === 'ready' ? experiments.data : [], runsByExperiment, runs.status === 'ready' ? runs.data : []);
  const value = diffPair?.a === run.runId ? diffPair.b : '';
  return (
    <label className="row diff-picker">
      <span className="muted small">Diff with…</span>
      <select data-testid="diff-with" value={value} disabled={!groups.length} onChange={(e) => e.target.value && void openDiff(run.runId, e.target.value)}>
        <option value="">{groups.length ? '— choose a run —' : 'no other run to diff with'}</option>
        {groups.map((g) => (
          <optgroup key={g.label} label={g.label}>
            {g.runs.map((c) => (
              <option key={c.runId} value={c.runId}>
                {c.label}
              </option>
            ))}
          </optgroup>
        ))}
      </select>
    </label>
  );
}

/** The diff of the trace's run (A) with the chosen run (B), from the store; null when none is open for `runId`. */
export function RunDiffPanel({ runId }: { runId: string }) {
  const { diffPair, runDiff, diffNode, closeDiff, selectDiffNode } = useLabPick('diffPair', 'runDiff', 'diffNode', 'closeDiff', 'selectDiffNode');
  if (diffPair?.a !== runId) return null;
  return (
    <section className="run-diff" data-testid="run-diff" aria-labelledby="run-diff-title">
      <header className="row wrap">
        <h3 id="run-diff-title">
          Diff: <code>{diffPair.a}</code> vs <code>{diffPair.b}</code>
        </h3>
        <button type="button" data-testid="diff-close" onClick={closeDiff}>
          ← Back to the trace
        </button>
      </header>
      {runDiff.status === 'ready' ? <RunDiffBody view={runDiff.data} selected={diffNode} onSelect={selectDiffNode} /> : <LoadState state={runDiff} what="the diff" />}
    </section>
  );
}

/**
 * Two runs side by side, aligned by node run (core/trace diffRuns' order: causal depth, then
 * topological rank, then attempt), the first divergence highlighted and named; a row opens every
 * difference of its node run.
 */
export function RunDiffBody({ view, selected, onSelect }: { view: RunDiffView; selected: number | null; onSelect: (index: number | null) => void }) {
  const { diff } = view;
  const open = selected ?? diff.first?.index ?? null;
  const node = open === null ? undefined : diff.nodes[open];
  return (
    <>
      <dl className="diff-runs">
        <SideLine name="A" side={view.a} />
        <SideLine name="B" side={view.b} />
      </dl>
      {view.notes.map((n) => (
        <p key={n} className="banner warn small" data-testid="diff-note">
          {n}
        </p>
      ))}
      {diff.first ? (
        <div className="banner diff-banner" data-testid="diff-first" role="note">
          <strong>First diverging node:</strong> <DivergenceText view={view} d={diff.first} />
          {!diff.firstBehaviour ? (
            <p className="small" data-testid="diff-behaviour">
              Behaviour: the same at every node run; only sampling settings differ{view.greedy ? ' (every call decoded greedily, temperature 0, so the seed changes nothing)' : ''}.
            </p>
          ) : diff.firstBehaviour.index !== diff.first.index || diff.firstBehaviour.difference.at !== diff.first.difference.at ? (
            <p className="small" data-testid="diff-behaviour">
              First behaviour divergence (settings aside): <DivergenceText view={view} d={diff.firstBehaviour} />
            </p>
          ) : null}
        </div>
      ) : (
        <p className="banner" data-testid="diff-none" role="note">
          <strong>No divergence:</strong> the {diff.counts.nodes} node runs are the same in inputs, prompts, sampling, sampled text, outputs and statuses.
        </p>
      )}
      <p className="muted small" data-testid="diff-counts">
        {diff.counts.nodes} node runs aligned: {diff.counts.differing} differ ({diff.counts.onlyA} only in A, {diff.counts.onlyB} only in B). Ordered by causal depth, then
        topological rank, then attempt.
      </p>
      <div className="diff-grid">
        <div className="scroll">
          <table data-testid="diff-table">
            <TableHead columns={['Node', 'A', 'B', 'Differs']} />
            <tbody>
              {diff.nodes.map((n, i) => (
                <DiffRow key={`${n.nodeId}#${n.attempt}`} n={n} index={i} first={i === diff.first?.index} selected={i === selected} onSelect={onSelect} />
              ))}
            </tbody>
          </table>
        </div>
        {node && <DiffDetail n={node} />}
      </div>
    </>
  );
}

function SideLine({ name, side }: { name: string; side: RunDiffSide }) {
  return (
    <>
      <dt>{name}</dt>
      <dd data-testid={`diff-run-${name.toLowerCase()}`}>
        <code>{side.runId}</code> · {side.workflowName} · task {side.taskIndex} <code>{side.taskId}</code> · seed {side.seed} · {side.status} · answer {side.answer ?? 'none'}{' '}
        <span className={side.correct ? 'tone-ok' : 'tone-bad'}>{side.correct ? '✓' : '✗'}</span>
      </dd>
    </>
  );
}

function DivergenceText({ view, d }: { view: RunDiffView; d: Divergence }) {
  const n = view.diff.nodes[d.index]!;
  return (
    <>
      <code>
        {d.nodeId}#{d.attempt}
      </code>{' '}
      <span className="muted">({n.kind}{n.role ? ` ${n.role}` : ''})</span> — {ASPECT_LABEL[d.aspect]}, <code>{d.difference.at}</code>
      <Values d={d.difference} />
    </>
  );
}

function Values({ d }: { d: Difference }) {
  return (
    <span className="diff-values">
      <span>
        A: <code>{clipAround(d.a, d.offset)}</code>
      </span>
      <span>
        B: <code>{clipAround(d.b, d.offset)}</code>
      </span>
    </span>
  );
}

function DiffRow({ n, index, first, selected, onSelect }: { n: AlignedNode; index: number; first: boolean; selected: boolean; onSelect: (i: number | null) => void }) {
  const cls = [first ? 'diff-first' : '', selected ? 'selected' : '', n.in !== 'both' ? 'diff-only' : n.differences.length ? 'diff-differs' : 'diff-same'].filter(Boolean).join(' ');
  const cell = (side: 'a' | 'b') => {
    const s = n[side];
    if (!s) return <span className="muted">— not run</span>;
    const v = sideValue(n, side);
    return (
      <>
        {s.status}
        {v && <code className="diff-value">{v}</code>}
      </>
    );
  };
  return (
    <tr className={cls} data-testid={`diff-row-${n.nodeId}-${n.attempt}`}>
      <td className="nowrap">
        {first && (
          <span className="marker" aria-label="first divergence">
            ▶{' '}
          </span>
        )}
        <button type="button" className="link" aria-pressed={selected} onClick={() => onSelect(index)}>
          {n.nodeId}#{n.attempt}
        </button>{' '}
        <span className="muted small">
          {n.kind}
          {n.role ? ` ${n.role}` : ''}
        </span>
      </td>
      <td>{cell('a')}</td>
      <td>{cell('b')}</td>
      <td className="small">{differsText(n)}</td>
    </tr>
  );
}

function DiffDetail({ n }: { n: AlignedNode }) {
  return (
    <section className="diff-detail" data-testid="diff-detail" aria-label={`Differences of ${n.nodeId}#${n.attempt}`}>
      <h4>
        {n.nodeId}#{n.attempt} <span className="muted small">{n.differences.length ? `${n.differences.length} difference${n.differences.length > 1 ? 's' : ''}, in data-flow order` : 'the same in both runs'}</span>
      </h4>
      <ol>
        {n.differences.map((d, i) => (
          <li key={i} data-testid={`diff-detail-${i}`}>
            <strong>{ASPECT_LABEL[d.aspect]}</strong> <code>{d.at}</code>
            {d.offset !== undefined && <span className="muted small"> (first difference at character {d.offset})</span>}
            <Values d={d} />
          </li>
        ))}
      </ol>
    </section>
  );
}
