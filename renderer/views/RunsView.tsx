/**
 * The Runs view (issue 29, "find any run"): every stored run, filtered and searched as
 * `flowlab ls` does (experiment, kind, workflow, dataset, model, status, grade, failure class,
 * blamed role, rollout group, dates, words in prompts / completions / outputs), sortable by
 * clicking a column, and virtualised: only the rows in the viewport (and a margin) are in the
 * page, fetched a page at a time, so a result of hundreds of thousands of runs scrolls without
 * freezing. A row (click or Enter) opens its trace.
 */
import { useEffect, useMemo, useRef, useState, type KeyboardEvent as ReactKeyboardEvent } from 'react';
import type { RunHit, RunSortKey, SearchField } from '../../core/api/client.ts';
import { FAILURE_CLASSES } from '../lib/experimentStats.ts';
import { experimentOptionLabel, taskLabel, visibleRows } from '../lib/runsTable.ts';
import { kindLabel } from '../lib/vocabulary.ts';
import { runAt, type RunsFilter } from '../store/runsTable.ts';
import { useLab, useLabPick } from '../useLab.ts';
import { timestamp } from './format.ts';
import './runsView.css';

/** Pixel height of one row (fixed, so the viewport maps to row indices). */
export const RUN_ROW_HEIGHT = 28;

/** The columns: label, the sort key clicking it sets (none: not sortable), numbers right-aligned. */
const COLUMNS: Array<{ label: string; sort?: RunSortKey; num?: boolean; width: string }> = [
  { label: 'experiment', sort: 'experiment', width: '15rem' },
  { label: 'task', sort: 'task', num: true, width: '4rem' },
  { label: 'status', width: '6rem' },
  { label: 'grade', sort: 'score', width: '6rem' },
  { label: 'answer', width: '8rem' },
  { label: 'failures', width: '8rem' },
  { label: 'blamed', width: '7rem' },
  { label: 'tags', width: '8rem' },
  { label: 'tokens', sort: 'tokens', num: true, width: '5rem' },
  { label: 'ms', sort: 'duration', num: true, width: '5rem' },
  { label: 'started', sort: 'started', width: '10rem' },
];

/** A date input's value (yyyy-mm-dd) as epoch ms at 00:00 UTC; `end` adds a day (so "until" includes that day). */
function dayMs(value: string, end = false): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
  const ms = Date.parse(`${value}T00:00:00Z`);
  return Number.isFinite(ms) ? ms + (end ? 86_400_000 : 0) : undefined;
}

/** The form's fields as text (what the inputs hold). */
interface Draft {
  experimentId: string;
  kind: string;
  workflow: string;
  dataset: string;
  model: string;
  status: string;
  grade: string;
  failureClass: string;
  blamed: string;
  group: string;
  tag: string;
  since: string;
  until: string;
  text: string;
  field: SearchField;
}

const EMPTY: Draft = { experimentId: '', kind: '', workflow: '', dataset: '', model: '', status: '', grade: '', failureClass: '', blamed: '', group: '', tag: '', since: '', until: '', text: '', field: 'any' };

/** The query a draft asks (empty fields left out), with the order kept. */
function filterOf(d: Draft, order: Pick<RunsFilter, 'sort' | 'order'>): RunsFilter {
  const t = (s: string) => s.trim() || undefined;
  const f: RunsFilter = { ...order };
  const set = <K extends keyof RunsFilter>(k: K, v: RunsFilter[K] | undefined) => {
    if (v !== undefined) f[k] = v;
  };
  set('experimentId', t(d.experimentId));
  set('kind', t(d.kind));
  set('workflow', t(d.workflow));
  set('dataset', t(d.dataset));
  set('model', t(d.model));
  set('status', (t(d.status) as RunsFilter['status']) ?? undefined);
  set('correct', d.grade === 'correct' ? true : d.grade === 'wrong' ? false : undefined);
  set('failureClass', (t(d.failureClass) as RunsFilter['failureClass']) ?? undefined);
  set('blamed', t(d.blamed));
  set('group', t(d.group));
  set('tag', t(d.tag));
  set('since', dayMs(d.since));
  set('until', dayMs(d.until, true));
  if (t(d.text)) {
    f.text = d.text.trim();
    f.field = d.field;
  }
  return f;
}

