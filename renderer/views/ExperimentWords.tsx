/**
 * The selected experiment in the CLI's words, shared by Trace, Ladder and the run picker (issue 29
 * part 4): what it ran as `flowlab show <experiment-id>` heads it (kind, workflow, dataset, models)
 * and its rollout group size, so a run's task reads `task/rollout` as `flowlab ls` prints it.
 */
import { experimentContext, rolloutGroupOf } from '../lib/vocabulary.ts';
import { useLabPick } from '../useLab.ts';

/** What Trace and Ladder show of the selected experiment: its `show` line (null while it loads) and G (0: no groups). */
export function useExperimentWords(): { context: string | null; group: number } {
  const { experiment, experiments, selectedExperimentId } = useLabPick('experiment', 'experiments', 'selectedExperimentId');
  const detail = experiment.status === 'ready' && experiment.data.id === selectedExperimentId ? experiment.data : undefined;
  const listed = experiments.status === 'ready' ? experiments.data.find((e) => e.id === selectedExperimentId) : undefined;
  const e = detail ?? listed;
  return { context: e ? experimentContext({ ...e, models: listed?.models ?? [] }) : null, group: rolloutGroupOf(detail) };
}

/** The `show` line of an experiment, e.g. `run · workflow gsm8k-team · dataset gsm8k/test · models tiny.gguf`. */
export function ExperimentContextLine({ context, testId }: { context: string | null; testId: string }) {
  if (!context) return null;
  return (
    <p className="muted small" data-testid={testId}>
      {context}
    </p>
  );
}
