import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { countOf } from '../lib/messages.ts';
import { traceElements } from '../lib/elements.ts';
import { graphOf } from '../lib/graphEdits.ts';
import { authorBadges, blameRoleLabel, blameText, buildTraceModel, listOrder, STATE_MARKER, STATE_TEXT, type TraceModel, type TraceNode } from '../lib/traceModel.ts';
import { useLabPick } from '../useLab.ts';
import { useShortcut } from '../useShortcut.ts';
import { failureClassLabel, runStatusLabel } from './format.ts';
import { GraphCanvas } from './lazy.tsx';
import { LARGE_GRAPH } from '../lib/graphStyle.ts';
import { DesignPanel } from './DesignPanel.tsx';
import { AuthorLegend, KindLegend, StateLegend } from './Legend.tsx';
import { AnnotationsPanel } from './AnnotationsPanel.tsx';
import { NodeDetail } from './NodeDetail.tsx';
import { RunPicker } from './RunPicker.tsx';
import { DiffPicker, RunDiffPanel } from './RunDiffPanel.tsx';
import { RunForks } from './ForkPanel.tsx';
import { LoadState, Status } from './Status.tsx';
import { ExperimentContextLine, useExperimentWords } from './ExperimentWords.tsx';
import { runTaskLabel } from '../lib/vocabulary.ts';
import { TableHead } from './TableHead.tsx';
import { visibleRows } from '../lib/runsTable.ts';
import { revealScrollTop } from '../lib/windowedList.ts';
import './traceView.css';

/**
 * A run's trace: the graph with blame, an accessible node list, the node panel, the blame summary;
 * for a designed run also each node's authors and the design with its validation messages; "Diff
 * with…" puts the run side by side with another, aligned by node (RunDiffPanel.tsx).
 */
export function TraceView() {
  const { experiments, setView } = useLabPick('experiments', 'setView');
  const noExperiments = experiments.status === 'ready' && experiments.data.length === 0;
  return (
    <section className="view trace-view" aria-labelledby="trace-title">
      <header className="view-head">
        <h2 id="trace-title">Trace</h2>
      </header>
      {noExperiments ? (
        <div className="empty" data-testid="trace-empty">
          <p>
            <strong>No experiments yet.</strong> Start one in{' '}
            <button type="button" className="link" onClick={() => setView('run')}>
              Run (Alt+2)
            </button>
            , then come back to read each run's trace and blame.
          </p>
        </div>
      ) : (
        <div className="trace-grid">
          <RunPicker />
          <TraceBody />
        </div>
      )}
    </section>
  );
}

