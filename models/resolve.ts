/**
 * File-based model resolution, shared by the CLI and the lab: which GGUF file (and LoRA adapters)
 * each role of a workflow uses, file fingerprints taken when an experiment starts and checked when
 * it resumes, and the default thread count. Both faces map their input into a `ModelRequest`
 * (core/model/config.ts) and turn `ModelConfigError`s into their own form.
 */
import { FlowlabError } from '../core/errors.ts';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import type { RoleName } from '../core/ids.ts';
import { EndpointRefError, isEndpointRef, ModelConfigError, parseEndpointRef, type LoraAdapterRef, type ModelConfig, type ModelRequest, type ModelRequestField } from '../core/model/index.ts';
import type { Graph } from '../core/workflow/index.ts';

/**
 * A fast identity of a model file: its size and the sha256 of its first and last MiB (GGUF
 * headers, metadata and the tail of the weights), so `resume` can tell the file changed without
 * hashing gigabytes. Returns `missing` when the file cannot be read, `endpoint` for an endpoint
 * reference (a server has no file to fingerprint; resume does not check it).
 */
export function fingerprintModel(file: string): string {
  if (isEndpointRef(file)) return 'endpoint';
  let fd: number | undefined;
  try {
    const size = statSync(file).size;
    fd = openSync(file, 'r');
    const chunk = Math.min(size, 1 << 20);
    const head = Buffer.alloc(chunk);
    readSync(fd, head, 0, chunk, 0);
    const tail = Buffer.alloc(chunk);
    readSync(fd, tail, 0, chunk, Math.max(0, size - chunk));
    return `${size}:${createHash('sha256').update(head).update(tail).digest('hex').slice(0, 32)}`;
  } catch {
    return 'missing';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Adds fingerprints of every model file (and LoRA adapter) to a config (called when an experiment is created). */
export function withFingerprints(cfg: ModelConfig): ModelConfig {
  const out: ModelConfig = { ...cfg, fingerprints: Object.fromEntries(Object.entries(cfg.models).map(([ref, file]) => [ref, fingerprintModel(file)])) };
  const adapters = Object.values(cfg.loras ?? {}).flat();
  if (adapters.length) out.loraFingerprints = Object.fromEntries(adapters.map((a) => [a.path, fingerprintModel(a.path)]));
  return out;
}

export type ModelFileErrorCode = 'MODEL_FILE_MISSING' | 'MODEL_FILE_CHANGED' | 'ADAPTER_MISSING' | 'ADAPTER_CHANGED';

/**
 * A model file or LoRA adapter of a stored experiment that is gone or changed since it started
 * (its fingerprint): resuming would mix models. `ref` is the model reference, `path` the file.
 */
export class ModelFileError extends FlowlabError<ModelFileErrorCode> {
  override readonly name = 'ModelFileError';
  constructor(code: ModelFileErrorCode, readonly ref: string, readonly path: string, message: string) {
    super(code, message, { file: path });
  }
}

/**
 * Refuses to resume with LoRA adapters that are missing or changed since the experiment
 * started (their fingerprints), so one experiment never mixes adapters. Errors: ModelFileError.
 */
export function checkLoraFingerprints(cfg: ModelConfig): void {
  for (const [ref, adapters] of Object.entries(cfg.loras ?? {})) {
    for (const a of adapters) {
      const was = cfg.loraFingerprints?.[a.path];
      const now = fingerprintModel(a.path);
      if (now === 'missing') throw new ModelFileError('ADAPTER_MISSING', ref, a.path, `LoRA adapter of "${ref}" not found: ${a.path}; restore it to resume this experiment`);
      if (was && was !== 'missing' && was !== now) throw new ModelFileError('ADAPTER_CHANGED', ref, a.path, `LoRA adapter of "${ref}" changed since the experiment started: ${a.path} (fingerprint ${was} -> ${now}); resuming would mix adapters in one experiment`);
    }
  }
}

/**
 * Refuses to resume with model files (or adapters) that are missing or changed since `recorded`
 * was taken: `current` is the recorded config with any moved files given again.
 * Errors: ModelFileError (a missing file's message says to restore it or give its new path).
 */
export function verifyModelFiles(recorded: ModelConfig, current: ModelConfig): void {
  for (const [ref, file] of Object.entries(current.models)) {
    const was = recorded.fingerprints?.[ref];
    const now = fingerprintModel(file);
    if (now === 'endpoint') continue;
    if (now === 'missing') throw new ModelFileError('MODEL_FILE_MISSING', ref, file, `model file for "${ref}" not found: ${file}; restore it or give its new path (the same file)`);
    if (was && was !== 'missing' && was !== now) throw new ModelFileError('MODEL_FILE_CHANGED', ref, file, `model file for "${ref}" changed since the experiment started: ${file} (fingerprint ${was} -> ${now}); resuming would mix models in one experiment`);
  }
  checkLoraFingerprints(current);
}

/** A weight version as the resolver needs it (store.weights.find). */
export interface VersionRef {
  id: string;
  role: string;
  path: string;
}

/** The resolution of a ModelRequest. */
export interface ResolvedModels {
  config: ModelConfig;
  /** What the resolver changed and the faces should say (a thread count lowered to the machine's cores). */
  notes: string[];
  /** Role -> the weight version it uses (from `roleVersions`). */
  versions: Record<string, VersionRef>;
  /** Model file -> the request field (and role) that chose it, for faces that locate file errors. */
  fieldOf: Map<string, { field: ModelRequestField; role?: string }>;
}

const rolesOf = (graph: Graph) => [...graph.roles.keys()] as string[];

function unknownRole(graph: Graph, field: ModelRequestField, role: string): ModelConfigError {
  return new ModelConfigError('UNKNOWN_ROLE', field, `${field} names role "${role}", which the workflow does not have (roles: ${rolesOf(graph).join(', ')})`, { role, roles: rolesOf(graph) });
}

/**
 * Role -> weight version for `roleVersions` (role -> version id), looked up with `lookupVersion`
 * (the store's `weights.find`). Errors: ModelConfigError (field roleVersions) — UNKNOWN_ROLE,
 * UNKNOWN_VERSION, VERSION_FILE_MISSING.
 */
export function resolveVersions(graph: Graph, roleVersions: Record<string, string>, lookupVersion?: (id: string) => VersionRef | undefined): Record<string, VersionRef> {
  const versions: Record<string, VersionRef> = {};
  for (const [role, id] of Object.entries(roleVersions)) {
    if (!graph.roles.has(role as RoleName)) throw unknownRole(graph, 'roleVersions', role);
    const version = lookupVersion?.(id);
    if (!version) throw new ModelConfigError('UNKNOWN_VERSION', 'roleVersions', `no weight version ${id}`, { role, versionId: id });
    try {
      statSync(version.path);
    } catch {
      throw new ModelConfigError('VERSION_FILE_MISSING', 'roleVersions', `the version's file ${version.path} is missing`, { role, versionId: id, path: version.path });
    }
    versions[role] = version;
  }
  return versions;
}

/**
 * The bench-only baseline switch (`npm run bench`, bench/reproducibility.ts): with this variable
 * set to `timing`, resolved configs ask for `batching: 'mixed'` — node-llama-cpp's own scheduler,
 * which puts in one decode whatever sequences are queued at that instant, so what shares a batch
 * follows timing and a seeded sample is not exactly repeatable. The config records it, so every
 * experiment made this way says so (core/repro). Not a user option.
 */
export const TIMING_SCHEDULER_ENV = 'FLOWLAB_BENCH_SCHEDULER';

/**
 * Resolves which GGUF file each role uses: a role's own file (`roles`, or the file of its weight
 * version from `roleVersions`) beats the workflow's `models.<ref>.path` (relative to `baseDir`),
 * which beats `default` for roles on the `default` reference. A role with LoRA adapters
 * (`roleLora`) or its own file gets the reference `role:<name>`.
 *
 * `lookupVersion` finds a weight version by id (the store's `weights.find`); needed only with
 * `roleVersions`. Errors: ModelConfigError — UNKNOWN_ROLE (roleVersions, roles, roleLora, in
 * that order), UNKNOWN_VERSION, VERSION_FILE_MISSING, CONFLICT (a role in both roles and
 * roleVersions), NO_MODEL (field `default`, detail.role).
 */
export function resolveModels(graph: Graph, req: ModelRequest, lookupVersion?: (id: string) => VersionRef | undefined): ResolvedModels {
  const base = req.baseDir ?? process.cwd();
  const versions = resolveVersions(graph, req.roleVersions ?? {}, lookupVersion);
  const own: Record<string, { file: string; field: ModelRequestField }> = {};
  for (const [role, file] of Object.entries(req.roles ?? {})) own[role] = { file, field: 'roles' };
  for (const [role, v] of Object.entries(versions)) {
    if (own[role]) throw new ModelConfigError('CONFLICT', 'roleVersions', `role "${role}" has both a model file and a weight version`, { role });
    own[role] = { file: v.path, field: 'roleVersions' };
  }
  for (const role of Object.keys(req.roles ?? {})) if (!graph.roles.has(role as RoleName)) throw unknownRole(graph, 'roles', role);
  const roleLoras: Record<string, LoraAdapterRef[]> = req.roleLora ?? {};
  for (const role of Object.keys(roleLoras)) if (!graph.roles.has(role as RoleName)) throw unknownRole(graph, 'roleLora', role);

  const models: Record<string, string> = {};
  const roleModels: Record<string, string> = {};
  const loras: Record<string, LoraAdapterRef[]> = {};
  const fieldOf = new Map<string, { field: ModelRequestField; role?: string }>();
  const note = (file: string, field: ModelRequestField, role?: string) => {
    if (!fieldOf.has(file)) fieldOf.set(file, role === undefined ? { field } : { field, role });
  };
  for (const role of graph.roles.values()) {
    const chosen = own[role.name];
    const adapters = roleLoras[role.name]?.map((a) => ({ ...a, path: path.resolve(base, a.path) }));
    if (chosen) {
      const ref = `role:${role.name}`;
      models[ref] = modelLocation(base, chosen.file, chosen.field, role.name);
      roleModels[role.name] = ref;
      if (adapters) loras[ref] = adapters;
      note(models[ref]!, chosen.field, role.name);
      continue;
    }
    const fromDoc = graph.models.get(role.model)?.path;
    const file = fromDoc ?? (role.model === 'default' ? req.default : undefined);
    if (!file) throw new ModelConfigError('NO_MODEL', 'default', `role "${role.name}" has no model`, { role: role.name });
    const ref = adapters ? `role:${role.name}` : role.model;
    models[ref] = modelLocation(base, file, fromDoc !== undefined ? 'workflow' : 'default', role.name);
    roleModels[role.name] = ref;
    if (adapters) loras[ref] = adapters;
    note(models[ref]!, fromDoc !== undefined ? 'workflow' : 'default');
  }
  const config: ModelConfig = { models, roleModels, gpu: req.gpu ?? false };
  const notes: string[] = [];
  if (req.threads !== undefined) {
    const clamped = clampThreads(req.threads);
    config.threads = clamped.threads;
    if (clamped.note) notes.push(clamped.note);
  }
  if (req.contextSize !== undefined) config.contextSize = req.contextSize;
  if (req.batchSize !== undefined) config.batchSize = req.batchSize;
  if (req.prefixReuse === false) config.prefixReuse = false;
  if (Object.keys(loras).length) config.loras = loras;
  if (process.env[TIMING_SCHEDULER_ENV] === 'timing') {
    config.batching = 'mixed';
    notes.push(`${TIMING_SCHEDULER_ENV}=timing: decode batches formed by timing (bench baseline); repeatability not guaranteed`);
  }
  return { config, versions, fieldOf, notes };
}

/**
 * Where a model reference points: an endpoint reference (`openai:...`, core/model/endpoint.ts)
 * as given after checking it, a file resolved against `base`.
 * Errors: ModelConfigError `BAD_ENDPOINT` (`field`, `role`) with the parser's message.
 */
function modelLocation(base: string, file: string, field: ModelRequestField, role: string): string {
  if (!isEndpointRef(file)) return path.resolve(base, file);
  try {
    parseEndpointRef(file);
  } catch (e) {
    if (e instanceof EndpointRefError) throw new ModelConfigError('BAD_ENDPOINT', field, `role "${role}": ${e.message}`, { role });
    throw e;
  }
  return file;
}

/** The most CPU threads one model gets: this machine's cores (`os.availableParallelism()`). */
export function maxThreads(): number {
  return Math.max(1, availableParallelism());
}

/**
 * `threads` lowered to {@link maxThreads} when above it (more threads than cores only slow
 * llama.cpp down: 16 to 256 threads on 2 cores did not finish 3 tiny tasks in 45 s), with the
 * note that says so.
 */
export function clampThreads(threads: number, cores = maxThreads()): { threads: number; note?: string } {
  if (threads <= cores) return { threads };
  return { threads: cores, note: `threads ${threads} is more than this machine's ${cores} CPU core${cores === 1 ? '' : 's'}: using ${cores}` };
}

/**
 * Threads for a model file when the user gave none: 1 for tiny files (< 64 MB; measured ~700x
 * faster than the default on 2 cores), else half the cores (at least 1).
 */
export function defaultThreads(file: string): number {
  let size = 0;
  try {
    size = statSync(file).size;
  } catch {
    /* the provider reports a missing file */
  }
  return size < 64 * 1024 * 1024 ? 1 : Math.max(1, Math.floor(availableParallelism() / 2));
}
