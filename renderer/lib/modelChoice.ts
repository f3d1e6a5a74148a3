/**
 * Which model file a form starts with (pure). It was the first file of the model folder, which is
 * often a random-weights test model (`llama-2-tiny-random.gguf` sorts before `stories260K.gguf`):
 * now the model the newest matching experiment ran with, when it is usable; else the first file
 * whose name (file or header) does not say it has random weights; else the first.
 */
import type { ExperimentSummary, ModelEntry } from '../../core/api/client.ts';

/** Whether a model says it has random weights (its file name or its header's name). */
export function isRandomWeights(m: Pick<ModelEntry, 'fileName' | 'info'>): boolean {
  return /random/i.test(m.fileName) || /random/i.test(m.info?.name ?? '');
}

/**
 * The path a form should preselect among `usable` models: the newest experiment in `experiments`
 * (newest first, as the list comes) that `recent` accepts and that used one of them, else the first
 * model without random weights, else the first; '' when there is none.
 */
export function preferredModel(
  usable: ReadonlyArray<Pick<ModelEntry, 'path' | 'fileName' | 'info'>>,
  experiments: ReadonlyArray<Pick<ExperimentSummary, 'kind' | 'models'>> = [],
  recent: (e: Pick<ExperimentSummary, 'kind'>) => boolean = () => true,
): string {
  for (const e of experiments) {
    if (!recent(e)) continue;
    const used = usable.find((m) => e.models.includes(m.fileName));
    if (used) return used.path;
  }
  return (usable.find((m) => !isRandomWeights(m)) ?? usable[0])?.path ?? '';
}
