/**
 * The one table from an error to what `flowlab` does with it: the exit status and the line it
 * prints on stderr. Commands throw typed errors (core/errors.ts: `FlowlabError` and its area
 * subclasses); `main` catches them and asks this table.
 *
 * | error                                                  | exit | stderr                                       |
 * |--------------------------------------------------------|------|----------------------------------------------|
 * | `UsageError` (cli/args.ts)                             | 2    | `flowlab <cmd>: <message>` + blank line + usage |
 * | coded `CANCELLED` or `ABORTED`, or an `AbortError`     | 130  | `flowlab <cmd>: <message> [<CODE>]`          |
 * | `SpecError` (each issue line carries its own code)     | 1    | `flowlab <cmd>: <message>`                   |
 * | any other `FlowlabError`                               | 1    | `flowlab <cmd>: <message> [<CODE>]`          |
 * | a Node or SQLite system error (`ENOENT`, `SQLITE_BUSY`) | 1    | `flowlab <cmd>: <message> [<CODE>]`          |
 * | anything else                                          | 1    | `flowlab <cmd>: <message>`                   |
 *
 * The `[<CODE>]` tag is left off when the message already contains the code (ToolError
 * messages start with it). A command that finishes cancelled without throwing returns
 * `EXIT.cancelled` itself.
 */
import { FlowlabError, errorMessage } from '../core/errors.ts';
import { SpecError } from '../core/workflow/index.ts';
import { CardsRequestError } from '../core/distill/index.ts';
import { ExperimentSpecError } from '../core/experiments/index.ts';
import { ModelConfigError } from '../core/model/index.ts';
import { ModelFileError } from '../models/resolve.ts';
import { UsageError } from './args.ts';

/** Why a command failed on input that parsed (exit 1): the codes `CommandError` carries. */
export type CommandErrorCode =
  /** The experiment is of another kind than the command needs (export of a non-rollouts experiment, diff --replay of an imported run). */
  | 'WRONG_KIND'
  /** Two experiments share no task (compare). */
  | 'NOTHING_TO_COMPARE'
  /** A named card, file or call is not there (cards rm/export, cards import, train). */
  | 'NOT_FOUND'
  /** A file the command reads is not what it expects (cards import: not JSON). */
  | 'BAD_FILE'
  /** The experiment holds no data the command can learn from (train: no SFT data, no advantages, no token ids). */
  | 'NO_DATA'
  /** The TCP port `serve` was asked for is taken. */
  | 'PORT_IN_USE'
  /** The experiment halted on an infrastructure fault (the message says which). */
  | 'HALTED'
  /** Two runs of differently named workflows (diff, without --force). */
  | 'DIFFERENT_WORKFLOWS'
  /** An OTLP/HTTP collector refused the spans or could not be reached (export --format otlp-http). */
  | 'EXPORT_FAILED'
  /** `--out` cannot be used: a file where a folder is needed (or the reverse), or it cannot be created (cli/outPath.ts). */
  | 'BAD_OUT'
  /** Input logs that cannot be scored (attribution-eval without --skip-bad: the count, the first file and field). */
  | 'BAD_LOGS'
  /** A stored evolution ran with another model file than the one given (evolve: resume with that file, or --id). */
  | 'DIFFERENT_MODEL'
  /** The experiment did not finish (cancelled, interrupted, running): verify needs its end (resume it first). */
  | 'INCOMPLETE';

/** A command's own failure on arguments that parsed (exit 1, `[<CODE>]` tag; see the table above). */
export class CommandError extends FlowlabError<CommandErrorCode> {
  override readonly name = 'CommandError';
}

/** The exit statuses of `flowlab`. */
export const EXIT = {
  /** Done. */
  ok: 0,
  /** A failure the message explains (bad workflow, dataset, model file, database, ...). */
  failure: 1,
  /** Bad arguments; the usage is printed. */
  usage: 2,
  /** Cancelled (Ctrl-C): 128 + SIGINT, as shells report it. */
  cancelled: 130,
} as const;

export type ExitStatus = (typeof EXIT)[keyof typeof EXIT];

/** Codes that mean the run was cancelled, not that something failed (core/trace/codes.ts, core/model/errors.ts). */
const CANCELLED_CODES: ReadonlySet<string> = new Set(['CANCELLED', 'ABORTED']);

/** The exit status for an error a command threw (see the table above). */
export function exitStatusFor(err: unknown): ExitStatus {
  if (err instanceof UsageError) return EXIT.usage;
  if (isCancellation(err)) return EXIT.cancelled;
  return EXIT.failure;
}

/**
 * What `flowlab <command>` prints on stderr for an error it threw, ending in a newline except
 * after a usage text (see the table above). `usage` is the command's usage, printed after a
 * `UsageError` that carries none of its own.
 */
