/**
 * The stored experiment config (`experiments.config_json`), decoded on the way out of the
 * database, never cast by its readers (the tldraw habit: every stored record comes back through
 * its record type's validator and migrations — `packages/store/src/lib/RecordType.ts`,
 * `migrate.ts`).
 *
 * Versions: a config carries its shape's version in `v`; a config without one is version 1, the
 * shape every Flowlab so far wrote (no database needs rewriting to open). A later shape adds its
 * version to {@link CONFIG_MIGRATIONS} (a pure function from the version before), and
 * {@link decodeExperimentConfig} runs the migrations in order, then validates. Writers keep
 * writing version 1 until then.
 *
 * What is checked: every field a reader in Flowlab relies on (models, workflow file, data folder,
 * offset, hint cards, weight versions, SIMULATED faults, rollouts, corpus, train-loop
 * membership, source); what a kind adds beyond them (`mass`, `fork`, `import`, a train loop's
 * `hyper`) is kept as stored and decoded by its owner. A config that does not decode is a
 * `StoreError` `CORRUPT_RECORD` naming the experiment and the field (`config.models.roleModels`).
 */
import { z } from 'zod';
import type { ModelConfig } from '../model/config.ts';
import { StoreError } from './errors.ts';

/** The config shape this Flowlab writes and reads. */
export const CONFIG_VERSION = 1;

const str = z.string();
const strings = z.array(z.string());
const record = z.record(z.string(), z.string());

/** `ModelConfig` (core/model/config.ts) as stored: every field a resume, replay or fork reads. */
export const modelConfigSchema = z.looseObject({
  models: record,
  roleModels: record,
  threads: z.number().optional(),
  contextSize: z.number().optional(),
  gpu: z.union([z.literal('auto'), z.literal(false)]),
  fingerprints: record.optional(),
  sequences: z.number().optional(),
  batching: z.enum(['mixed', 'isolated']).optional(),
  loras: z.record(z.string(), z.array(z.looseObject({ path: str, scale: z.number().optional() }))).optional(),
  loraFingerprints: record.optional(),
  exactAttention: z.boolean().optional(),
  batchSize: z.number().optional(),
  prefixReuse: z.boolean().optional(),
}) satisfies z.ZodType<ModelConfig>;
const modelConfig = modelConfigSchema;

/** Hint cards of a `run` (core/distill `CardsConfig`). */
export const storedCardsSchema = z.looseObject({
  selection: z.union([z.literal('all'), z.literal('none'), strings]),
  ids: strings,
  budgetTokens: z.number(),
  distill: z.looseObject({ every: z.number(), shots: z.number(), roles: strings, onlySuccesses: z.boolean(), budgetTokens: z.number(), maxTokens: z.number() }).optional(),
});

const cards = storedCardsSchema;

/** Rollouts' sampling and mode (core/rollouts `RolloutsConfig`). */
const rollouts = z.looseObject({ group: z.number(), temperature: z.number(), mode: str, learningRoles: strings, recordTokens: z.boolean().optional() });

/**
 * The schema of a version-{@link CONFIG_VERSION} config as the store reads every row: each field
 * a reader relies on has its type when present (`offset` a whole number, `inject` strings...),
 * its parts checked as far as they are given. What a kind needs whole (a resume needs the
 * complete `ModelConfig`) its codec checks on top: {@link storedModels}, {@link storedRollouts},
 * {@link storedCards}.
 */
export const experimentConfigSchema = z.looseObject({
  v: z.literal(CONFIG_VERSION).optional(),
  workflowFile: str.optional(),
  offset: z.number().int().min(0).optional(),
  dataDir: str.optional(),
  models: modelConfig.partial().optional(),
  source: str.optional(),
  corpus: z.looseObject({ dir: str, signature: str, passages: z.number() }).optional(),
  cards: cards.partial().optional(),
  /** `role=versionId` strings. */
  roleVersions: strings.optional(),
  inject: strings.optional(),
  simulated: z.boolean().optional(),
  rollouts: rollouts.partial().optional(),
  /** A train loop's experiment: its loop, iteration or held-out phase (core/training/steps.ts). */
  trainLoop: z.looseObject({ loopId: str.optional(), iteration: z.number().optional(), phase: str.optional(), samples: z.number().optional(), temperature: z.number().optional() }).optional(),
});

/** A stored experiment config, decoded (see the module comment). */
export type ExperimentConfig = z.infer<typeof experimentConfigSchema>;

/**
 * Migrations by the version they produce: `CONFIG_MIGRATIONS[k]` turns a version `k - 1` config
 * into version `k`. Version 1 is the first (no migration); a shape change adds its step here
 * and a test that decodes the old shape.
 */
export const CONFIG_MIGRATIONS: Readonly<Record<number, (old: Record<string, unknown>) => Record<string, unknown>>> = {};

