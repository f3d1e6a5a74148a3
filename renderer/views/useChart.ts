import { Chart, type ChartConfiguration, type ChartType } from 'chart.js';
import { useEffect, useRef, type RefObject } from 'react';
import type { Theme } from '../lib/graphStyle.ts';

/**
 * A chart.js chart on a canvas: built (and destroyed) when the theme changes; when the data
 * changes only `data` is swapped and updated in place, without animation (no flicker while live).
 * `config` is read at each of those moments. `L`: an x label, a string or lines of one (string[]).
 */
export function useChart<T extends ChartType, L = string>(config: () => ChartConfiguration<T, Array<number | null>, L>, theme: Theme, data: unknown): RefObject<HTMLCanvasElement | null> {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart<T, Array<number | null>, L> | null>(null);
  useEffect(() => {
    if (!canvas.current) return;
    chart.current = new Chart(canvas.current, config());
    return () => {
      chart.current?.destroy();
      chart.current = null;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- rebuilt on theme changes only
  }, [theme]);
  useEffect(() => {
    const c = chart.current;
    if (!c) return;
    c.data = config().data;
    c.update('none');
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [data, theme]);
  return canvas;
}

/** A theme's chart colours: text (legends, ticks, titles), grid lines, and the accent of the first series. */
export function chartPalette(theme: Theme): { text: string; grid: string; accent: string } {
  return theme === 'dark' ? { text: '#e4e6ea', grid: '#2f343b', accent: '#7fb0ff' } : { text: '#1d1f23', grid: '#e3e6ea', accent: '#1f5fbf' };
}

/**
 * The options every Flowlab chart shares around its `scales`: it fills its box, never animates,
 * colours legend text with `text`, and its tooltip lists every series at the hovered index.
 */
export function chartOptions<S>(text: string, scales: S) {
  return {
    responsive: true,
    maintainAspectRatio: false,
    animation: false as const,
    color: text,
    scales,
    plugins: { legend: { labels: { color: text } }, tooltip: { mode: 'index' as const, intersect: false } },
  };
}
