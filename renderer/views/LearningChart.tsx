/**
 * A role's mean reward (left axis, 0..1) and KL to the starting weights (right axis) per
 * train-loop iteration, with chart.js (line only). The two lines differ by dash and point style.
 */
import { CategoryScale, Chart, Legend, LinearScale, LineController, LineElement, PointElement, Tooltip, type ChartConfiguration } from 'chart.js';
import { chartOptions, chartPalette, useChart } from './useChart.ts';
import type { Theme } from '../lib/graphStyle.ts';
import type { ChartSeries } from '../lib/learning.ts';

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