export function formatCliError(err: unknown, command: string, usage: string): string {
  if (err instanceof UsageError) return `flowlab ${command}: ${err.message}\n\n${err.usage ?? usage}`;
  const message = errorMessage(err);
  const code = err instanceof SpecError ? undefined : codeOf(err);
  const tag = code && !message.includes(code) ? ` [${code}]` : '';
  return `flowlab ${command}: ${message}${tag}\n`;
}

/** A Flowlab error's code, or a system error's (`ENOENT`, `SQLITE_BUSY`: Node and better-sqlite3 set a string `code`). */
function codeOf(err: unknown): string | undefined {
  if (err instanceof FlowlabError) return err.code;
  if (err instanceof Error && 'code' in err && typeof err.code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(err.code)) return err.code;
  return undefined;
}

function isCancellation(err: unknown): boolean {
  if (err instanceof FlowlabError) return CANCELLED_CODES.has(err.code);
  return err instanceof Error && err.name === 'AbortError';
}

// ---------- the CLI's wording of typed errors ----------
//
// Model resolution (core/model/config.ts), the experiment service (core/experiments/spec.ts) and
// hint-card requests (core/distill/hooks.ts) throw typed errors naming the request field; what the
// user can fix with a flag becomes a UsageError (exit 2, usage printed) naming the flag; the rest
// stays an error (exit 1) and goes through the table above.

const FLAG_OF: Record<string, string> = { default: '--model', roles: '--role-model', roleLora: '--role-lora', roleVersions: '--role-version' };

/** Context some messages name: the database file (`--cards`), the offset (no tasks). */
export interface CliErrorContext {
  db?: string;
  offset?: number;
}

/**
 * The CLI form of `e` (returned as is when it is not one of the typed errors above). Its
 * UsageErrors carry no usage: `main` prints the failing command's.
 */
export function cliError(e: unknown, ctx: CliErrorContext = {}): unknown {
  if (e instanceof ModelConfigError) {
    const { role, roles, versionId, path } = e.detail;
    switch (e.code) {
      case 'UNKNOWN_ROLE':
        return new UsageError(`${FLAG_OF[e.field]} names role "${role}", which the workflow does not have (roles: ${roles?.join(', ')})`);
      case 'NO_MODEL':
        return new UsageError(`role "${role}" has no model: pass --model <file.gguf> (or --role-model ${role}=<file.gguf>)`);
      case 'CONFLICT':
        return new UsageError(`role "${role}" has both --role-model and --role-version`);
      case 'UNKNOWN_VERSION':
        return new UsageError(`--role-version ${role}=${versionId}: no weight version ${versionId} in the database (list them with \`flowlab versions\`)`);
      case 'VERSION_FILE_MISSING':
        return new UsageError(`--role-version ${role}=${versionId}: the version's file ${path} is missing`);
      case 'BAD_ENDPOINT':
        return new UsageError(`${e.field === 'workflow' ? "the workflow's models" : FLAG_OF[e.field]}: ${e.message}`);
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
        return new UsageError(e.message);
      case 'NO_ROLE':
      case 'NOT_TRAINABLE':
        return new UsageError(e.field === 'roles' && e.code === 'NOT_TRAINABLE' ? `--${e.message}` : e.message);
      case 'UNKNOWN_ROLE':
        if (e.field === 'roles') return new UsageError(`--${e.message}`);
        if (e.field.startsWith('models.roles.')) return new UsageError(`--role-model: the experiment has no role "${d.role}" (roles: ${d.roles?.join(', ')})`);
        return new UsageError(`--inject names role "${d.role}", which the workflow does not have (roles: ${d.roles?.join(', ')})`);
      case 'UNKNOWN_NODE':
        return new UsageError(`--inject names node "${d.node}", which the workflow does not have`);
      case 'TOOL_FAULT_KIND':
        return new UsageError(`--inject node:${d.node}=${d.kind}: ${e.message.replace(/^inject "[^"]*": /, '')}`);
      case 'DESIGN_FAULT_ROLE':
        return new UsageError(`--inject ${d.text}: ${e.message.replace(/^inject "[^"]*": /, '')}`);
      case 'NO_DEFAULT_REF':
        return new UsageError('--model: this experiment has no "default" model reference');
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
    if (e.code === 'UNKNOWN_CARD') return new UsageError(`--cards: no card ${e.detail.ids?.join(', ')} in ${ctx.db} (see \`flowlab cards list\`)`);
    if (e.code === 'UNKNOWN_ROLE') return new UsageError(`--distill-roles names role(s) ${e.detail.roles?.join(', ')}, which the workflow does not have (roles: ${e.detail.workflowRoles?.join(', ')})`);
  }
  return e;
}

/** Runs `fn`, rethrowing its typed errors in their CLI form. */
export async function asCli<T>(fn: () => T | Promise<T>, ctx: CliErrorContext = {}): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw cliError(e, ctx);
  }
}

/** `asCli` for synchronous calls. */
export function asCliSync<T>(fn: () => T, ctx: CliErrorContext = {}): T {
  try {
    return fn();
  } catch (e) {
    throw cliError(e, ctx);
  }
}
