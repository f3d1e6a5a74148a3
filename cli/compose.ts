import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import type { RoleName } from '../core/ids.ts';
import type { ModelProvider } from '../core/model/index.ts';
import type { Graph } from '../core/workflow/index.ts';
import { UsageError } from './args.ts';

/** How the models of a run were chosen; stored with the experiment so `resume` rebuilds the same provider. */
export interface ModelConfig {
  /** Model reference -> absolute GGUF path. */
  models: Record<string, string>;
  /** Role -> model reference it uses. */
  roleModels: Record<string, string>;
  threads?: number;
  contextSize?: number;
  gpu: 'auto' | false;
  /** Per model reference: a fingerprint of the file when the experiment started (see fingerprintModel). */
  fingerprints?: Record<string, string>;
  /** Concurrent sequences per model (rollout groups use G). Default: the provider's (4). */
  sequences?: number;
  /**
   * `mixed`: concurrent sequences share decode batches (throughput; rollouts); `isolated`
   * (default): bit-identical to running each call alone (see models/llama).
   */
  batching?: 'mixed' | 'isolated';
  /**
   * Per model reference: LoRA adapters applied on top of its file (absolute paths; scale
   * defaults to 1). `--role-lora role=adapter.gguf[@scale]` gives the role a reference of its
   * own, `role:<name>`, on the same base file: the base model is loaded once, each adapted
   * reference gets its own context.
   */
  loras?: Record<string, Array<{ path: string; scale?: number }>>;
  /** Per adapter (absolute path): its fingerprint when the experiment started (see fingerprintModel). */
  loraFingerprints?: Record<string, string>;
  /** Exact F32 attention (flash attention off, F32 KV cache): on-policy sampling for train-loop. */
  exactAttention?: boolean;
}

/**
 * A fast identity of a model file: its size and the sha256 of its first and last MiB (GGUF
 * headers, metadata and the tail of the weights), so `resume` can tell the file changed without
 * hashing gigabytes. Returns `missing` when the file cannot be read.
 */
