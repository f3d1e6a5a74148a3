/**
 * The CLI's wording of the typed errors of model resolution (core/model/config.ts), the
 * experiment service (core/experiments/spec.ts) and hint-card requests (core/distill/hooks.ts):
 * what the user can fix with a flag becomes a UsageError (exit 2, usage printed) naming the
 * flag; the rest stays an Error (exit 1).
 */
import { CardsRequestError } from '../core/distill/index.ts';
import { ExperimentSpecError } from '../core/experiments/index.ts';
import { ModelConfigError } from '../core/model/index.ts';
import { ModelFileError } from '../models/resolve.ts';
import { UsageError } from './args.ts';

const FLAG_OF: Record<string, string> = { default: '--model', roles: '--role-model', roleLora: '--role-lora', roleVersions: '--role-version' };

/** Context some messages name: the database file (`--cards`), the offset (no tasks). */
export interface CliErrorContext {
  db?: string;
  offset?: number;
}

/** The CLI form of `e` (returned as is when it is not one of the typed errors above). */
export function cliError(e: unknown, usage: string, ctx: CliErrorContext = {}): unknown {
  if (e instanceof ModelConfigError) {
    const { role, roles, versionId, path } = e.detail;
    switch (e.code) {
      case 'UNKNOWN_ROLE':
        return new UsageError(`${FLAG_OF[e.field]} names role "${role}", which the workflow does not have (roles: ${roles?.join(', ')})`, usage);
      case 'NO_MODEL':
        return new UsageError(`role "${role}" has no model: pass --model <file.gguf> (or --role-model ${role}=<file.gguf>)`, usage);
      case 'CONFLICT':
        return new UsageError(`role "${role}" has both --role-model and --role-version`, usage);
      case 'UNKNOWN_VERSION':
        return new UsageError(`--role-version ${role}=${versionId}: no weight version ${versionId} in the database (list them with \`flowlab versions\`)`, usage);
      case 'VERSION_FILE_MISSING':
        return new UsageError(`--role-version ${role}=${versionId}: the version's file ${path} is missing`, usage);
    }
  }
  if (e instanceof ExperimentSpecError) {
    const d = e.detail;
    switch (e.code) {
      case 'NO_TASKS':
        if (e.field === 'split') return new Error(e.message);
        return new Error(`no tasks: --offset ${ctx.offset ?? 0} is past the end of ${d.text}`);
      case 'BAD_FAULT':
      case 'BAD_MODE':
        return new UsageError(e.message, usage);
      case 'NO_ROLE':
      case 'NOT_TRAINABLE':
        return new UsageError(e.field === 'roles' && e.code === 'NOT_TRAINABLE' ? `--${e.message}` : e.message, usage);
      case 'UNKNOWN_ROLE':
        if (e.field === 'roles') return new UsageError(`--${e.message}`, usage);
        if (e.field.startsWith('models.roles.')) return new UsageError(`--role-model: the experiment has no role "${d.role}" (roles: ${d.roles?.join(', ')})`, usage);
        return new UsageError(`--inject names role "${d.role}", which the workflow does not have (roles: ${d.roles?.join(', ')})`, usage);
      case 'UNKNOWN_NODE':
        return new UsageError(`--inject names node "${d.node}", which the workflow does not have`, usage);
      case 'TOOL_FAULT_KIND':
        return new UsageError(`--inject node:${d.node}=${d.kind}: ${e.message.replace(/^inject "[^"]*": /, '')}`, usage);
      case 'NO_DEFAULT_REF':
        return new UsageError('--model: this experiment has no "default" model reference', usage);
      case 'MODEL_LOAD':
        return e.cause ?? e;
      case 'RUNNING':
        return new Error(e.message);
    }
  }
  if (e instanceof ModelFileError && e.code === 'MODEL_FILE_MISSING') {
    return new Error(`model file for "${e.ref}" not found: ${e.path}; restore it or pass its new path with --model / --role-model`);
  }
  if (e instanceof CardsRequestError) {
    if (e.code === 'UNKNOWN_CARD') return new UsageError(`--cards: no card ${e.detail.ids?.join(', ')} in ${ctx.db} (see \`flowlab cards list\`)`, usage);
    return new UsageError(`--distill-roles names role(s) ${e.detail.roles?.join(', ')}, which the workflow does not have (roles: ${e.detail.workflowRoles?.join(', ')})`, usage);
  }
  return e;
}

/** Runs `fn`, rethrowing its typed errors in their CLI form. */
export async function asCli<T>(fn: () => T | Promise<T>, usage: string, ctx: CliErrorContext = {}): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw cliError(e, usage, ctx);
  }
}

/** `asCli` for synchronous calls. */
export function asCliSync<T>(fn: () => T, usage: string, ctx: CliErrorContext = {}): T {
  try {
    return fn();
  } catch (e) {
    throw cliError(e, usage, ctx);
  }
}
