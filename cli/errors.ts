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
import { FlowlabError } from '../core/errors.ts';
import { SpecError } from '../core/workflow/index.ts';
import { UsageError } from './args.ts';

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
  const message = err instanceof Error ? err.message : String(err);
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
