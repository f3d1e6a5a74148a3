/**
 * How the Studies view names a study's model (pure): the table is keyed by the plan's model id,
 * which the window's own studies call `model`, so its heading read "Model model" and the file
 * was shown nowhere. Now the file's name, with the id when it says something else.
 */

/** The file name of the plan's model `id` (`plan.models[].model`), or undefined. */
function modelFileOf(plan: unknown, id: string): string | undefined {
  const models = (plan as { models?: unknown } | null)?.models;
  if (!Array.isArray(models)) return undefined;
  const m = models.find((x): x is { id: string; model: string } => !!x && typeof x === 'object' && (x as { id?: unknown }).id === id && typeof (x as { model?: unknown }).model === 'string');
  return m ? (m.model.split(/[\\/]/).pop() ?? m.model) : undefined;
}

/** `stories260K.gguf`, or `stories260K.gguf (id model)` when the id is not the file's stem; the id alone when the plan does not say. */
export function studyModelLabel(plan: unknown, id: string): string {
  const file = modelFileOf(plan, id);
  if (!file) return id;
  return file.replace(/\.gguf$/i, '') === id ? file : `${file} (id ${id})`;
}
