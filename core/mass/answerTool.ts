/**
 * The answer of a designed MASS run assembled from the team's replies, for families that name
 * `answerFields` (types.ts): the `mass_answer` tool reads every hop's reply in hop order (ports
 * `x0`, `x1`, …, each null when that call broke its contract or did not run) and the field list
 * (`fields`, from the task input), and returns `{<field>: value | null}` with each field taken from
 * the last reply that holds it as a non-empty string. Deterministic, no model call: which fields
 * exist, which replies were checked and retried, and who read whom is the design's doing, so the
 * design — not a 260K orchestrator's copying — decides the answer.
 */
import type { RunnableTool } from '../engine/index.ts';

export const ANSWER_TOOL = 'mass_answer';
/** Most hop replies the tool reads (DESIGN_LIMITS.maxHops counts re-delegated calls too). */
export const ANSWER_PORTS = 8;

/**
 * The assembly (pure): `replies` in hop order, `fields` the answer's fields. A reply that is not
 * an object, or a field that is not a non-empty string, is skipped.
 */
export function assembleAnswer(replies: readonly unknown[], fields: readonly string[]): Record<string, string | null> {
  const out: Record<string, string | null> = Object.fromEntries(fields.map((f) => [f, null]));
  for (const r of replies) {
    if (!r || typeof r !== 'object' || Array.isArray(r)) continue;
    for (const f of fields) {
      const v = (r as Record<string, unknown>)[f];
      if (typeof v === 'string' && v.trim()) out[f] = v.trim();
    }
  }
  return out;
}

export const answerTool: RunnableTool = {
  name: ANSWER_TOOL,
  inputs: { fields: { type: 'any' }, ...Object.fromEntries(Array.from({ length: ANSWER_PORTS }, (_, i) => [`x${i}`, { type: 'any' as const, optional: true }])) },
  output: { type: 'object' },
  run(inputs) {
    const fields = Array.isArray(inputs['fields']) ? (inputs['fields'] as unknown[]).filter((f): f is string => typeof f === 'string') : [];
    const replies = Array.from({ length: ANSWER_PORTS }, (_, i) => inputs[`x${i}`]);
    return assembleAnswer(replies, fields);
  },
};