export function fingerprintModel(file: string): string {
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

/**
 * Refuses to resume with LoRA adapters that are missing or changed since the experiment
 * started (their fingerprints), so one experiment never mixes adapters.
 */
export function checkLoraFingerprints(cfg: ModelConfig): void {
  for (const [ref, adapters] of Object.entries(cfg.loras ?? {})) {
    for (const a of adapters) {
      const was = cfg.loraFingerprints?.[a.path];
      const now = fingerprintModel(a.path);
      if (now === 'missing') throw new Error(`LoRA adapter of "${ref}" not found: ${a.path}; restore it to resume this experiment`);
      if (was && was !== 'missing' && was !== now) throw new Error(`LoRA adapter of "${ref}" changed since the experiment started: ${a.path} (fingerprint ${was} -> ${now}); resuming would mix adapters in one experiment`);
    }
  }
}

/**
 * Parses `--role-lora` values: `role=adapter.gguf` or `role=adapter.gguf@scale` (repeat the flag
 * to stack adapters on one role). A trailing `@<number>` is the scale; any other `@` belongs to
 * the path.
 */
export function parseRoleLoras(values: readonly string[] | undefined, usage: string): Record<string, Array<{ path: string; scale?: number }>> {
  const out: Record<string, Array<{ path: string; scale?: number }>> = {};
  for (const v of values ?? []) {
    const i = v.indexOf('=');
    if (i <= 0 || i === v.length - 1) throw new UsageError(`--role-lora takes role=adapter.gguf[@scale], got "${v}"`, usage);
    const role = v.slice(0, i);
    let file = v.slice(i + 1);
    let scale: number | undefined;
    const m = /@([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)$/i.exec(file);
    if (m) {
      scale = Number(m[1]);
      file = file.slice(0, m.index);
      if (!file) throw new UsageError(`--role-lora takes role=adapter.gguf[@scale], got "${v}"`, usage);
    }
    (out[role] ??= []).push({ path: path.resolve(file), ...(scale === undefined ? {} : { scale }) });
  }
  return out;
}

/**
 * Resolves which GGUF file each role uses: `--role-model role=file` beats the workflow's
 * `models.<ref>.path`, which beats `--model file` (the `default` reference).
 * `roleLora` (raw `--role-lora role=adapter.gguf[@scale]` values) gives a role its own reference
 * `role:<name>`: the file it would use anyway, plus the adapters.
 */
export function resolveModels(graph: Graph, flags: { model?: string; roleModel: Record<string, string>; threads?: number; contextSize?: number; gpu?: string; roleLora?: readonly string[] }, usage: string): ModelConfig {
  const models: Record<string, string> = {};
  const roleModels: Record<string, string> = {};
  const roleLoras = parseRoleLoras(flags.roleLora, usage);
  const loras: Record<string, Array<{ path: string; scale?: number }>> = {};
  for (const role of Object.keys(flags.roleModel)) {
    if (!graph.roles.has(role as RoleName)) throw new UsageError(`--role-model names role "${role}", which the workflow does not have (roles: ${[...graph.roles.keys()].join(', ')})`, usage);
  }
  for (const role of Object.keys(roleLoras)) {
    if (!graph.roles.has(role as RoleName)) throw new UsageError(`--role-lora names role "${role}", which the workflow does not have (roles: ${[...graph.roles.keys()].join(', ')})`, usage);
  }
  for (const role of graph.roles.values()) {
    const override = flags.roleModel[role.name];
    const adapters = roleLoras[role.name];
    if (override) {
      const ref = `role:${role.name}`;
      models[ref] = path.resolve(override);
      roleModels[role.name] = ref;
      if (adapters) loras[ref] = adapters;
      continue;
    }
    const fromDoc = graph.models.get(role.model)?.path;
    const file = fromDoc ?? (role.model === 'default' ? flags.model : undefined);
    if (!file) {
      throw new UsageError(`role "${role.name}" has no model: pass --model <file.gguf> (or --role-model ${role.name}=<file.gguf>)`, usage);
    }
    if (adapters) {
      const ref = `role:${role.name}`;
      models[ref] = path.resolve(file);
      roleModels[role.name] = ref;
      loras[ref] = adapters;
      continue;
    }
    models[role.model] = path.resolve(file);
    roleModels[role.name] = role.model;
  }
  const gpu = flags.gpu === undefined || flags.gpu === 'off' || flags.gpu === 'false' ? false : flags.gpu === 'auto' ? 'auto' : undefined;
  if (gpu === undefined) throw new UsageError(`--gpu takes auto or off, got "${flags.gpu}"`, usage);
  const cfg: ModelConfig = { models, roleModels, threads: flags.threads, contextSize: flags.contextSize, gpu };
  if (Object.keys(loras).length) cfg.loras = loras;
  return cfg;
}

/**
 * Threads for a model file when the user gave none: 1 for tiny files (< 64 MB; measured ~700x
 * faster than the default on 2 cores, STACK.md), else half the cores (at least 1).
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

/** Builds the node-llama-cpp provider (imported lazily: replay never loads the binding). */
export async function llamaProvider(cfg: ModelConfig): Promise<ModelProvider & { load?(ref?: string): Promise<unknown> }> {
  const { LlamaProvider } = await import('../models/llama/index.ts');
  const models: Record<string, { path: string; threads: number; contextSize?: number; gpu: 'auto' | false; sequences?: number; batching?: 'mixed' | 'isolated'; exactAttention?: boolean; lora?: Array<{ path: string; scale?: number }> }> = {};
  for (const [ref, file] of Object.entries(cfg.models)) {
    models[ref] = { path: file, threads: cfg.threads ?? defaultThreads(file), contextSize: cfg.contextSize, gpu: cfg.gpu, sequences: cfg.sequences, batching: cfg.batching, exactAttention: cfg.exactAttention };
    const lora = cfg.loras?.[ref];
    if (lora?.length) models[ref].lora = lora;
  }
  return new LlamaProvider({ models });
}

/**
 * Resolves `--role-version role=<version-id>` values (weight versions written by `flowlab
 * train-loop` / `flowlab train`) to the versions' GGUF files, as `--role-model` would give them.
 * Errors (UsageError): a malformed value, a role the workflow lacks, a role given twice, an
 * unknown version, a version whose file is gone.
 */
export function resolveRoleVersions(
  graph: Graph,
  values: readonly string[] | undefined,
  lookup: (id: string) => { id: string; role: string; path: string } | undefined,
  usage: string,
): Record<string, { id: string; role: string; path: string }> {
  const out: Record<string, { id: string; role: string; path: string }> = {};
  for (const v of values ?? []) {
    const i = v.indexOf('=');
    if (i <= 0 || i === v.length - 1) throw new UsageError(`--role-version takes role=<version-id>, got "${v}"`, usage);
    const role = v.slice(0, i);
    const id = v.slice(i + 1);
    if (!graph.roles.has(role as RoleName)) throw new UsageError(`--role-version names role "${role}", which the workflow does not have (roles: ${[...graph.roles.keys()].join(', ')})`, usage);
    if (out[role]) throw new UsageError(`--role-version gives role "${role}" twice`, usage);
    const version = lookup(id);
    if (!version) throw new UsageError(`--role-version ${role}=${id}: no weight version ${id} in the database (list them with \`flowlab versions\`)`, usage);
    try {
      statSync(version.path);
    } catch {
      throw new UsageError(`--role-version ${role}=${id}: the version's file ${version.path} is missing`, usage);
    }
    out[role] = version;
  }
  return out;
}

/**
 * The provider with every model (and adapter) loaded before anything is recorded, so a bad
 * file is reported at once, naming it. Disposes what it loaded and rethrows on failure.
 */
export async function loadedLlamaProvider(cfg: ModelConfig): Promise<ModelProvider & { load?(ref?: string): Promise<unknown> }> {
  const provider = await llamaProvider(cfg);
  try {
    await provider.load?.();
  } catch (e) {
    await provider.dispose();
    throw e;
  }
  return provider;
}
