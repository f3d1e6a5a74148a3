/**
 * Accuracy and failure classes per experiment, with chart.js (tree-shaken: bar + line only).
 * Failure classes are stacked bars (counts, left axis); accuracy is a line with point markers
 * (percent, right axis). Bars also differ by border dash so the classes read without colour.
 */
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, LineController, LineElement, PointElement, Tooltip, type ChartConfiguration } from 'chart.js';
import { chartOptions, chartPalette, useChart } from './useChart.ts';
import { FAILURE_CLASSES, type ExperimentPoint } from '../lib/experimentStats.ts';
import type { Theme } from '../lib/graphStyle.ts';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, LineController, LineElement, PointElement, Legend, Tooltip);

const CLASS_COLOUR: Record<Theme, Record<(typeof FAILURE_CLASSES)[number], string>> = {
  light: { wiring: '#8e5bd1', execution: '#c0392b', cascade: '#d98c1f', infrastructure: '#6b7580' },
  dark: { wiring: '#b690f0', execution: '#ff8a80', cascade: '#f2c26b', infrastructure: '#9aa3ae' },
};
const DASH: Record<(typeof FAILURE_CLASSES)[number], number[]> = { wiring: [], execution: [4, 2], cascade: [1, 2], infrastructure: [6, 3] };

function config(points: ExperimentPoint[], theme: Theme): ChartConfiguration<'bar' | 'line', Array<number | null>, string> {
  const { text, grid, accent } = chartPalette(theme);
  return {
    type: 'bar',
    data: {
      labels: points.map((p) => (p.simulated ? `${p.label} (SIMULATED)` : p.label)),
      datasets: [
        {
          type: 'line',
          label: 'accuracy %',
          data: points.map((p) => p.accuracyPct),
          yAxisID: 'pct',
          borderColor: accent,
          backgroundColor: accent,
          pointStyle: 'rectRot',
          pointRadius: 5,
          spanGaps: true,
          order: 0,
        },
        ...FAILURE_CLASSES.map((c) => ({
          type: 'bar' as const,
          label: `${c} failures`,
          data: points.map((p) => (p.failures ? p.failures[c] : null)),
          yAxisID: 'count',
          stack: 'failures',
          backgroundColor: CLASS_COLOUR[theme][c] + '99',
          borderColor: CLASS_COLOUR[theme][c],
          borderWidth: 1.5,
          borderDash: DASH[c],
          maxBarThickness: 56,
          order: 1,
        })),
      ],
    },
    options: chartOptions(text, {
      x: { stacked: true, ticks: { color: text, maxRotation: 30, autoSkip: true }, grid: { color: grid } },
      count: { type: 'linear' as const, position: 'left' as const, stacked: true, beginAtZero: true, title: { display: true, text: 'node failures', color: text }, ticks: { color: text, precision: 0 }, grid: { color: grid } },
      pct: { type: 'linear' as const, position: 'right' as const, min: 0, max: 100, title: { display: true, text: 'accuracy %', color: text }, ticks: { color: text }, grid: { drawOnChartArea: false } },
    }),
  };
}

export function ExperimentsChart({ points, theme }: { points: ExperimentPoint[]; theme: Theme }) {
  const canvas = useChart(() => config(points, theme), theme, points);

  const summary = points.map((p) => `${p.label}: accuracy ${p.accuracyPct ?? '–'}%`).join('; ');
  return (
    <div className="chart-box" data-testid="experiments-chart" data-points={points.length}>
      <canvas ref={canvas} role="img" aria-label={`Accuracy and failure classes per experiment. ${summary}`} />
    </div>
  );
}
