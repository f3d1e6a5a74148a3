import { studyModelLabel } from '../lib/studyLabels.ts';
import { useEffect } from 'react';
import type { StudyDetail, StudyTable, StudyTableEntry } from '../../core/api/client.ts';
import { useLab, useLabPick } from '../useLab.ts';
import { shellWord } from '../lib/commands.ts';
import { LoadState, RefreshButton } from './Status.tsx';
import { StudyStartPanel } from './StudyStartPanel.tsx';

/** How often the view reloads while shown (live while `flowlab study` writes to the same database). */
export const STUDIES_REFRESH_MS = 3000;
/** The command the empty state shows. */
export const STUDY_COMMAND = 'npm run flowlab -- study examples/studies/laptop.yaml --db <this database>';
/** Colours of the conditions, in plan order (Okabe–Ito; the same as the HTML report's). */
const COLOURS = ['#999999', '#E69F00', '#56B4E9', '#009E73', '#CC79A7', '#0072B2', '#D55E00', '#F0E442'];

const pct = (x: number) => (Number.isFinite(x) ? (100 * x).toFixed(1) : '-');
const signed = (x: number) => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}` : '-');

/** Accuracy per zone as grouped bars with 95% interval whiskers (one group per zone, a bar per condition). */
export function StudyChart({ table, model }: { table: StudyTable; model: string }) {
  const W = 640;
  // Legend entries laid out in rows, about 6 px per character at 10 px.
  const legend: Array<{ x: number; row: number }> = [];
  let lx = 40;
  let rows = 0;
  for (const c of table.conditions) {
    const w = 20 + c.label.length * 6;
    if (lx + w > W - 8 && lx > 40) {
      lx = 40;
      rows++;
    }
    legend.push({ x: lx, row: rows });
    lx += w;
  }
  const H = 240 + 14 * rows;
  const m = { l: 40, r: 8, t: 10, b: 40 + 14 * rows };
  const ph = H - m.t - m.b;
  const gw = (W - m.l - m.r) / Math.max(1, table.zones.length);
  const bw = Math.min(26, (gw - 16) / Math.max(1, table.conditions.length));
  const y = (v: number) => m.t + ph - Math.min(1, Math.max(0, Number.isFinite(v) ? v : 0)) * ph;
  const entry = (c: string, z: string) => table.entries.find((e) => e.model === model && e.condition === c && e.zone === z);
  return (
    <svg viewBox={`0 0 ${W} ${H}`} width={W} height={H} role="img" aria-label={`Accuracy per zone, ${model}`} data-testid="study-chart" className="study-chart">
      {[0, 0.25, 0.5, 0.75, 1].map((v) => (
        <g key={v}>
          <line x1={m.l} x2={W - m.r} y1={y(v)} y2={y(v)} stroke="currentColor" strokeOpacity={0.15} />
          <text x={m.l - 4} y={y(v) + 4} textAnchor="end" fontSize={10} fill="currentColor">{v * 100}</text>
        </g>
      ))}
      {table.zones.map((z, zi) => {
        const gx = m.l + zi * gw + (gw - bw * table.conditions.length) / 2;
        return (
          <g key={z.id}>
            {table.conditions.map((c, ci) => {
              const e = entry(c.id, z.id);
              if (!e || !e.runs) return null;
              const x = gx + ci * bw;
              const cx = x + bw / 2;
              return (
                <g key={c.id}>
                  <rect x={x + 2} y={y(e.accuracy.mean)} width={bw - 4} height={Math.max(1, y(0) - y(e.accuracy.mean))} fill={COLOURS[ci % COLOURS.length]}>
                    <title>{`${c.label} · ${z.label}: ${pct(e.accuracy.mean)} [${pct(e.accuracy.low)}, ${pct(e.accuracy.high)}]`}</title>
                  </rect>
                  <line x1={cx} x2={cx} y1={y(e.accuracy.low)} y2={y(e.accuracy.high)} stroke="currentColor" />
                </g>
              );
            })}
            <text x={m.l + zi * gw + gw / 2} y={H - m.b + 16} textAnchor="middle" fontSize={11} fill="currentColor">{z.label}</text>
          </g>
        );
      })}
      {table.conditions.map((c, ci) => (
        <g key={c.id} transform={`translate(${legend[ci]!.x}, ${H - 12 - 14 * (rows - legend[ci]!.row)})`}>
          <rect width={9} height={9} y={-8} fill={COLOURS[ci % COLOURS.length]} />
          <text x={12} fontSize={10} fill="currentColor">{c.label}</text>
        </g>
      ))}
    </svg>
  );
}

function TableCell({ e, baseline, onOpen }: { e: StudyTableEntry | undefined; baseline: boolean; onOpen: (id: string) => void }) {
  if (!e) return <><td>-</td><td>-</td></>;
  const d = e.delta;
  return (
    <>
      <td>
        <button type="button" className="link" data-testid={`study-cell-${e.condition}-${e.zone}-${e.model}`} onClick={() => onOpen(e.experimentIds[0]!)} title={`Open ${e.experimentIds.join(', ')}`}>
          {e.runs ? `${pct(e.accuracy.mean)} [${pct(e.accuracy.low)}, ${pct(e.accuracy.high)}]` : '-'}
        </button>
        {e.runs < e.planned && <span className="muted small"> ({e.runs}/{e.planned})</span>}
        {e.runs > 0 && e.guard && (
          <div className="small" data-testid={`study-guard-${e.condition}-${e.zone}-${e.model}`}>
            <span className="muted">best constant {e.guard.bestConstant ? pct(e.guard.bestConstant.accuracy) : '-'} · {e.guard.distinctAnswers} answer{e.guard.distinctAnswers === 1 ? '' : 's'}</span>
            {e.guard.constant && (
              <strong className="error" title="The answers collapsed: this accuracy is a constant policy's (core/guards)">
                {' '}CONSTANT {JSON.stringify(e.guard.constant.answer)} {pct(e.guard.constant.share)}%
              </strong>
            )}
          </div>
        )}
      </td>
      <td>{baseline ? <span className="muted">baseline</span> : d ? `${signed(d.delta)} [${signed(d.ci.low)}, ${signed(d.ci.high)}] p=${d.signTest.p.toFixed(3)}${d.guard ? ` (${d.guard})` : ''}` : '-'}</td>
    </>
  );
}

function StudyBody({ study, onOpen }: { study: StudyDetail; onOpen: (id: string) => void }) {
  const { table, summary } = study;
  return (
    <>
      <p className="muted small" data-testid="study-summary">
        {summary.id} · {summary.status} · {summary.cellsDone}/{summary.cells} cells, {summary.runsDone}/{summary.runsPlanned} runs
        {study.estimate && ` · dry-run estimate ${Math.round(study.estimate.seconds)} s`}
        {study.wallSeconds.length > 0 && ` · wall ${Math.round(study.wallSeconds.reduce((s, x) => s + x, 0))} s`}
        {study.skippedZones.length > 0 && ` · skipped zones: ${study.skippedZones.join(', ')}`}
      </p>
      {table.models.map((model) => (
        <section key={model} aria-label={`Model ${studyModelLabel(study.plan, model)}`}>
          <h3 data-testid="study-model">Model {studyModelLabel(study.plan, model)}: accuracy % [95% bootstrap CI], Δ vs {table.baseline} (points, sign-test p)</h3>
          <table className="study-table" data-testid="study-table">
            <thead>
              <tr>
                <th scope="col">condition</th>
                {table.zones.map((z) => (
                  <th key={z.id} scope="col" colSpan={2}>{z.label} <span className="muted small">{z.dataset}/{z.split}</span></th>
                ))}
                <th scope="col">tok/task</th>
                <th scope="col">s/task</th>
              </tr>
            </thead>
            <tbody>
              {table.conditions.map((c) => {
                const es = table.zones.map((z) => table.entries.find((e) => e.model === model && e.zone === z.id && e.condition === c.id));
                const ran = es.filter((e): e is StudyTableEntry => !!e && e.runs > 0);
                const avg = (f: (e: StudyTableEntry) => number) => (ran.length ? ran.reduce((s, e) => s + f(e), 0) / ran.length : NaN);
                return (
                  <tr key={c.id}>
                    <th scope="row">{c.label} <span className="muted small">{c.kind}</span></th>
                    {es.map((e, i) => <TableCell key={table.zones[i]!.id} e={e} baseline={c.id === table.baseline} onOpen={onOpen} />)}
                    <td>{Number.isFinite(avg((e) => e.tokensPerTask)) ? avg((e) => e.tokensPerTask).toFixed(1) : '-'}</td>
                    <td>{Number.isFinite(avg((e) => e.secondsPerTask)) ? avg((e) => e.secondsPerTask).toFixed(3) : '-'}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <StudyChart table={table} model={model} />
        </section>
      ))}
      <h3>Cells</h3>
      <ul className="study-cells" data-testid="study-cells">
        {study.units.map((u) => (
          <li key={u.key} data-testid={`study-unit-${u.key}`}>
            train {u.key}: {u.loopId ? `done in ${Math.round(u.seconds ?? 0)} s, versions ${Object.entries(u.versions).map(([r, v]) => `${r}=${v}`).join(', ')}` : `${u.experimentIds.length}/${u.iterations} iterations`}
            {u.experimentIds[0] && <> · <button type="button" className="link" onClick={() => onOpen(u.experimentIds[u.experimentIds.length - 1]!)}>last iteration</button></>}
          </li>
        ))}
        {study.cells.map((c) => (
          <li key={c.key}>
            <button type="button" className="link" data-testid={`study-open-${c.key}`} onClick={() => onOpen(c.experimentId)} disabled={c.status === 'pending'}>{c.key}</button>{' '}
            <progress max={c.total} value={c.done} aria-label={`${c.key} progress`} /> {c.done}/{c.total} <span className="muted small">{c.status}</span>
          </li>
        ))}
      </ul>
      <details>
        <summary>Plan</summary>
        <pre data-testid="study-plan">{JSON.stringify(study.plan, null, 2)}</pre>
      </details>
    </>
  );
}

/**
 * Studies: each study's table (accuracy per condition × zone with 95% bootstrap intervals, the
 * delta against the baseline with the sign test, tokens and seconds per task), a chart per
 * model, the progress of every cell and train loop, and the plan. A table cell or a cell of the
 * list opens its experiment (runs, then traces). Reloads every 3 s while shown.
 */
export function StudiesView() {
  const { studies, study, studyId, loadStudies, selectStudy, openStudyExperiment } = useLabPick('studies', 'study', 'studyId', 'loadStudies', 'selectStudy', 'openStudyExperiment');
  useEffect(() => {
    void loadStudies();
    const t = window.setInterval(() => {
      if (document.visibilityState !== 'hidden') void loadStudies();
    }, STUDIES_REFRESH_MS);
    return () => window.clearInterval(t);
  }, [loadStudies]);
  const list = studies.status === 'ready' ? studies.data : [];
  const chosen = studyId || list[0]?.id || '';
  return (
    <section className="view studies-view" aria-labelledby="studies-title">
      <header className="view-head">
        <h2 id="studies-title">Studies</h2>
        <p className="muted small">Conditions × zones × seeds × models, each cell an experiment. Live every 3 s.</p>
        <RefreshButton onRefresh={loadStudies} title="Refresh" />
      </header>
      <StudyStartPanel />
      <LoadState state={studies} what="studies" />
      {studies.status === 'ready' && list.length === 0 && (
        <div className="empty" data-testid="studies-empty">
          <p><strong>No study yet.</strong> Start one above, or run a plan from a terminal (with <code>flowlab serve</code> on the same database this view follows it live):</p>
          <StudyCommand />
        </div>
      )}
      {list.length > 0 && (
        <label>
          Study{' '}
          <select data-testid="study-select" value={chosen} onChange={(e) => void selectStudy(e.target.value)}>
            {list.map((s) => <option key={s.id} value={s.id}>{s.name} ({s.status}, {s.cellsDone}/{s.cells} cells) {s.id}</option>)}
          </select>
        </label>
      )}
      <LoadState state={study} what="the study" />
      {study.status === 'ready' && <StudyBody study={study.data} onOpen={(id) => void openStudyExperiment(id)} />}
    </section>
  );
}

/** The study command with the served database in place of the placeholder, once it is known. */
function StudyCommand() {
  const dbFile = useLab((s) => (s.appInfo.status === 'ready' ? s.appInfo.data.dbFile : null));
  return (
    <pre>
      <code>{dbFile ? STUDY_COMMAND.replace('<this database>', shellWord(dbFile)) : STUDY_COMMAND}</code>
    </pre>
  );
}
