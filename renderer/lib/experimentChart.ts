/**
 * The Experiments chart's data (pure): one point per list entry (an experiment, or a train loop's
 * or study's experiments together), in the table's order (newest first), each labelled with what
 * tells it apart (workflow / dataset, kind, date and id; a group: its kind and id); accuracy as one line per workflow + dataset,
 * so a line never joins unrelated experiments (a point of another series is a gap in this one);
 * failures as the share of tasks with a node failure of each class, so experiments of different
 * sizes compare (a cancelled 9-task run and a finished 5-task run are both per task).
 */
import type { RunRecord } from '../../core/api/client.ts';
import type { ListedExperiment, ListEntry } from './experimentGroups.ts';
import { kindLabel } from './vocabulary.ts';
import { FAILURE_CLASSES, isSimulated, type FailureCounts } from './experimentStats.ts';

type Runs = ReadonlyArray<Pick<RunRecord, 'failures' | 'simulated'>>;

/** One accuracy line: the entries of one workflow on one dataset. */
export interface ChartSeries {
  /** `<workflow>\u0000<dataset>`, or `group:<id>` for a group mixing several. */
  key: string;
  label: string;
  /** Accuracy in percent at each point of the chart; null where the point is another series'. */
  data: Array<number | null>;
}

export interface ExperimentChartData {
  /**
   * x labels, one line each: `<workflow> / <dataset>`, `<kind> · <MM-DD HH:MM>` (UTC) and the id
   * (a group: `loop|study <workflow> / <dataset>` and the group's label). Two experiments of one
   * workflow on one dataset read apart (they were both `gsm8k-team / gsm8k`).
   */
  labels: string[][];
  /** Full tooltip titles: the label with the experiment's or group's id and task count. */
  titles: string[];
  series: ChartSeries[];
  /** Per failure class, percent of the point's tasks with at least one node failure of that class; null while its runs load. */
  failureRates: Record<(typeof FAILURE_CLASSES)[number], Array<number | null>>;
  simulated: boolean[];
}

const pct = (x: number) => Math.round(x * 1000) / 10;

/** Percent of runs with at least one node failure of each class; null with no runs. */
export function failureRatesPerTask(runs: ReadonlyArray<Pick<RunRecord, 'failures'>>): Record<keyof FailureCounts, number | null> {
  const out = {} as Record<keyof FailureCounts, number | null>;
  for (const c of FAILURE_CLASSES) out[c] = runs.length ? pct(runs.filter((r) => (r.failures[c] ?? 0) > 0).length / runs.length) : null;
  return out;
}

/** Builds the chart's data from list entries (newest first, as listed, and so drawn) and the runs loaded so far. */
export function experimentChartData<E extends ListedExperiment>(entries: ReadonlyArray<ListEntry<E>>, runsOf: (id: string) => Runs | undefined): ExperimentChartData {
  const ordered = entries;
  const labels: string[][] = [];
  const titles: string[] = [];
  const simulated: boolean[] = [];
  const failureRates = Object.fromEntries(FAILURE_CLASSES.map((c) => [c, [] as Array<number | null>])) as ExperimentChartData['failureRates'];
  const seriesByKey = new Map<string, ChartSeries>();
  const accuracies: Array<{ key: string; label: string; value: number | null }> = [];

  for (const entry of ordered) {
    const members = entry.type === 'single' ? [entry.experiment] : entry.members;
    const workflows = [...new Set(members.map((e) => e.workflowName))];
    const datasets = [...new Set(members.map((e) => e.dataset))];
    const mixed = workflows.length > 1 || datasets.length > 1;
    const pair = `${workflows.join(', ')} / ${datasets.join(', ')}`;
    const key = mixed && entry.type === 'group' ? `group:${entry.group.id}` : `${workflows[0]}\u0000${datasets[0]}`;
    const done = members.reduce((s, e) => s + e.runsDone, 0);
    const correct = members.reduce((s, e) => s + e.runsCorrect, 0);
    const loaded = members.map((e) => runsOf(e.id));
    const runs = loaded.every((r) => r !== undefined) ? loaded.flatMap((r) => [...r!]) : undefined;
    const label = entry.type === 'group' ? `${entry.group.kind === 'study' ? 'study' : 'loop'} ${pair}` : pair;
    labels.push(entry.type === 'group' ? [label, entry.group.label] : [pair, `${kindLabel(entry.experiment.kind)} · ${new Date(entry.experiment.createdAt).toISOString().slice(5, 16).replace('T', ' ')}`, entry.experiment.id]);
    titles.push(`${label}: ${entry.type === 'group' ? `${entry.group.label} (${members.length} experiments)` : entry.experiment.id}, ${done} task${done === 1 ? '' : 's'}`);
    simulated.push(members.some((e, i) => isSimulated(e, loaded[i])));
    const rates = runs ? failureRatesPerTask(runs) : null;
    for (const c of FAILURE_CLASSES) failureRates[c].push(rates ? rates[c] : null);
    accuracies.push({ key, label: pair, value: done ? pct(correct / done) : null });
    if (!seriesByKey.has(key)) seriesByKey.set(key, { key, label: `accuracy % · ${pair}`, data: [] });
  }
  for (const s of seriesByKey.values()) s.data = accuracies.map((a) => (a.key === s.key ? a.value : null));
  return { labels, titles, series: [...seriesByKey.values()], failureRates, simulated };
}
