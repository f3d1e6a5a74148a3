/**
 * The one schema of a new experiment's spec (`run`, `blame-eval`, `rollouts`), shared by both
 * faces: the CLI's commands (`flowlab run`, `blame-eval`, `rollouts`) and the lab's `startRun`
 * build their {@link ExperimentInput} and call {@link buildExperimentSpec}, which validates it
 * with the kind's strict schema and fills the kind's defaults. A field the kind does not use is
 * refused with the field named (`runs` is for a blame evaluation; `group`, `temperature`,
 * `mode`, `recordTokens` for rollouts; `inject` for a blame evaluation; `cards`, `roleVersions`
 * for a run), never silently ignored.
 */
import { z } from 'zod';
import { ExperimentSpecError, type ExperimentSpec, type WorkflowSource } from '../experiments/spec.ts';
import { MAX_PARALLEL } from '../limits.ts';
import { modelConfigSchema, storedCardsSchema } from '../store/config.ts';

/** The experiment kinds a face starts (resume is a job of its own: the experiment service's `resume`). */
export const EXPERIMENT_KINDS = ['run', 'blame-eval', 'rollouts'] as const;
export type ExperimentKindName = (typeof EXPERIMENT_KINDS)[number];

/** Defaults of rollouts, as `flowlab rollouts` documents them. */
export const ROLLOUT_DEFAULTS = { temperature: 0.8, mode: 'multi-agent' } as const;

/** What each kind adds to the common fields (and so which fields each kind refuses). */
const KIND_FIELDS: Record<ExperimentKindName, readonly string[]> = {
  run: ['cards', 'roleVersions'],
  'blame-eval': ['inject', 'runs'],
  rollouts: ['group', 'temperature', 'mode', 'recordTokens'],
};

/** How a face names a kind in a refusal. */
const KIND_LABEL: Record<ExperimentKindName, string> = { run: 'a run', 'blame-eval': 'a blame evaluation (SIMULATED faults, `inject`)', rollouts: 'rollouts (`kind: rollouts`)' };

const whole = (min: number) => z.number().int().min(min);
/** A parsed workflow (core/workflow `Graph`: its roles and nodes by name) and its text. */
const workflow = z.custom<WorkflowSource>((w) => {
  const parsed = z.looseObject({ graph: z.looseObject({ name: z.string(), nodes: z.array(z.unknown()), roles: z.instanceof(Map) }), text: z.string(), file: z.string().optional() }).safeParse(w);
  return parsed.success;
}, 'must be a parsed workflow with its text');

const common = {
  workflow,
  dataset: z.string().min(1),
  split: z.string().min(1),
  limit: whole(1),
  offset: whole(0).optional(),
  seed: whole(0),
  dataDir: z.string().optional(),
  models: modelConfigSchema,
  source: z.string().optional(),
  experimentId: z.string().optional(),
  corpus: z.strictObject({ dir: z.string(), signature: z.string(), passages: z.number() }).optional(),
  /** Tasks in flight (`--parallel`, core/schedule); not stored: results do not depend on it. */
  parallel: whole(1).max(MAX_PARALLEL).optional(),
};

/** The strict schema of each kind's spec (an unknown field, or another kind's, is refused). */
export const experimentSpecSchemas = {
  run: z.strictObject({ kind: z.literal('run'), ...common, cards: storedCardsSchema.optional(), roleVersions: z.record(z.string(), z.string()).optional() }),
  'blame-eval': z.strictObject({ kind: z.literal('blame-eval'), ...common, inject: z.array(z.string().min(1)).min(1, 'must name at least one fault'), runs: whole(1).optional() }),
  rollouts: z.strictObject({
    kind: z.literal('rollouts'), ...common,
    group: whole(1).max(64),
    temperature: z.number().min(0).max(5).default(ROLLOUT_DEFAULTS.temperature),
    mode: z.string().min(1).default(ROLLOUT_DEFAULTS.mode),
    recordTokens: z.boolean().optional(),
  }),
} as const;

/** What a face hands in: the kind, the common fields and that kind's own (see the module comment). */
export type ExperimentInput = { kind: ExperimentKindName } & Record<string, unknown>;

/** A new experiment's spec, as the experiment service takes it. */
export type NewExperiment = Exclude<ExperimentSpec, { kind: 'resume' }>;

/**
 * Validates `input` with its kind's schema and fills the kind's defaults.
 * @throws ExperimentSpecError `UNUSED_FIELD` naming a field the kind does not use (the kind that
 *   does is named), `BAD_SPEC` naming a field of the wrong form (or `kind` for an unknown kind).
 */
export function buildExperimentSpec(input: ExperimentInput): NewExperiment {
  const kind = input.kind;
  if (!(EXPERIMENT_KINDS as readonly string[]).includes(kind)) {
    throw new ExperimentSpecError('BAD_SPEC', 'kind', `unknown experiment kind "${String(kind)}" (kinds: ${EXPERIMENT_KINDS.join(', ')})`);
  }
  // Fields left undefined are not given (both faces spread optional values).
  const given = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
  const parsed = experimentSpecSchemas[kind].safeParse(given);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const field = issue.keys[0]!;
    const owner = EXPERIMENT_KINDS.find((k) => KIND_FIELDS[k].includes(field));
    const whose = owner ? `it is for ${KIND_LABEL[owner]}` : 'no experiment kind takes it';
    throw new ExperimentSpecError('UNUSED_FIELD', field, `${field} is not used by ${KIND_LABEL[kind]}: ${whose}`, { kind });
  }
  const field = issue.path.map(String).join('.') || 'spec';
  throw new ExperimentSpecError('BAD_SPEC', field, `${field}: ${issue.message}`, { kind });
}
