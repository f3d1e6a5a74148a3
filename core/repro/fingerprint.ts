/**
 * Reproducibility fingerprints (docs/laptop-rl.md "Reproducibility"; `flowlab verify`): what
 * determines an experiment, train loop, study or evolution — the hashes of its inputs (workflow
 * text, task list, plan, flags), its seed, its model files' fingerprints, the decode settings,
 * the code version and the native library versions — as one canonical JSON object and its
 * sha256. Pure: the environment (code and library versions) comes from the model port.
 */
import { createHash } from 'node:crypto';
import { isEndpointRef } from '../model/endpoint.ts';
import type { ModelConfig } from '../model/config.ts';
import { canonicalJson } from '../store/mass.ts';
import type { ReproKind, Store } from '../store/index.ts';

/** The code and native library versions a run ran with (`ModelPort.environment`, models/environment.ts). */
export interface ReproEnvironment {
  /** `flowlab` (package version), `commit` (git HEAD, when known), `dirty` (`yes` with uncommitted changes). */
  code: Record<string, string>;
  /** `node`, `node-llama-cpp`, `llama.cpp`, `better-sqlite3`, `tfjs-core`, ... */
  native: Record<string, string>;
}

/** Exactly repeatable on this machine, or why not (printed in tables and by `flowlab verify`). */
export type Repeatability = 'exact' | 'not guaranteed: server-side batching' | 'not guaranteed: mixed decode batches';

/** A fingerprint (stored as JSON in `repro_records`; `schema` versions its shape). */
export interface Fingerprint {
  schema: 1;
  kind: ReproKind;
  /** Input name -> sha256 (hex) of its canonical text, or a plain value (a dataset name, a split). */
  inputs: Record<string, string>;
  seed: number | null;
  /** Model reference -> the file's fingerprint (size + sha256 of its head and tail, models/resolve.ts) or `endpoint`. */
  models: Record<string, string>;
  /** The settings that decide what is decoded with what: batching, threads, context, batch size, attention, prefix reuse. */
  decode: Record<string, string | number | boolean>;
  code: Record<string, string>;
  native: Record<string, string>;
  repeatability: Repeatability;
}

/** sha256 (hex) of a string (UTF-8) or of a value's canonical JSON (keys sorted). */
export function sha256Of(value: unknown): string {
  return createHash('sha256').update(typeof value === 'string' ? value : canonicalJson(value)).digest('hex');
}

/**
 * Whether runs on `models` repeat exactly: a model on a server (`openai:` reference) shares the
 * server's batches with other clients, so no; `batching: 'mixed'` (the bench-only timing-ordered
 * baseline) lets timing decide what shares a decode batch, so no; otherwise `exact` — every decode
 * holds one sequence and every recorded call starts from an empty sequence (models/llama).
 */
export function repeatabilityOf(models: ModelConfig | undefined): Repeatability {
  if (!models) return 'exact';
  if (Object.values(models.models ?? {}).some((f) => isEndpointRef(f))) return 'not guaranteed: server-side batching';
  if (models.batching === 'mixed') return 'not guaranteed: mixed decode batches';
  return 'exact';
}

/** The decode settings of a model config, with their defaults named (what is not set is `default`). */
export function decodeSettings(models: ModelConfig | undefined, extra: Record<string, string | number | boolean> = {}): Record<string, string | number | boolean> {
  return {
    batching: models?.batching ?? 'isolated',
    threads: models?.threads ?? 'default',
    contextSize: models?.contextSize ?? 'default',
    batchSize: models?.batchSize ?? 'default',
    sequences: models?.sequences ?? 'default',
    exactAttention: models?.exactAttention ?? false,
    prefixReuse: models?.prefixReuse ?? true,
    gpu: models?.gpu === 'auto' ? 'auto' : false,
    ...extra,
  };
}

/**
 * A fingerprint from its parts: `inputs` are hashed (strings and values alike, `sha256Of`) unless
 * listed in `plain`; the models' fingerprints come from `models.fingerprints` (taken when the
 * experiment started), else the path.
 */
export function buildFingerprint(p: {
  kind: ReproKind;
  inputs: Record<string, unknown>;
  plain?: Record<string, string>;
  seed?: number;
  models?: ModelConfig;
  decode?: Record<string, string | number | boolean>;
  environment?: ReproEnvironment;
}): Fingerprint {
  const inputs: Record<string, string> = {};
  for (const [k, v] of Object.entries(p.inputs)) if (v !== undefined) inputs[k] = sha256Of(v);
  Object.assign(inputs, p.plain ?? {});
  const models: Record<string, string> = {};
  for (const [ref, file] of Object.entries(p.models?.models ?? {})) models[ref] = p.models?.fingerprints?.[ref] ?? (isEndpointRef(file) ? 'endpoint' : file);
  for (const [file, fp] of Object.entries(p.models?.loraFingerprints ?? {})) models[`lora:${file}`] = fp;
  return {
    schema: 1,
    kind: p.kind,
    inputs,
    seed: p.seed ?? null,
    models,
    decode: decodeSettings(p.models, p.decode),
    code: p.environment?.code ?? { flowlab: 'unknown' },
    native: p.environment?.native ?? {},
    repeatability: repeatabilityOf(p.models),
  };
}

/** Stores `fp` as `id`'s reproducibility record (replacing an earlier one, keeping its output digest). */
export function recordFingerprint(store: Store, id: string, fp: Fingerprint): void {
  store.repro.record({ id, kind: fp.kind, fingerprint: fp as unknown as Record<string, unknown>, fingerprintDigest: sha256Of(fp), repeatability: fp.repeatability });
}

/** The fields of two fingerprints that differ (`inputs.workflow`, `native.node-llama-cpp`, ...), sorted. */
export function fingerprintDifferences(a: Fingerprint, b: Fingerprint): string[] {
  const flat = (f: Fingerprint): Map<string, string> => {
    const m = new Map<string, string>();
    for (const [k, v] of Object.entries(f)) {
      if (v && typeof v === 'object') for (const [k2, v2] of Object.entries(v as Record<string, unknown>)) m.set(`${k}.${k2}`, String(v2));
      else m.set(k, String(v));
    }
    return m;
  };
  const fa = flat(a);
  const fb = flat(b);
  return [...new Set([...fa.keys(), ...fb.keys()])].filter((k) => fa.get(k) !== fb.get(k)).sort();
}