export function RunsView() {
  const { runsFilter, runsTotal, runsPages, runsError, experiments, setRunsFilter, loadRunRows, openRunTrace, refresh, annotationTags, loadAnnotationTags } = useLabPick(
    'runsFilter', 'runsTotal', 'runsPages', 'runsError', 'experiments', 'setRunsFilter', 'loadRunRows', 'openRunTrace', 'refresh', 'annotationTags', 'loadAnnotationTags',
  );
  const dbFile = useLab((s) => (s.appInfo.status === 'ready' ? s.appInfo.data.dbFile : null));
  const [draft, setDraft] = useState<Draft>(() => ({ ...EMPTY, experimentId: runsFilter.experimentId ?? '', text: runsFilter.text ?? '' }));
  const order = { sort: runsFilter.sort ?? 'started', order: runsFilter.order ?? (runsFilter.sort && runsFilter.sort !== 'started' ? 'asc' : 'desc') } as const;
  const apply = (d: Draft, o: Pick<RunsFilter, 'sort' | 'order'> = order) => void setRunsFilter(filterOf(d, o));
  // Typed fields apply 300 ms after the last key (Enter, the Search button or another filter's change apply at once).
  const typing = useRef<number | undefined>(undefined);
  const change = (patch: Partial<Draft>, now = true) => {
    const next = { ...draft, ...patch };
    setDraft(next);
    if (!now) return;
    // A typed field's pending timer would apply its older draft after this one (the change lost).
    window.clearTimeout(typing.current);
    apply(next);
  };
  const type = (patch: Partial<Draft>) => {
    change(patch, false);
    window.clearTimeout(typing.current);
    const next = { ...draft, ...patch };
    typing.current = window.setTimeout(() => apply(next), 300);
  };
  useEffect(() => () => window.clearTimeout(typing.current), []);

  // First visit: the experiments for the picker, and the first page.
  useEffect(() => {
    if (experiments.status !== 'ready') void refresh();
    void loadAnnotationTags();
    if (runsTotal === null) apply(draft);
  }, []);

  const sortBy = (key: RunSortKey) => {
    const o = order.sort === key ? { sort: key, order: order.order === 'asc' ? 'desc' : 'asc' } as const : { sort: key, order: key === 'started' ? 'desc' : 'asc' } as const;
    apply(draft, o);
  };

  const expList = experiments.status === 'ready' ? experiments.data : [];
  const pickerOptions = useMemo(() => expList.map((e) => ({ id: e.id, label: experimentOptionLabel(e) })), [experiments]);
  const kinds = useMemo(() => [...new Set(expList.map((e) => e.kind))].sort(), [experiments]);
  const datasets = useMemo(() => [...new Set(expList.map((e) => e.dataset))].sort(), [experiments]);

  return (
    <section className="view runs-view" aria-labelledby="runs-title">
      <header className="view-head">
        <h2 id="runs-title">Runs</h2>
        <p className="muted small">
          Every stored run, as <code>flowlab ls</code> finds them{dbFile ? ` in ${dbFile}` : ''}. Click a column to sort; a row opens its trace.
        </p>
      </header>
      <form
        className="runs-filters"
        data-testid="runs-filters"
        onSubmit={(e) => {
          e.preventDefault();
          window.clearTimeout(typing.current);
          apply(draft);
        }}
      >
        <label className="runs-search">
          Search
          <input type="search" data-testid="runs-search" value={draft.text} placeholder='words, "a phrase", prefix*' onChange={(e) => type({ text: e.target.value })} />
        </label>
        <label>
          in
          <select data-testid="runs-field" value={draft.field} onChange={(e) => change({ field: e.target.value as SearchField })}>
            <option value="any">prompts, completions, outputs</option>
            <option value="prompt">prompts</option>
            <option value="completion">completions</option>
            <option value="output">outputs</option>
          </select>
        </label>
        <label>
          Experiment
          <select data-testid="runs-experiment" value={draft.experimentId} onChange={(e) => change({ experimentId: e.target.value })}>
            <option value="">all</option>
            {pickerOptions.map((o) => (
              <option key={o.id} value={o.id}>
                {o.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Kind
          <select data-testid="runs-kind" value={draft.kind} onChange={(e) => change({ kind: e.target.value })}>
            <option value="">any</option>
            {kinds.map((k) => <option key={k} value={k}>{kindLabel(k)}</option>)}
          </select>
        </label>
        <label>
          Workflow
          <input data-testid="runs-workflow" value={draft.workflow} placeholder="part of the name" onChange={(e) => type({ workflow: e.target.value })} />
        </label>
        <label>
          Dataset
          <select data-testid="runs-dataset" value={draft.dataset} onChange={(e) => change({ dataset: e.target.value })}>
            <option value="">any</option>
            {datasets.map((d) => <option key={d} value={d}>{d}</option>)}
          </select>
        </label>
        <label>
          Model
          <input data-testid="runs-model" value={draft.model} placeholder="part of a file name" onChange={(e) => type({ model: e.target.value })} />
        </label>
        <label>
          Status
          <select data-testid="runs-status" value={draft.status} onChange={(e) => change({ status: e.target.value })}>
            <option value="">any</option>
            <option value="completed">completed</option>
            <option value="failed">failed</option>
            <option value="cancelled">cancelled</option>
          </select>
        </label>
        <label>
          Grade
          <select data-testid="runs-grade" value={draft.grade} onChange={(e) => change({ grade: e.target.value })}>
            <option value="">any</option>
            <option value="correct">correct</option>
            <option value="wrong">wrong</option>
          </select>
        </label>
        <label>
          Failure
          <select data-testid="runs-failure" value={draft.failureClass} onChange={(e) => change({ failureClass: e.target.value })}>
            <option value="">any</option>
            {FAILURE_CLASSES.map((c) => <option key={c} value={c}>{c}</option>)}
          </select>
        </label>
        <label>
          Blamed role
          <input data-testid="runs-blamed" value={draft.blamed} placeholder="role" size={10} onChange={(e) => type({ blamed: e.target.value })} />
        </label>
        <label>
          Rollout group
          <input data-testid="runs-group" value={draft.group} placeholder="dataset task id" size={12} onChange={(e) => type({ group: e.target.value })} />
        </label>
        <label>
          Tag
          <input data-testid="runs-tag" value={draft.tag} placeholder="annotation tag" size={10} list="runs-tag-list" onChange={(e) => type({ tag: e.target.value })} />
          <datalist id="runs-tag-list">
            {annotationTags.map((t) => <option key={t} value={t} />)}
          </datalist>
        </label>
        <label>
          From
          <input type="date" data-testid="runs-since" value={draft.since} onChange={(e) => change({ since: e.target.value })} />
        </label>
        <label>
          to
          <input type="date" data-testid="runs-until" value={draft.until} onChange={(e) => change({ until: e.target.value })} />
        </label>
        {/* The form's submit button: without one, Enter in a field of a form with several fields submits nothing (HTML implicit submission). */}
        <button type="submit" className="primary" data-testid="runs-apply">
          Search
        </button>
        <button type="button" onClick={() => change({ ...EMPTY })}>
          Clear
        </button>
      </form>
      <p className="muted small" data-testid="runs-total" role="status">
        {runsError ? <span className="error">{runsError}</span> : runsTotal === null ? 'Searching…' : `${runsTotal.toLocaleString('en')} run${runsTotal === 1 ? '' : 's'}`}
      </p>
      <RunsGrid total={runsTotal ?? 0} pages={runsPages} order={order} onSort={sortBy} onLoad={loadRunRows} onOpen={(h) => void openRunTrace(h.experimentId, h.runId)} />
    </section>
  );
}

/** The virtualised table: a fixed header, then only the rows in view (and a margin) between two spacers. */
function RunsGrid(props: {
  total: number;
  pages: Record<number, RunHit[]>;
  order: { sort: RunSortKey; order: 'asc' | 'desc' };
  onSort: (key: RunSortKey) => void;
  onLoad: (from: number, to: number) => Promise<void>;
  onOpen: (hit: RunHit) => void;
}) {
  const { total, pages, order, onSort, onLoad, onOpen } = props;
  const box = useRef<HTMLDivElement>(null);
  const [view, setView] = useState({ top: 0, height: 600 });
  // The scroll position is read once per frame, however many scroll events arrive.
  const frame = useRef<number | undefined>(undefined);
  const onScroll = () => {
    if (frame.current !== undefined) return;
    frame.current = window.requestAnimationFrame(() => {
      frame.current = undefined;
      const el = box.current;
      if (el) setView({ top: el.scrollTop, height: el.clientHeight });
    });
  };
  useEffect(() => {
    const el = box.current;
    if (el) setView({ top: el.scrollTop, height: el.clientHeight });
    return () => (frame.current === undefined ? undefined : window.cancelAnimationFrame(frame.current));
  }, []);
  // A new query starts at the top.
  useEffect(() => {
    if (box.current && !pages[0]) box.current.scrollTop = 0;
  }, [pages]);
  const { first, last } = visibleRows(view.top, view.height, RUN_ROW_HEIGHT, total);
  useEffect(() => {
    if (last >= first) void onLoad(first, last);
  }, [first, last, total]);

  const rows = [];
  for (let i = first; i <= last; i++) {
    const hit = runAt(pages, i);
    rows.push(hit ? <RunRow key={i} index={i} hit={hit} onOpen={onOpen} /> : (
      <tr key={i} className="runs-row loading" style={{ height: RUN_ROW_HEIGHT }} aria-busy="true">
        <td colSpan={COLUMNS.length} className="muted">…</td>
      </tr>
    ));
  }
  const arrow = (key?: RunSortKey) => (key && order.sort === key ? (order.order === 'asc' ? ' ▲' : ' ▼') : '');
  return (
    <div className="runs-grid" ref={box} onScroll={onScroll} data-testid="runs-grid" tabIndex={-1}>
      <table className="runs-table" data-testid="runs-table" aria-rowcount={total + 1}>
        <colgroup>
          {COLUMNS.map((c) => <col key={c.label} style={{ width: c.width }} />)}
        </colgroup>
        <thead>
          <tr>
            {COLUMNS.map((c) => (
              <th key={c.label} scope="col" className={c.num ? 'num' : undefined} aria-sort={c.sort && order.sort === c.sort ? (order.order === 'asc' ? 'ascending' : 'descending') : undefined}>
                {c.sort ? (
                  <button type="button" className="link" data-testid={`runs-sort-${c.sort}`} onClick={() => onSort(c.sort!)} title={`Sort by ${c.label}`}>
                    {c.label}
                    {arrow(c.sort)}
                  </button>
                ) : (
                  c.label
                )}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {first > 0 && <tr style={{ height: first * RUN_ROW_HEIGHT }} aria-hidden="true" />}
          {rows}
          {last < total - 1 && <tr style={{ height: (total - 1 - last) * RUN_ROW_HEIGHT }} aria-hidden="true" />}
        </tbody>
      </table>
    </div>
  );
}

function RunRow({ index, hit, onOpen }: { index: number; hit: RunHit; onOpen: (hit: RunHit) => void }) {
  const failures = Object.entries(hit.failures).filter(([, n]) => n).map(([k, n]) => `${k} ${n}`).join(', ');
  const onKey = (e: ReactKeyboardEvent) => {
    if (e.key === 'Enter') onOpen(hit);
  };
  return (
    <tr
      className={`runs-row ${hit.correct ? 'correct' : 'wrong'}`}
      style={{ height: RUN_ROW_HEIGHT }}
      data-testid={`runs-row-${index}`}
      data-run={hit.runId}
      aria-rowindex={index + 2}
      tabIndex={0}
      onClick={() => onOpen(hit)}
      onKeyDown={onKey}
      title={`Open the trace of ${hit.runId}`}
    >
      <td title={`${hit.workflowName} / ${hit.dataset} · ${kindLabel(hit.kind)} · ${hit.experimentId}`}>{hit.experimentId}</td>
      <td className="num">{taskLabel(hit)}</td>
      <td>{hit.status}</td>
      <td>
        {hit.correct ? 'correct' : 'wrong'}
        {hit.simulated ? ' (SIMULATED)' : ''}
      </td>
      <td title={hit.answer ?? ''}>{hit.answer ?? '–'}</td>
      <td>{failures || '–'}</td>
      <td>{hit.blamed.join(', ') || '–'}</td>
      <td data-testid="runs-tags" title={hit.tags.join(', ')}>{hit.tags.join(', ') || '–'}</td>
      <td className="num">{hit.promptTokens + hit.completionTokens}</td>
      <td className="num">{hit.endedAt - hit.startedAt}</td>
      <td>{timestamp(hit.startedAt)}</td>
    </tr>
  );
}
