/**
 * The default id of a MASS inner loop and the check that a resumed one uses the models it ran
 * with (issue 29: the default id was `evo-<dataset>-<seed>-<rule>`, the same for every model, so a
 * second model "resumed" the first model's evolution and failed with MODEL_FILE_CHANGED naming the
 * new file as changed; the same command with the same model printed the stored evolution).
 */
import type { ModelConfig } from '../model/index.ts';

/**
 * `evo-<dataset>-<seed>-<rule>-<model>`: `<model>` is the model file's name without `.gguf`,
 * lower-cased, characters other than letters, digits, `.`, `_` and `-` as `-`, at most 48 of them
 * (an `openai:` endpoint reference gives its model name, after `#`). Two model files with the same
 * name in different folders share an id; the model check then names both (`modelMismatch`).
 */
export function defaultEvolutionId(dataset: string, seed: number, rule: string, model: string): string {
  const name = model.includes('#') ? model.slice(model.lastIndexOf('#') + 1) : (model.split(/[\\/]/).pop() ?? model);
  const stem = name.replace(/\.gguf$/i, '').toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 48) || 'model';
  return `evo-${dataset}-${seed}-${rule}-${stem}`;
}

/**
 * Why `current` cannot resume an evolution whose steps ran with `recorded`: the first model
 * reference whose file differs, as a message naming the stored file, the given one, and the two
 * ways on (the same file, or `--id` for a new evolution); undefined when every reference names the
 * same file (a changed file at the same path is the fingerprint check's, models/resolve.ts).
 */
export function modelMismatch(evolutionId: string, recorded: Pick<ModelConfig, 'models'>, current: Pick<ModelConfig, 'models'>): string | undefined {
  for (const [ref, file] of Object.entries(current.models)) {
    const was = recorded.models[ref];
    if (was !== undefined && was !== file) {
      return `evolution ${evolutionId} ran with ${was} as model "${ref}", not ${file}: give that file to resume it, or start a new evolution with --id <new-id>`;
    }
  }
  return undefined;
}