/**
 * `config` (of version `from`) brought to version `to` by `migrations[from + 1]`, … `migrations[to]`
 * in order (each a pure function of the version before). A missing step is a programming error
 * (throws). {@link decodeExperimentConfig} calls it with {@link CONFIG_MIGRATIONS}.
 */
export function migrateConfig(config: Record<string, unknown>, from: number, to: number, migrations: Readonly<Record<number, (old: Record<string, unknown>) => Record<string, unknown>>>): Record<string, unknown> {
  let out = config;
  for (let k = from + 1; k <= to; k++) {
    const step = migrations[k];
    if (!step) throw new Error(`migrateConfig: no migration to config version ${k}`);
    out = step(out);
  }
  return out;
}

/** Where `issue` lies, as a path under `base` (`config.models.roleModels.solver`). */
function pathOf(issue: z.core.$ZodIssue, base: string): string {
  return [base, ...issue.path.map(String)].join('.');
}

/** `value` parsed by `schema`, or StoreError `CORRUPT_RECORD` naming experiment `id` and the field under `base`. */
function decodeField<T>(schema: z.ZodType<T>, value: unknown, id: string, base: string): T {
  return decodeStored(schema, value, `experiment ${id}`, base);
}

/**
 * `value` (a stored JSON column of row `id`) parsed by `schema`, or StoreError `CORRUPT_RECORD`
 * naming the row (`what`, e.g. `train loop tl-…`) and the field under `base` (`plan.models.gpu`).
 */
export function decodeStored<T>(schema: z.ZodType<T>, value: unknown, what: string, base: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new StoreError('CORRUPT_RECORD', `${what}: ${pathOf(issue, base)}: ${issue.message}`, what, { cause: parsed.error });
}

/** A stored row's config and id, as the kind codecs below read it. */
interface WithConfig {
  id: string;
  config: ExperimentConfig | null;
}

/**
 * The experiment's complete `ModelConfig` (what resume, replay, fork and distil load), or
 * undefined when it recorded none (an import).
 * @throws StoreError `CORRUPT_RECORD` naming the row and the missing or wrong field (`config.models.roleModels`).
 */
export function storedModels(exp: WithConfig): ModelConfig | undefined {
  const models = exp.config?.models;
  return models === undefined ? undefined : decodeField(modelConfig, models, exp.id, 'config.models');
}

/** A rollouts experiment's complete rollouts config, or undefined when it has none. @throws StoreError `CORRUPT_RECORD` (row and field named). */
export function storedRollouts(exp: WithConfig): z.infer<typeof rollouts> | undefined {
  const r = exp.config?.rollouts;
  return r === undefined ? undefined : decodeField(rollouts, r, exp.id, 'config.rollouts');
}

/** A run's complete hint-card config, or undefined when it has none. @throws StoreError `CORRUPT_RECORD` (row and field named). */
export function storedCards(exp: WithConfig): z.infer<typeof cards> | undefined {
  const c = exp.config?.cards;
  return c === undefined ? undefined : decodeField(cards, c, exp.id, 'config.cards');
}

/**
 * Decodes a stored config (the parsed JSON of `config_json`) of experiment `id`: migrations from
 * its version (`v`, absent = 1) to {@link CONFIG_VERSION}, then the schema. `null` (a config
 * never given) decodes to `null`.
 * @throws StoreError `CORRUPT_RECORD` naming the experiment and the field: not an object, a field
 *   of the wrong shape, or a version newer than this Flowlab knows.
 */
export function decodeExperimentConfig(value: unknown, id: string): ExperimentConfig | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new StoreError('CORRUPT_RECORD', `experiment ${id}: config is not an object (${Array.isArray(value) ? 'an array' : typeof value})`, id);
  }
  let config: Record<string, unknown> = Object.fromEntries(Object.entries(value));
  const stored = config.v ?? 1;
  if (typeof stored !== 'number' || !Number.isInteger(stored) || stored < 1) {
    throw new StoreError('CORRUPT_RECORD', `experiment ${id}: config.v: not a config version (${JSON.stringify(stored)})`, id);
  }
  if (stored > CONFIG_VERSION) {
    throw new StoreError('CORRUPT_RECORD', `experiment ${id}: config.v: version ${stored} was written by a newer Flowlab (this one reads up to ${CONFIG_VERSION})`, id);
  }
  config = migrateConfig(config, stored, CONFIG_VERSION, CONFIG_MIGRATIONS);
  return decodeField(experimentConfigSchema, config, id, 'config');
}

/** The error of a config field a kind needs and the row lacks: StoreError `CORRUPT_RECORD` naming the row and the field. */
export function missingConfigField(id: string, field: string): StoreError {
  return new StoreError('CORRUPT_RECORD', `experiment ${id}: ${field}: missing (the experiment's kind needs it)`, id);
}
