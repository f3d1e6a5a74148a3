/**
 * The two heavy libraries load on first use, in their own chunks: cytoscape (graphs) and
 * chart.js (the experiments chart). The shell and the forms appear without waiting for them.
 * Once a chunk is loaded its component renders directly, not through Suspense: React throttles
 * revealing suspended content (about 300 ms), which would delay every graph.
 */
import { lazy, Suspense, type ComponentType } from 'react';
import type { ExperimentPoint } from '../lib/experimentStats.ts';
import type { Theme } from '../lib/graphStyle.ts';
import type { GraphCanvasProps } from './GraphCanvas.tsx';
import type { LearningChartProps } from './LearningChart.tsx';

interface Chunk<P> {
  load(): Promise<ComponentType<P>>;
  loaded: ComponentType<P> | null;
  Lazy: ComponentType<P>;
}

function chunk<P>(importer: () => Promise<ComponentType<P>>): Chunk<P> {
  let pending: Promise<ComponentType<P>> | null = null;
  const c: Chunk<P> = {
    loaded: null,
    load() {
      pending ??= importer().then((component) => (c.loaded = component));
      return pending;
    },
    Lazy: lazy(() => c.load().then((component) => ({ default: component }))),
  };
  return c;
}

const graph = chunk<GraphCanvasProps>(() => import('./GraphCanvas.tsx').then((m) => m.GraphCanvas));
const chart = chunk<{ points: ExperimentPoint[]; theme: Theme }>(() => import('./ExperimentsChart.tsx').then((m) => m.ExperimentsChart));

const learningChart = chunk<LearningChartProps>(() => import('./LearningChart.tsx').then((m) => m.LearningChart));

/** Fetches and compiles the graph chunk ahead of need (the App calls it once the shell is up). */
export function preloadGraph(): void {
  void graph.load();
}

export function GraphCanvas(props: GraphCanvasProps) {
  const Loaded = graph.loaded;
  if (Loaded) return <Loaded {...props} />;
  return (
    <Suspense fallback={<div className="graph" role="status" aria-label="Loading the graph…" />}>
      <graph.Lazy {...props} />
    </Suspense>
  );
}

export function ExperimentsChart(props: { points: ExperimentPoint[]; theme: Theme }) {
  const Loaded = chart.loaded;
  if (Loaded) return <Loaded {...props} />;
  return (
    <Suspense fallback={<div className="chart-box" role="status" aria-label="Loading the chart…" />}>
      <chart.Lazy {...props} />
    </Suspense>
  );
}

export function LearningChart(props: LearningChartProps) {
  const Loaded = learningChart.loaded;
  if (Loaded) return <Loaded {...props} />;
  return (
    <Suspense fallback={<div className="chart-box" data-testid="learning-chart" role="status" aria-label="Loading the chart…" />}>
      <learningChart.Lazy {...props} />
    </Suspense>
  );
}