function TraceBody() {
  const { selectedRunId: runId, trace, experiment, theme, traceNode, selectTraceNode, setView, diffPair } = useLabPick(
    'selectedRunId', 'trace', 'experiment', 'theme', 'traceNode', 'selectTraceNode', 'setView', 'diffPair',
  );

  const yaml = experiment.status === 'ready' ? experiment.data.workflowYaml : null;
  // The graph the run ran (the host compiled it, a design spliced in); else the outline of the workflow text.
  const ran = trace.status === 'ready' ? trace.data.graph : undefined;
  // Parsed only when the trace is in and carries no graph: parsing a 2,000-node workflow's text
  // took 0.3 s of one task, and it ran, unused, as soon as the experiment was picked.
  const fallbackText = trace.status === 'ready' && !ran ? yaml : null;
  const graph = useMemo(() => ran ?? (fallbackText ? graphOf(fallbackText) : null), [ran, fallbackText]);
  const [issue, setIssue] = useState<{ runId: string; index: number } | null>(null);
  const [reveal, setReveal] = useState<Reveal | null>(null);
  const experimentWords = useExperimentWords();
  const built = useMemo(() => {
    if (trace.status !== 'ready') return null;
    const t0 = performance.now();
    const model = buildTraceModel(graph, trace.data.run, trace.data.events);
    const elements = traceElements(model);
    return { model, elements, prepMs: performance.now() - t0, ordered: listOrder(model.nodes) };
  }, [trace, graph]);

  // A large graph's canvas is created after the view's first frame: creating cytoscape (its
  // stylesheet, canvases) in the task that builds the view made that task 30-40 ms longer.
  const graphShown = useAfterPaint(built) || !built || built.elements.length <= LARGE_GRAPH;

  useShortcut('nextNode', ({ delta }) => {
    if (!built?.ordered.length) return;
    const i = built.ordered.findIndex((n) => n.id === traceNode);
    const next = built.ordered[Math.min(built.ordered.length - 1, Math.max(0, i < 0 ? 0 : i + delta))];
    if (next) {
      selectTraceNode(next.id);
      setReveal({ id: next.id });
    }
  });

  if (!runId) {
    return (
      <div className="empty">
        <p>Choose an experiment and one of its runs on the left to see its graph, blame and node details.</p>
      </div>
    );
  }
  if (trace.status !== 'ready' || !built) return <LoadState state={trace} what="the run's trace" />;
  const { run, design } = trace.data;
  const { model } = built;
  const drawn = new Set(model.nodes.map((n) => n.id));
  const selectedIssue = issue?.runId === runId ? issue.index : null;
  const detail = traceNode && <NodeDetail model={model} />;
  const words = experimentWords;

  return (
    <div className="trace-body">
      <div className="row wrap trace-summary">
        <strong data-testid="trace-task">
          Task {runTaskLabel(run.taskIndex, words.group)} <code>{run.taskId}</code>
        </strong>
        <Status label={runStatusLabel(run.status)} />
        <span className={run.correct ? 'tone-ok' : 'tone-bad'} data-testid="trace-grade">{run.correct ? '✓ correct' : '✗ wrong'}</span>
        <span className="muted">
          answer {run.answer ?? 'none'}
          {run.expected !== undefined ? ` · expected ${run.expected}` : ''}
        </span>
        {run.simulated && <span className="tag sim">SIMULATED faults in this run</span>}
        <button type="button" className="link" data-testid="trace-to-ladder" onClick={() => setView('ladder')}>
          Reward ladder →
        </button>
        <DiffPicker run={run} />
        <RunForks run={run} />
      </div>
      <ExperimentContextLine context={words.context} testId="trace-experiment" />
      {model.silent && (
        <p className="banner warn" data-testid="silent-banner" role="note">
          <strong>Silent failure.</strong> No node failed, yet the answer is wrong. Structure cannot see this: no role is blamed, and only the correctness rung of the
          ladder carries it. The answer node is marked “?”.
        </p>
      )}
      {!run.credit && <p className="note small">This run has no structural credit recorded; failed nodes are shown as roots without blame.</p>}
      {trace.data.graphProblem && <p className="note small" data-testid="graph-problem">{trace.data.graphProblem}; the graph is drawn from the workflow text.</p>}
      {trace.data.designProblem && <p className="banner warn small" data-testid="design-problem">{trace.data.designProblem}</p>}
      {design && !design.usable && (
        <p className="banner bad" role="note" data-testid="design-banner">
          <strong>✗ The design cannot run:</strong> {design.problem ?? 'no node of it could run'}. The design node <code>{design.nodeId}</code> failed and no designed node
          ran; blamed on the designer ({design.designer}).
        </p>
      )}
      {diffPair?.a === runId ? (
        <RunDiffPanel runId={runId} />
      ) : (
        <>
          <div className={`trace-main${design ? ' with-design' : ''}`}>
            <div className="trace-graph">
              {graphShown ? (
                <GraphCanvas
                  elements={built.elements}
                  theme={theme}
                  label={`Trace graph of task ${runTaskLabel(run.taskIndex, words.group)}: ${countOf(model.nodes.length, 'node')}`}
                  selected={traceNode}
                  onSelectNode={(id) => selectTraceNode(id)}
                  prepMs={built.prepMs}
                />
              ) : (
                <div className="graph" role="status" aria-label="Drawing the graph…" />
              )}
              <StateLegend theme={theme} />
              <KindLegend />
              {model.design && <AuthorLegend designer={model.design.role} />}
            </div>
            {design ? (
              <div className="trace-side">
                <DesignPanel
                  design={design}
                  drawn={drawn}
                  selectedNode={traceNode}
                  selectedIssue={selectedIssue}
                  onSelectIssue={(index, nodeId) => {
                    setIssue(index === null ? null : { runId, index });
                    selectTraceNode(nodeId);
                  }}
                />
                {detail}
              </div>
            ) : (
              detail
            )}
          </div>
          <div className="trace-lower">
            <NodeList model={model} ordered={built.ordered} reveal={reveal} />
            <BlameSummary model={model} />
          </div>
          <AnnotationsPanel run={run} nodeId={traceNode} />
        </>
      )}
    </div>
  );
}

/**
 * The node list: every row for a small trace; above WINDOWED_FROM nodes a windowed table, only the
 * rows in view (and OVERSCAN each side) in the DOM between two spacers, rows NODE_ROW_HEIGHT px
 * high. The 2,000-node trace's list as a whole table cost 0.2-0.35 s in one commit, and grown 250
 * rows a frame still 50-130 ms of style and layout a frame. `reveal` (J / K) scrolls the list to
 * the selected row and the row into the page's view.
 */
