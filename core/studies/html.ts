/**
 * The study's self-contained HTML report: the table (accuracy with 95% bootstrap intervals,
 * deltas against the baseline with the sign test, tokens and seconds per task) and two charts
 * drawn as inline SVG (accuracy per zone with interval whiskers; delta per zone with its
 * interval). No script, no external resource: it opens offline, anywhere. Pure.
 */
import { formatSeconds } from './estimate.ts';
import { accuracyText, deltaText, guardText, noveltyText, type StudyTable, type StudyTableEntry } from './table.ts';

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
/** Colours of the conditions, in plan order (colour-blind-safe Okabe–Ito palette). */
export const CONDITION_COLOURS = ['#999999', '#E69F00', '#56B4E9', '#009E73', '#CC79A7', '#0072B2', '#D55E00', '#F0E442'];
const fin = (x: number) => (Number.isFinite(x) ? x : 0);

/**
 * A grouped bar chart as an SVG string: one group per zone, one bar per condition, a whisker
 * per interval. `value(e)` gives [mean, low, high]; the axis spans [lo, hi] (fractions, shown in
 * percent).
 */
export function barChartSvg(t: StudyTable, model: string, title: string, value: (e: StudyTableEntry) => [number, number, number] | undefined, lo: number, hi: number): string {
  const W = 900;
  const conds = t.conditions;
  // The legend: as many entries per row as fit (about 6.2 px per character at 11 px).
  const legend: Array<{ x: number; row: number }> = [];
  let lx = 48;
  let row = 0;
  for (const c of conds) {
    const w = 22 + c.label.length * 6.2;
    if (lx + w > W - 12 && lx > 48) {
      lx = 48;
      row++;
    }
    legend.push({ x: lx, row });
    lx += w;
  }
  const H = 286 + 16 * row;
  const m = { l: 48, r: 12, t: 28, b: 64 + 16 * row };
  const pw = W - m.l - m.r;
  const ph = H - m.t - m.b;
  const y = (v: number) => m.t + ph - ((Math.min(hi, Math.max(lo, v)) - lo) / (hi - lo)) * ph;
  const gw = pw / Math.max(1, t.zones.length);
  const bw = Math.min(28, (gw - 16) / Math.max(1, conds.length));
  const parts: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(title)}" font-family="system-ui, sans-serif" font-size="11">`, `<text x="${m.l}" y="16" font-size="13" font-weight="600">${esc(title)}</text>`];
  for (let i = 0; i <= 4; i++) {
    const v = lo + ((hi - lo) * i) / 4;
    parts.push(`<line x1="${m.l}" x2="${W - m.r}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/><text x="${m.l - 6}" y="${y(v) + 4}" text-anchor="end">${(100 * v).toFixed(0)}</text>`);
  }
  if (lo < 0) parts.push(`<line x1="${m.l}" x2="${W - m.r}" y1="${y(0)}" y2="${y(0)}" stroke="#555"/>`);
  t.zones.forEach((z, zi) => {
    const gx = m.l + zi * gw + (gw - bw * conds.length) / 2;
    conds.forEach((c, ci) => {
      const e = t.entries.find((x) => x.model === model && x.zone === z.id && x.condition === c.id);
      const v = e && value(e);
      if (!v) return;
      const [mean, low, high] = v.map(fin) as [number, number, number];
      const x = gx + ci * bw;
      const base = y(Math.max(lo, 0));
      const top = y(mean);
      parts.push(`<rect x="${x + 2}" y="${Math.min(base, top)}" width="${bw - 4}" height="${Math.max(1, Math.abs(base - top))}" fill="${CONDITION_COLOURS[ci % CONDITION_COLOURS.length]}"><title>${esc(`${c.label} · ${z.label}: ${(100 * mean).toFixed(1)} [${(100 * low).toFixed(1)}, ${(100 * high).toFixed(1)}]`)}</title></rect>`);
      const cx = x + bw / 2;
      parts.push(`<line x1="${cx}" x2="${cx}" y1="${y(low)}" y2="${y(high)}" stroke="#222"/><line x1="${cx - 4}" x2="${cx + 4}" y1="${y(low)}" y2="${y(low)}" stroke="#222"/><line x1="${cx - 4}" x2="${cx + 4}" y1="${y(high)}" y2="${y(high)}" stroke="#222"/>`);
    });
    parts.push(`<text x="${m.l + zi * gw + gw / 2}" y="${H - m.b + 16}" text-anchor="middle" font-weight="600">${esc(z.label)}</text><text x="${m.l + zi * gw + gw / 2}" y="${H - m.b + 30}" text-anchor="middle" fill="#666">${esc(`${z.dataset}/${z.split}`)}</text>`);
  });
  conds.forEach((c, ci) => {
    const { x, row: r } = legend[ci]!;
    const ly = H - 18 - 16 * (row - r);
    parts.push(`<rect x="${x}" y="${ly}" width="10" height="10" fill="${CONDITION_COLOURS[ci % CONDITION_COLOURS.length]}"/><text x="${x + 14}" y="${ly + 9}">${esc(c.label)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('');
}

/** The HTML table of one model's rows (the seed-style table). */
function tableHtml(t: StudyTable, model: string): string {
  const head = `<tr><th>condition</th>${t.zones.map((z) => `<th>${esc(z.label)}<br><small>${esc(z.kind)} · ${esc(z.dataset)}/${esc(z.split)}</small></th><th>Δ vs ${esc(t.conditions.find((c) => c.id === t.baseline)?.label ?? t.baseline)}</th>`).join('')}<th>tokens / task</th><th>s / task</th><th>training</th></tr>`;
  const rows = t.conditions.map((c) => {
    const es = t.zones.map((z) => t.entries.find((e) => e.model === model && e.zone === z.id && e.condition === c.id));
    const present = es.filter((e): e is StudyTableEntry => !!e && e.runs > 0);
    const avg = (f: (e: StudyTableEntry) => number) => (present.length ? present.reduce((s, e) => s + f(e), 0) / present.length : NaN);
    const cells = es.map((e) => `<td${e?.guard.constant ? ' class="constant"' : ''}>${e ? esc(accuracyText(e)) : '-'}${e && e.runs < e.planned ? ` <small>(${e.runs}/${e.planned})</small>` : ''}${e && e.runs ? `<br><small>${esc(guardText(e))}</small>` : ''}${e && noveltyText(e) ? `<br><small class="novelty">${esc(noveltyText(e)!)}</small>` : ''}</td><td>${esc(c.id === t.baseline ? '(baseline)' : deltaText(e?.delta))}</td>`).join('');
    const tr = t.trainingSeconds[c.id];
    return `<tr><th>${esc(c.label)}<br><small>${esc(c.kind)}</small></th>${cells}<td>${Number.isFinite(avg((e) => e.tokensPerTask)) ? avg((e) => e.tokensPerTask).toFixed(1) : '-'}</td><td>${Number.isFinite(avg((e) => e.secondsPerTask)) ? avg((e) => e.secondsPerTask).toFixed(3) : '-'}</td><td>${tr === undefined ? '-' : esc(formatSeconds(tr))}</td></tr>`;
  });
  return `<table><thead>${head}</thead><tbody>${rows.join('')}</tbody></table>`;
}

/**
 * The report page. `extra`: lines shown under the title (e.g. the dry run's estimate against the
 * real wall time). Accuracy in percent; intervals are 95% percentile bootstrap over runs
 * (resamples and seed stated on the page).
 */
export function studyReportHtml(t: StudyTable, extra: readonly string[] = []): string {
  const sections = t.models.map((model) => {
    const acc = barChartSvg(t, model, `Accuracy (%) per zone, 95% bootstrap intervals — ${model}`, (e) => (e.runs ? [e.accuracy.mean, e.accuracy.low, e.accuracy.high] : undefined), 0, 1);
    const deltas = t.entries.filter((e) => e.model === model && e.delta).flatMap((e) => [e.delta!.ci.low, e.delta!.ci.high]);
    const span = Math.max(0.1, ...deltas.map((d) => Math.abs(fin(d))));
    const dl = barChartSvg(t, model, `Δ accuracy vs baseline (points), paired by seed and task — ${model}`, (e) => (e.delta ? [e.delta.delta, e.delta.ci.low, e.delta.ci.high] : undefined), -Math.ceil(span * 10) / 10, Math.ceil(span * 10) / 10);
    return `<h2>Model ${esc(model)}</h2>${tableHtml(t, model)}<div class="charts">${acc}${dl}</div>`;
  });
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(`Study ${t.name}`)}</title>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #222; background: #fff; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 24px 0 8px; }
.meta { color: #555; margin: 0 0 2px; }
table { border-collapse: collapse; margin: 8px 0 16px; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; vertical-align: top; white-space: nowrap; }
thead th { background: #f3f3f3; } td.constant { background: #fde8e8; } small { color: #666; font-weight: normal; }
.charts svg { display: block; margin: 8px 0; max-width: 100%; height: auto; }
</style></head><body>
<h1>${esc(`Study ${t.name}`)}</h1>
<p class="meta">${esc(`${t.studyId} · baseline ${t.baseline} · accuracy in percent (correct runs), ${Math.round(t.level * 100)}% percentile bootstrap over runs (${t.resamples} resamples, seed ${t.bootstrapSeed}); Δ paired by (seed, task), exact two-sided sign test; under each accuracy: the best constant policy of the zone (from the labels), the distinct answers given, and CONSTANT when the answers collapsed to one value or to fewer than the zone's classes (core/guards); where a zone's split holds both training templates with unseen names and numbers and wordings training never saw, the accuracy split into in-template and new-wording (percent, runs)`)}</p>
${extra.map((l) => `<p class="meta">${esc(l)}</p>`).join('\n')}
${sections.join('\n')}
</body></html>
`;
}
