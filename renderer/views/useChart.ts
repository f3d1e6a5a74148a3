import { Chart, type ChartConfiguration, type ChartType } from 'chart.js';
import { useEffect, useRef, type RefObject } from 'react';
import type { Theme } from '../lib/graphStyle.ts';

/**
 * A chart.js chart on a canvas: built (and destroyed) when the theme changes; when the data
 * changes only `data` is swapped and updated in place, without animation (no flicker while live).
 * `config` is read at each of those moments.
 */
export function useChart<T extends ChartType>(config: () => ChartConfiguration<T, Array<number | null>, string>, theme: Theme, data: unknown): RefObject<HTMLCanvasElement | null> {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart<T, Array<number | null>, string> | null>(null);
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
