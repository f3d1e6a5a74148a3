/**
 * Accuracy and failure classes per experiment or group (renderer/lib/experimentChart.ts), with
 * chart.js (tree-shaken: bar + line only), on one percent axis: accuracy as one line per
 * workflow + dataset (never across unrelated experiments), failures as the share of tasks with a
 * failure of each class (bars that also differ by border dash, so they read without colour).
 */
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, LineController, LineElement, PointElement, Tooltip, type ChartConfiguration } from 'chart.js';
import { chartOptions, chartPalette, useChart } from './useChart.ts';
import type { ExperimentChartData } from '../lib/experimentChart.ts';
import { FAILURE_CLASSES } from '../lib/experimentStats.ts';
import type { Theme } from '../lib/graphStyle.ts';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, LineController, LineElement, PointElement, Legend, Tooltip);

const CLASS_COLOUR: Record<Theme, Record<(typeof FAILURE_CLASSES)[number], string>> = {
  light: { wiring: '#8e5bd1', execution: '#c0392b', cascade: '#d98c1f', infrastructure: '#6b7580' },
  dark: { wiring: '#b690f0', execution: '#ff8a80', cascade: '#f2c26b', infrastructure: '#9aa3ae' },
};
/** One colour and point style per accuracy series (workflow + dataset), so two series differ without colour too. */
const SERIES_COLOUR: Record<Theme, string[]> = {
  light: ['#1f5fbf', '#0f7b6c', '#8a4baf', '#b5541b', '#44546a'],
  dark: ['#7fb0ff', '#5fd3c0', '#c9a2f0', '#f0a070', '#b8c4d4'],
};
const POINT_STYLES = ['rectRot', 'circle', 'triangle', 'rect', 'star'] as const;
const DASH: Record<(typeof FAILURE_CLASSES)[number], number[]> = { wiring: [], execution: [4, 2], cascade: [1, 2], infrastructure: [6, 3] };

function config(d: ExperimentChartData, theme: Theme): ChartConfiguration<'bar' | 'line', Array<number | null>, string[]> {
  const { text, grid } = chartPalette(theme);
  const lines = SERIES_COLOUR[theme];
  return {
    type: 'bar',
    data: {
      labels: d.labels.map((l, i) => (d.simulated[i] ? [...l, 'SIMULATED'] : l)),
      datasets: [
        ...d.series.map((s, i) => ({
          type: 'line' as const,
          label: s.label,
          data: s.data,
          yAxisID: 'pct',
          borderColor: lines[i % lines.length]!,
          backgroundColor: lines[i % lines.length]!,
          pointStyle: POINT_STYLES[i % POINT_STYLES.length]!,
          pointRadius: 5,
          // Gaps are other series' points: the line joins only this workflow on this dataset.
          spanGaps: true,
          order: 0,
        })),
        ...FAILURE_CLASSES.map((c) => ({
          type: 'bar' as const,
          label: `runs with ${c} failures %`,
          data: d.failureRates[c],
          yAxisID: 'pct',
          backgroundColor: CLASS_COLOUR[theme][c] + '99',
          borderColor: CLASS_COLOUR[theme][c],
          borderWidth: 1.5,
          borderDash: DASH[c],
          maxBarThickness: 22,
          order: 1,
        })),
      ],
    },
    options: {
      ...chartOptions(text, {
        x: { ticks: { color: text, maxRotation: 40, minRotation: 0, autoSkip: true, font: { size: 12 } }, grid: { color: grid } },
        pct: { type: 'linear' as const, position: 'left' as const, min: 0, max: 100, title: { display: true, text: '% of runs (accuracy, runs with a failure)', color: text }, ticks: { color: text }, grid: { color: grid } },
      }),
      layout: { padding: { bottom: 4, left: 4, right: 8 } },
      plugins: {
        legend: { labels: { color: text, boxWidth: 14 } },
        tooltip: { mode: 'index' as const, intersect: false, callbacks: { title: (items: Array<{ dataIndex: number }>) => d.titles[items[0]?.dataIndex ?? 0] ?? '' } },
      },
    },
  };
}

export function ExperimentsChart({ data, theme }: { data: ExperimentChartData; theme: Theme }) {
  const canvas = useChart(() => config(data, theme), theme, data);
  const summary = data.titles.map((t, i) => `${t}: accuracy ${data.series.map((s) => s.data[i]).find((v) => v !== null) ?? '–'}%`).join('; ');
  return (
    <div className="chart-box" data-testid="experiments-chart" data-points={data.labels.length} data-labels={JSON.stringify(data.labels)} data-series={data.series.length}>
      <canvas ref={canvas} role="img" aria-label={`Accuracy per workflow and dataset, and the share of runs with failures of each class, per experiment or group. ${summary}`} />
    </div>
  );
}