function NodeList({ model, ordered, reveal }: { model: TraceModel; ordered: TraceModel['nodes']; reveal: Reveal | null }) {
  const { traceNode, selectTraceNode } = useLabPick('traceNode', 'selectTraceNode');
  const windowed = ordered.length > WINDOWED_FROM;
  const box = useRef<HTMLDivElement>(null);
  const [view, setView] = useState({ top: 0, height: DEFAULT_LIST_HEIGHT });
  const frame = useRef<number | undefined>(undefined);
  // The scroll position is read once a frame, however many scroll events arrive.
  const onScroll = () => {
    if (!windowed || frame.current !== undefined) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = undefined;
      const el = box.current;
      if (el) setView({ top: el.scrollTop, height: el.clientHeight || DEFAULT_LIST_HEIGHT });
    });
  };
  useEffect(() => () => (frame.current === undefined ? undefined : cancelAnimationFrame(frame.current)), []);
  // Another run's list starts at its top.
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    el.scrollTop = 0;
    const height = el.clientHeight || DEFAULT_LIST_HEIGHT;
    setView((v) => (v.top === 0 && v.height === height ? v : { top: 0, height }));
  }, [ordered]);
  // J / K: the selected row into the list's view (a windowed list renders it then), then into the page's.
  const revealed = useRef<Reveal | null>(null);
  const tried = useRef<Reveal | null>(null);
  useLayoutEffect(() => {
    const el = box.current;
    if (!reveal || revealed.current === reveal || !el) return;
    const row = el.querySelector(`[data-testid="trace-row-${CSS.escape(reveal.id)}"]`);
    if (windowed) {
      const index = ordered.findIndex((n) => n.id === reveal.id);
      const top = index < 0 ? el.scrollTop : revealScrollTop(el.scrollTop, el.clientHeight, el.querySelector('thead')?.offsetHeight ?? 0, NODE_ROW_HEIGHT, index);
      if (top !== el.scrollTop) el.scrollTop = top;
      if (!row && index >= 0 && tried.current !== reveal) {
        tried.current = reveal; // once: a box that cannot scroll there must not loop
        setView({ top: el.scrollTop, height: el.clientHeight || DEFAULT_LIST_HEIGHT });
        return; // rendered by the next commit, found by this effect then
      }
    }
    revealed.current = reveal;
    row?.scrollIntoView({ block: 'nearest' });
  });

  const { first, last } = windowed ? visibleRows(view.top, view.height, NODE_ROW_HEIGHT, ordered.length, OVERSCAN) : { first: 0, last: ordered.length - 1 };
  const rows = [];
  for (let i = first; i <= last; i++) {
    const n = ordered[i]!;
    rows.push(<NodeRow key={n.id} node={n} model={model} index={windowed ? i : undefined} selected={n.id === traceNode} onSelect={selectTraceNode} />);
  }
  return (
    <section aria-labelledby="trace-nodes-title" className="trace-nodes">
      <h3 id="trace-nodes-title">Nodes ({model.nodes.length}) — J / K to step</h3>
      <div className="scroll" ref={box} onScroll={onScroll} data-testid="trace-nodes-scroll">
        <table className={windowed ? 'windowed' : undefined} aria-rowcount={windowed ? ordered.length + 1 : undefined} data-testid="trace-nodes-table" data-windowed={windowed}>
          {windowed && (
            <colgroup>
              {LIST_COLUMNS.map((c) => <col key={c.name} style={{ width: c.width }} />)}
            </colgroup>
          )}
          <TableHead columns={LIST_COLUMNS.map((c) => c.name)} />
          <tbody>
            {first > 0 && <tr style={{ height: first * NODE_ROW_HEIGHT }} aria-hidden="true" />}
            {rows}
            {last < ordered.length - 1 && <tr style={{ height: (ordered.length - 1 - last) * NODE_ROW_HEIGHT }} aria-hidden="true" />}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** One row of the node list; `index` (0-based) in a windowed list, for aria-rowindex and its fixed height. */
function NodeRow({ node: n, model, index, selected, onSelect }: { node: TraceNode; model: TraceModel; index?: number; selected: boolean; onSelect(id: string | null): void }) {
  const blame = blameText(n);
  const windowed = index !== undefined;
  return (
    <tr className={`${selected ? 'selected ' : ''}row-st-${n.state}`} aria-rowindex={windowed ? index + 2 : undefined} style={windowed ? { height: NODE_ROW_HEIGHT } : undefined}>
      <td className="nowrap">
        <span aria-hidden="true" className={`marker st-${n.state}`}>
          {STATE_MARKER[n.state]}
        </span>{' '}
        {n.ran ? STATE_TEXT[n.state] : 'not run'}
      </td>
      <td>
        <button type="button" className="link" data-testid={`trace-row-${n.id}`} aria-pressed={selected} onClick={() => onSelect(selected ? null : n.id)}>
          {n.id}
        </button>{' '}
        <span className="muted small">{n.kind}</span>
        {n.attempts > 1 && <span className="muted small"> · {n.attempts} attempts</span>}
        {n.simulated && <span className="tag sim">SIMULATED{n.fault ? ` ${n.fault}` : ''}</span>}
        {authorBadges(n, model.design).map((b) => (
          <span key={b.kind} className={`author author-${b.kind}`} data-testid={`author-${b.kind}-${n.id}`}>
            {b.text}
          </span>
        ))}
      </td>
      <td className="role">{n.role ?? <span className="muted">–</span>}</td>
      <td className="small">
        {n.errorCode ? <code>{n.errorCode}</code> : null} {failureClassLabel(n.failureClass)}
        {n.state === 'cascade' && n.roots?.length ? <span className="muted"> from {n.roots.join(', ')}</span> : null}
      </td>
      <td>{blame && <span className={`badge${n.blamed ? ' blamed' : ''}`} data-testid="blame-badge">⚑ {blame}</span>}</td>
    </tr>
  );
}

/** A J / K step's request to bring the selected row into view (a new object per step). */
interface Reveal {
  id: string;
}

/** Above this many nodes the list is windowed (a whole table of 200 rows commits in about 20 ms). */
const WINDOWED_FROM = 200;
/** Height (px) of a windowed list's row; traceView.css keeps every row's content on one line within it. */
const NODE_ROW_HEIGHT = 28;
/** Rows rendered beyond each edge of the view. */
const OVERSCAN = 10;
/** The list's box height (px) before it is measured: `.scroll`'s max-height, 28rem. */
const DEFAULT_LIST_HEIGHT = 448;
/** The list's columns and, for the windowed table (fixed layout), their widths. */
const LIST_COLUMNS = [
  { name: 'State', width: '8rem' },
  { name: 'Node', width: '32%' },
  { name: 'Role', width: '8rem' },
  { name: 'Failure', width: '30%' },
  { name: 'Blame', width: '9rem' },
] as const;

/** False until two animation frames after `key` changed (the view's first frame is drawn by then). */
function useAfterPaint(key: unknown): boolean {
  const [paintedKey, setPaintedKey] = useState<unknown>(null);
  useEffect(() => {
    let second = 0;
    const first = requestAnimationFrame(() => {
      second = requestAnimationFrame(() => setPaintedKey(() => key));
    });
    return () => {
      cancelAnimationFrame(first);
      cancelAnimationFrame(second);
    };
  }, [key]);
  return paintedKey === key;
}

function BlameSummary({ model }: { model: TraceModel }) {
  return (
    <section aria-labelledby="blame-title" className="blame-summary" data-testid="blame-summary">
      <h3 id="blame-title">Blame per role</h3>
      {model.blame.length === 0 ? (
        <p className="muted small">No structural credit recorded for this run.</p>
      ) : (
        <table>
          <TableHead
            columns={[
              'Role',
              { label: 'Root failures', num: true, title: '|F_ρ|: root failures blamed on the role' },
              { label: 'Nodes authored', num: true, title: '|V_ρ|: nodes the role wired or ran' },
              { label: <>c<sub>ρ</sub></>, num: true, title: 'c_ρ = −|F_ρ| / |V_ρ|' },
            ]}
          />
          <tbody>
            {model.blame.map((b) => (
              <tr key={b.role} data-testid={`blame-role-${b.role}`}>
                <td>
                  {blameRoleLabel(b.role).name}
                  {blameRoleLabel(b.role).note && <div className="muted small">{blameRoleLabel(b.role).note}</div>}
                </td>
                <td className="num">
                  {b.rootFailures.length}
                  {b.rootFailures.length ? <span className="muted small"> ({b.rootFailures.join(', ')})</span> : null}
                </td>
                <td className="num">{b.authored}</td>
                <td className={`num ${b.credit < 0 ? 'tone-bad' : ''}`}>{b.credit < 0 && b.credit > -0.005 ? b.credit.toFixed(4) : b.credit.toFixed(2)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {model.ambiguous.length > 0 && (
        <>
          <h4>Ambiguous blame (counted against no role)</h4>
          <ul data-testid="ambiguous">
            {model.ambiguous.map((a) => (
              <li key={a.nodeId}>
                <code>{a.nodeId}</code>: {a.candidates.join(' | ')} <span className="muted small">— {a.reason}</span>
              </li>
            ))}
          </ul>
        </>
      )}
      {model.infrastructure.length > 0 && (
        <p className="small">
          Harness faults (blamed on no role): {model.infrastructure.map((id) => <code key={id}>{id} </code>)}
        </p>
      )}
      <p className="muted small">
        Structural credit sees failed nodes only. A node that ran cleanly but was wrong is invisible to it; only the correctness rung carries that.
      </p>
    </section>
  );
}
