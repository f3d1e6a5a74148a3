/**
 * The workshop report: one self-contained HTML page (no script, no remote file; print it to PDF
 * from the browser) with each step's text, the room's predictions against the truth, the
 * reveal's facts and chart (inline SVG), and the commands to rerun it at home.
 */
import type { Scenario, ScenarioStep } from './scenario.ts';
import { scorePredictions } from './steps.ts';
import type { RevealChart, StepResult } from './truth.ts';

/** One step of the report. */
export interface ReportStep {
  step: ScenarioStep;
  result?: StepResult;
  revealed: boolean;
  predictions: ReadonlyArray<{ choice: string }>;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const pct = (x: number | null) => (x === null ? '–' : `${Math.round(x * 100)}%`);

const STYLE = `
body { font: 15px/1.45 system-ui, sans-serif; color: #1b1f24; max-width: 880px; margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ccd; }
.muted { color: #5a6270; } table { border-collapse: collapse; margin: .5rem 0; } td, th { border: 1px solid #ccd; padding: .25rem .5rem; text-align: left; }
th { background: #f2f4f8; } .truth { font-weight: 600; background: #e6f4ea; } pre { background: #f5f6f8; padding: .6rem; white-space: pre-wrap; word-break: break-all; }
section { page-break-inside: avoid; } svg text { font: 11px system-ui, sans-serif; fill: #1b1f24; }
@media print { body { margin: 0; max-width: none; } h2 { page-break-before: auto; } pre { border: 1px solid #ccd; } }
`;

/** A chart as inline SVG (bars: one per label; lines: one polyline per series), 560x200 user units. */
export function chartSvg(chart: RevealChart): string {
  const W = 560, H = 200, left = 40, bottom = 24, top = 18;
  const colors = ['#2b6cb0', '#c05621', '#2f855a', '#6b46c1'];
  const title = `<text x="${left}" y="12">${esc(chart.title)} (${esc(chart.unit)})</text>`;
  if (chart.kind === 'bars') {
    const max = Math.max(1e-9, ...chart.bars.map((b) => b.value));
    const bw = (W - left) / Math.max(1, chart.bars.length);
    const bars = chart.bars.map((b, i) => {
      const h = ((H - bottom - top) * b.value) / max;
      const x = left + i * bw + 6;
      return `<rect x="${x.toFixed(1)}" y="${(H - bottom - h).toFixed(1)}" width="${(bw - 12).toFixed(1)}" height="${h.toFixed(1)}" fill="${colors[0]}"/>` +
        `<text x="${(x + 2).toFixed(1)}" y="${(H - bottom - h - 3).toFixed(1)}">${b.value}</text><text x="${(x + 2).toFixed(1)}" y="${H - 8}">${esc(b.label)}</text>`;
    }).join('');
    return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(chart.title)}">${title}${bars}</svg>`;
  }
  const all = chart.series.flatMap((s) => s.points);
  const lo = Math.min(0, ...all), hi = Math.max(1e-9, ...all);
  const n = Math.max(2, ...chart.series.map((s) => s.points.length));
  const x = (i: number) => left + ((W - left - 10) * i) / (n - 1);
  const y = (v: number) => H - bottom - ((H - bottom - top) * (v - lo)) / (hi - lo || 1);
  const lines = chart.series.map((s, k) => `<polyline fill="none" stroke="${colors[k % colors.length]}" stroke-width="2" points="${s.points.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ')}"/>` +
    `<text x="${W - 120}" y="${top + 14 * (k + 1)}" fill="${colors[k % colors.length]}">${esc(s.name)}</text>`).join('');
  const axis = `<text x="2" y="${y(hi) + 4}">${hi.toFixed(2)}</text><text x="2" y="${y(lo) + 4}">${lo.toFixed(2)}</text><text x="${left}" y="${H - 6}">${esc(chart.x)} 1..${n}</text>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(chart.title)}">${title}${axis}${lines}</svg>`;
}

function stepSection(r: ReportStep, i: number): string {
  const { step, result } = r;
  const paras = step.text.split(/\n\s*\n/).map((p) => `<p>${esc(p.trim())}</p>`).join('');
  const out = [`<section><h2>${i + 1}. ${esc(step.title)}</h2>${paras}<p><strong>${esc(step.question.prompt)}</strong></p>`];
  if (!result) {
    out.push('<p class="muted">This step has no recorded result.</p></section>');
    return out.join('');
  }
  const score = scorePredictions(step.question.choices.map((c) => c.id), r.predictions, result.truth);
  const rows = step.question.choices.map((c) => `<tr${c.id === result.truth ? ' class="truth"' : ''}><td>${esc(c.label)}${c.id === result.truth ? ' ✓ truth' : ''}</td><td>${score.byChoice[c.id] ?? 0}</td></tr>`).join('');
  out.push(`<table><thead><tr><th>choice</th><th>predictions</th></tr></thead><tbody>${rows}</tbody></table>`);
  out.push(`<p>The room: ${score.correct} of ${score.total} right (${pct(score.share)})${r.revealed ? '' : ' <span class="muted">(not revealed in the session)</span>'}.</p>`);
  out.push(`<p><strong>${esc(result.headline)}</strong></p><p>${esc(step.reveal)}</p>`);
  if (result.facts.length) out.push(`<table><tbody>${result.facts.map((f) => `<tr><th>${esc(f.label)}</th><td>${esc(f.value)}</td></tr>`).join('')}</tbody></table>`);
  if (result.chart) out.push(chartSvg(result.chart));
  out.push(`<p class="muted">Rerun at home (${result.seconds.toFixed(1)} s here):</p><pre>${esc(result.command)}</pre>`);
  if (result.experimentIds.length) out.push(`<p class="muted">Experiments: ${result.experimentIds.slice(0, 6).map(esc).join(', ')}${result.experimentIds.length > 6 ? ` and ${result.experimentIds.length - 6} more` : ''}.</p>`);
  out.push('</section>');
  return out.join('');
}

/** The report page of a session (`generatedAt` epoch ms, printed as UTC). */
export function workshopReportHtml(scenario: Scenario, sessionId: string, steps: readonly ReportStep[], generatedAt: number): string {
  const when = new Date(generatedAt).toISOString().replace('T', ' ').slice(0, 16);
  const total = steps.reduce((s, r) => s + r.predictions.length, 0);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Workshop report: ${esc(scenario.title)}</title><style>${STYLE}</style></head>
<body><h1>${esc(scenario.title)}</h1><p class="muted">Flowlab workshop report · session ${esc(sessionId)} · ${when} UTC · ${total} prediction(s). Print this page to save it as PDF.</p>
<p>${esc(scenario.summary)}</p>
${steps.map(stepSection).join('\n')}
<h2>Rerun it at home</h2><p>The whole exercise, rehearsed once and then served to a room:</p><pre>npm run flowlab -- workshop workshops/${esc(scenario.id)}.yaml</pre>
<p class="muted">Every fault here is SIMULATED (injected by Flowlab with its ground truth recorded); the tiny model's own answers are real.</p>
</body></html>
`;
}
