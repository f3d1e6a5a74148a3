/**
 * The two heavy libraries load on first use, in their own chunks: cytoscape (graphs) and
 * chart.js (the experiments chart). The shell and the forms appear without waiting for them.
 * Once a chunk is loaded its component renders directly, not through Suspense: React throttles
 * revealing suspended content (about 300 ms), which would delay every graph.
 */
import { lazy, Suspense, type ComponentType, type ReactNode } from 'react';
import type { ExperimentChartData } from '../lib/experimentChart.ts';
import type { Theme } from '../lib/graphStyle.ts';
import type { GraphCanvasProps } from './GraphCanvas.tsx';
import type { CoevolutionChartProps, LearningChartProps } from './LearningChart.tsx';

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
const chart = chunk<{ data: ExperimentChartData; theme: Theme }>(() => import('./ExperimentsChart.tsx').then((m) => m.ExperimentsChart));

const learningChart = chunk<LearningChartProps>(() => import('./LearningChart.tsx').then((m) => m.LearningChart));
const coevolutionChart = chunk<CoevolutionChartProps>(() => import('./LearningChart.tsx').then((m) => m.CoevolutionChart));

/** Fetches and compiles the graph chunk ahead of need (the App calls it once the shell is up). */
export function preloadGraph(): void {
  void graph.load();
}

/**
 * The component of a chunk: rendered directly once loaded, else through Suspense with `fallback`
 * (a placeholder of the same box, so the layout does not jump).
 */
function lazyComponent<P extends object>(c: Chunk<P>, fallback: ReactNode): (props: P) => ReactNode {
  return function LazyComponent(props: P) {
    const Loaded = c.loaded;
    if (Loaded) return <Loaded {...props} />;
    return (
      <Suspense fallback={fallback}>
        <c.Lazy {...props} />
      </Suspense>
    );
  };
}

export const GraphCanvas = lazyComponent(graph, <div className="graph" role="status" aria-label="Loading the graph…" />);
export const ExperimentsChart = lazyComponent(chart, <div className="chart-box" role="status" aria-label="Loading the chart…" />);
export const LearningChart = lazyComponent(learningChart, <div className="chart-box" data-testid="learning-chart" role="status" aria-label="Loading the chart…" />);
export const CoevolutionChart = lazyComponent(coevolutionChart, <div className="chart-box" data-testid="coevolution-chart" role="status" aria-label="Loading the chart…" />);
