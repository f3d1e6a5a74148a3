/**
 * A role's mean reward (left axis, 0..1) and KL to the starting weights (right axis) per
 * train-loop iteration, with chart.js (line only). The two lines differ by dash and point style.
 * CoevolutionChart: every role of one loop, mean reward per iteration, one line per role.
 */
import { CategoryScale, Chart, Legend, LinearScale, LineController, LineElement, PointElement, Tooltip, type ChartConfiguration } from 'chart.js';
import { chartOptions, chartPalette, useChart } from './useChart.ts';
import type { Theme } from '../lib/graphStyle.ts';
import type { ChartSeries, CoevolutionSeries } from '../lib/learning.ts';

Chart.register(CategoryScale, LinearScale, LineController, LineElement, PointElement, Legend, Tooltip);

export interface LearningChartProps {
  role: string;
  series: ChartSeries;
  theme: Theme;
}

function config(series: ChartSeries, theme: Theme): ChartConfiguration<'line', Array<number | null>, string> {
  const { text, grid, accent: reward } = chartPalette(theme);
  const kl = theme === 'dark' ? '#f2c26b' : '#b36b00';
  return {
    type: 'line',
    data: {
      labels: series.labels,
      datasets: [
        { label: 'mean reward', data: series.reward, yAxisID: 'reward', borderColor: reward, backgroundColor: reward, pointStyle: 'circle', pointRadius: 3, spanGaps: true },
        { label: 'KL', data: series.kl, yAxisID: 'kl', borderColor: kl, backgroundColor: kl, borderDash: [5, 3], pointStyle: 'rectRot', pointRadius: 3, spanGaps: true },
      ],
    },
    options: chartOptions(text, {
      x: { title: { display: true, text: 'iteration', color: text }, ticks: { color: text }, grid: { color: grid } },
      reward: { type: 'linear' as const, position: 'left' as const, min: 0, max: 1, title: { display: true, text: 'mean reward', color: text }, ticks: { color: text }, grid: { color: grid } },
      kl: { type: 'linear' as const, position: 'right' as const, beginAtZero: true, title: { display: true, text: 'KL', color: text }, ticks: { color: text }, grid: { drawOnChartArea: false } },
    }),
  };
}

export function LearningChart({ role, series, theme }: LearningChartProps) {
  const canvas = useChart(() => config(series, theme), theme, series);

  const last = series.labels.length - 1;
  const summary = last >= 0 ? `iteration ${series.labels[last]}: mean reward ${series.reward[last]?.toFixed(2) ?? '–'}, KL ${series.kl[last]?.toFixed(4) ?? '–'}` : 'no iterations';
  return (
    <div className="chart-box" data-testid="learning-chart" data-points={series.labels.length}>
      <canvas ref={canvas} role="img" aria-label={`Mean reward and KL per iteration of ${role}. ${summary}`} />
    </div>
  );
}

/** Line looks per role of the co-evolution chart: dash, point shape and colour all differ (never colour alone). */
export const ROLE_LINES: ReadonlyArray<{ dash: number[]; point: 'circle' | 'rectRot' | 'triangle' | 'rect' | 'star' | 'crossRot'; name: string }> = [
  { dash: [], point: 'circle', name: 'solid line, circles' },
  { dash: [6, 3], point: 'rectRot', name: 'dashed line, diamonds' },
  { dash: [2, 3], point: 'triangle', name: 'dotted line, triangles' },
  { dash: [10, 3, 2, 3], point: 'rect', name: 'dash-dot line, squares' },
  { dash: [14, 4], point: 'star', name: 'long dashes, stars' },
  { dash: [4, 2], point: 'crossRot', name: 'short dashes, crosses' },
];

const ROLE_COLOURS = { light: ['#1f5fbf', '#0b6e6e', '#b36b00', '#6b3fa0', '#b3261e', '#1d7a3a'], dark: ['#7fb0ff', '#5fd4cf', '#f2c26b', '#c9a4ff', '#ff8a80', '#6fd08c'] } as const;

export interface CoevolutionChartProps {
  series: CoevolutionSeries;
  theme: Theme;
}

function coevolutionConfig(series: CoevolutionSeries, theme: Theme): ChartConfiguration<'line', Array<number | null>, string> {
  const { text, grid } = chartPalette(theme);
  return {
    type: 'line',
    data: {
      labels: series.labels,
      datasets: series.roles.map((r, i) => {
        const look = ROLE_LINES[i % ROLE_LINES.length]!;
        const colour = ROLE_COLOURS[theme][i % ROLE_COLOURS[theme].length]!;
        return { label: `${r.role} — mean reward`, data: r.reward, borderColor: colour, backgroundColor: colour, borderDash: look.dash, pointStyle: look.point, pointRadius: 4, spanGaps: true };
      }),
    },
    options: chartOptions(text, {
      x: { title: { display: true, text: 'iteration', color: text }, ticks: { color: text }, grid: { color: grid } },
      y: { type: 'linear' as const, min: 0, max: 1, title: { display: true, text: 'mean ladder reward', color: text }, ticks: { color: text }, grid: { color: grid } },
    }),
  };
}

export function CoevolutionChart({ series, theme }: CoevolutionChartProps) {
  const canvas = useChart(() => coevolutionConfig(series, theme), theme, series);
  const last = series.labels.length - 1;
  const summary = series.roles.map((r) => `${r.role} ${r.reward[last]?.toFixed(2) ?? '–'}`).join(', ');
  return (
    <div data-testid="coevolution-chart" data-roles={series.roles.map((r) => r.role).join(',')} data-points={series.labels.length}>
      <div className="chart-box">
        <canvas ref={canvas} role="img" aria-label={`Mean reward per iteration of every role of loop ${series.loopId}. At iteration ${series.labels[last] ?? '–'}: ${summary}`} />
      </div>
      <ul className="legend" aria-label="Roles">
        {series.roles.map((r, i) => (
          <li key={r.role} data-testid={`coevolution-role-${r.role}`}>
            <svg width="34" height="10" aria-hidden="true">
              <line x1="1" y1="5" x2="33" y2="5" stroke={ROLE_COLOURS[theme][i % ROLE_COLOURS[theme].length]} strokeWidth="2" strokeDasharray={ROLE_LINES[i % ROLE_LINES.length]!.dash.join(' ')} />
            </svg>
            {r.role} ({ROLE_LINES[i % ROLE_LINES.length]!.name}) · last {r.reward[last]?.toFixed(2) ?? '–'}
          </li>
        ))}
      </ul>
    </div>
  );
}
