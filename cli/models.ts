/**
 * The CLI's model flags through the shared resolver (models/resolve.ts): `--model`,
 * `--role-model`, `--role-lora`, `--threads`, `--context-size`, `--gpu` and `--role-version`,
 * with resolution errors worded as flags (UsageError, exit 2).
 */
import type { ModelConfig } from '../core/model/index.ts';
import type { Graph } from '../core/workflow/index.ts';
import { resolveModels as resolve, resolveVersions, type VersionRef } from '../models/resolve.ts';
import { parseRoleLoras, rolePairs } from './args.ts';
import { asCliSync } from './errors.ts';
import { gpuFlag } from './flags.ts';

/**
 * Which GGUF file each role uses: `--role-model role=file` beats the workflow's
 * `models.<ref>.path`, which beats `--model file` (the `default` reference). `roleLora` (raw
 * `--role-lora role=adapter.gguf[@scale]` values) gives a role its own reference `role:<name>`.
 * Errors: UsageError.
 */
export function resolveModels(graph: Graph, flags: { model?: string; roleModel: Record<string, string>; threads?: number; contextSize?: number; gpu?: string; roleLora?: readonly string[] }, usage?: string): ModelConfig {
  const roleLora = parseRoleLoras(flags.roleLora, usage);
  return asCliSync(() => resolve(graph, {
    default: flags.model, roles: flags.roleModel, roleLora, threads: flags.threads, contextSize: flags.contextSize, gpu: gpuFlag(flags.gpu),
  }).config);
}

/**
 * Resolves `--role-version role=<version-id>` values to the versions (their GGUF files).
 * Errors (UsageError): a malformed value, a role the workflow lacks, a role given twice, an
 * unknown version, a version whose file is gone.
 */
export function resolveRoleVersions(graph: Graph, values: readonly string[] | undefined, lookup: (id: string) => VersionRef | undefined, usage?: string): Record<string, VersionRef> {
  const pairs = rolePairs(values, { flag: 'role-version', shape: 'role=<version-id>', once: true }, usage);
  return asCliSync(() => resolveVersions(graph, Object.fromEntries(pairs), lookup));
}
