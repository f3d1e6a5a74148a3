/**
 * The reward ladder as stacked horizontal bars in plain SVG (math in lib/ladderBars.ts): per
 * role, rungs f v e a stacked right of zero and the credit rung c left of it, each segment
 * labelled with its symbol, the reward h and the highest rung k/5 as text beside the bar. A
 * role that wired nodes (a designer) is marked ✎ before its name.
 */
import { ladderBar, ladderScale, RUNG_KEYS, rungText, toPixels, type LadderValues, type RungKey } from '../lib/ladderBars.ts';

const ROW = 34;
const LABEL_W = 120;
const BAR_W = 420;
const TAIL_W = 150;
const TOP = 22;

/** Fill per rung (the symbol is printed on each segment too, so colour is never the only cue). */
const RUNG_CLASS: Record<RungKey, string> = { format: 'rung-f', validity: 'rung-v', completion: 'rung-e', correctness: 'rung-a', credit: 'rung-c' };

export function LadderChart({ ladders, title, testId }: { ladders: LadderValues[]; title: string; testId: string }) {
  const scale = ladderScale(ladders);
  const zero = LABEL_W + toPixels(0, scale, BAR_W);
  const height = TOP + ladders.length * ROW + 8;
  const width = LABEL_W + BAR_W + TAIL_W;
  const ticks = tickValues(scale.min, scale.max);
  const summary = ladders.map((l) => `${l.role}: h ${l.reward.toFixed(2)}, ${rungText(l)}`).join('; ');

  return (
    <svg className="ladder-chart" data-testid={testId} viewBox={`0 0 ${width} ${height}`} width="100%" role="img" aria-label={`${title}. ${summary}`} preserveAspectRatio="xMinYMin meet">
      {ticks.map((t) => {
        const x = LABEL_W + toPixels(t, scale, BAR_W);
        return (
          <g key={t} className="tick">
            <line x1={x} x2={x} y1={TOP - 6} y2={height - 6} />
            <text x={x} y={TOP - 9} textAnchor="middle">
              {t.toFixed(2)}
            </text>
          </g>
        );
      })}
      <line className="zero" x1={zero} x2={zero} y1={TOP - 6} y2={height - 4} />
      {ladders.map((l, i) => {
        const bar = ladderBar(l);
        const y = TOP + i * ROW;
        return (
          <g key={l.role} data-testid={`ladder-role-${l.role}`}>
            <text className="role" x={LABEL_W - 8} y={y + ROW / 2} textAnchor="end" dominantBaseline="middle">
              {(l.nodesWired ?? 0) > 0 ? `✎ ${l.role}` : l.role}
            </text>
            {bar.segments.map((s) => {
              const x0 = LABEL_W + toPixels(s.x0, scale, BAR_W);
              const x1 = LABEL_W + toPixels(s.x1, scale, BAR_W);
              const w = Math.max(0, x1 - x0);
              return (
                <g key={s.rung} className={RUNG_CLASS[s.rung]}>
                  <rect x={x0} y={y + 5} width={w} height={ROW - 10} rx={2}>
                    <title>
                      {`${s.symbol} (${s.rung}) = ${s.value.toFixed(2)} × weight ${s.weight} = ${s.contribution.toFixed(3)}`}
                    </title>
                  </rect>
                  {w >= 14 && (
                    <text x={x0 + w / 2} y={y + ROW / 2} textAnchor="middle" dominantBaseline="middle" className="seg-label">
                      {s.symbol}
                    </text>
                  )}
                </g>
              );
            })}
            <text className="tail" x={LABEL_W + BAR_W + 8} y={y + ROW / 2} dominantBaseline="middle">
              h {l.reward.toFixed(2)} · {rungText({ ...l, highestRung: Math.round(l.highestRung * 10) / 10 })}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

/** The rung key with symbols and fills. */
export function RungKeyLegend() {
  return (
    <ul className="legend" aria-label="Rungs">
      {RUNG_KEYS.map((r, i) => (
        <li key={r}>
          <svg width="14" height="14" aria-hidden="true" className={RUNG_CLASS[r]}>
            <rect width="14" height="14" rx="2" />
          </svg>{' '}
          {i + 1} {r} ({['f', 'v', 'e', 'a', 'c'][i]})
        </li>
      ))}
    </ul>
  );
}

function tickValues(min: number, max: number): number[] {
  const span = max - min;
  const step = span > 2 ? 0.5 : span > 0.8 ? 0.25 : 0.1;
  const out: number[] = [];
  for (let t = Math.ceil(min / step) * step; t <= max + 1e-9; t += step) out.push(Math.round(t * 1000) / 1000);
  return out;
}
