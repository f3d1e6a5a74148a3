/**
 * The CLI's argument layer over commander: the one `role=value` parser, the one integer-in-range
 * parser, the shared options (`--db`), and `harden`, which makes a commander command throw
 * `UsageError` (exit 2, cli/errors.ts) instead of printing and calling `process.exit`.
 */
import path from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { FlowlabError } from '../core/errors.ts';
import { FLAG_MAXIMA } from '../core/limits.ts';
import type { Io } from './io.ts';
import { defaultDatabase } from '../host/dataFolder.ts';

/** Bad command-line arguments: printed with the command's usage, exit code 2 (cli/errors.ts). */
export class UsageError extends FlowlabError<'USAGE'> {
  override readonly name = 'UsageError';
  constructor(message: string, readonly usage?: string) {
    super('USAGE', message);
  }
}

// ---------- the shared value parsers ----------

/**
 * Parses an integer flag value in [min, max], written in decimal digits (an optional `-`). `flag`
 * is the option's long name without `--`; `max` defaults to the flag's documented maximum
 * (`FLAG_MAXIMA`, core/limits.ts), else `Number.MAX_SAFE_INTEGER`.
 * Errors: InvalidArgumentError `--<flag> must be an integer >= <min>, got "<value>"` (not an
 * integer, or below min), `... in decimal digits, got "<value>"` (`0x2`, `1e3`, ` 2`), or
 * `--<flag> must be at most <max>, got <value>`.
 */
export function parseIntInRange(value: string, flag: string, min = 0, max = FLAG_MAXIMA[flag] ?? Number.MAX_SAFE_INTEGER): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < min) throw new InvalidArgumentError(`--${flag} must be an integer >= ${min}, got "${value}"`);
  // Number() also reads 0x2, 1e3, " 2" and 2.0: only plain decimal digits are a count.
  if (!/^-?\d+$/.test(value)) throw new InvalidArgumentError(`--${flag} must be an integer >= ${min} in decimal digits, got "${value}"`);
  if (n > max) throw new InvalidArgumentError(`--${flag} must be at most ${max}, got ${value}`);
  return n;
}

/**
 * An integer option `--<name> <placeholder>` in [min, max] (parseIntInRange); `opts.default` is
 * its default (shown in the help).
 */
export function intOption(flags: string, description: string, opts: { min?: number; max?: number; default?: number } = {}): Option {
  const o = new Option(flags, description);
  const flag = o.long!.slice(2);
  o.argParser((v: string) => parseIntInRange(v, flag, opts.min ?? 0, opts.max ?? FLAG_MAXIMA[flag]));
  return opts.default === undefined ? o : o.default(opts.default);
}

/** How a repeatable `role=value` flag reads its values. */
export interface RolePairSpec<T> {
  /** The option's long name without `--` (named in errors). */
  flag: string;
  /** The expected form, named in errors (default `role=value`). */
  shape?: string;
  /** Refuse a role given twice. */
  once?: boolean;
  /** Reads the part after `=` (throw InvalidArgumentError on a bad one); default: as is. */
  value?: (value: string, raw: string) => T;
}

/**
 * The one parser of repeatable `role=value` flags (`--role-model`, `--role-lora`,
 * `--role-version`, `--inject`): splits `raw` at its first `=` and appends `[role, value]` to
 * `previous` (flag order). Errors: InvalidArgumentError naming the flag and the value.
 */
export function parseRolePair<T = string>(raw: string, previous: ReadonlyArray<[string, T]> | undefined, spec: RolePairSpec<T>): Array<[string, T]> {
  const i = raw.indexOf('=');
  if (i <= 0 || i === raw.length - 1) throw new InvalidArgumentError(`--${spec.flag} takes ${spec.shape ?? 'role=value'}, got "${raw}"`);
  const role = raw.slice(0, i);
  if (spec.once && previous?.some(([r]) => r === role)) throw new InvalidArgumentError(`--${spec.flag} gives role "${role}" twice`);
  const value = raw.slice(i + 1);
  return [...(previous ?? []), [role, spec.value ? spec.value(value, raw) : (value as T)]];
}

/** A repeatable `--<flag> <placeholder>` option read by parseRolePair: `Array<[role, T]>`, absent when not given. */
export function rolePairOption<T = string>(flags: string, description: string, spec: Omit<RolePairSpec<T>, 'flag'> = {}): Option {
  const o = new Option(flags, description);
  const full = { ...spec, flag: o.long!.slice(2) };
  return o.argParser((v: string, prev: Array<[string, T]> | undefined) => parseRolePair(v, prev, full));
}

/** The form of a `--role-lora` value, named in its errors. */
export const LORA_SHAPE = 'role=adapter.gguf[@scale]';

/**
 * Reads a `--role-lora` value after `role=`: `adapter.gguf` or `adapter.gguf@scale` (a trailing
 * `@<number>` is the scale; any other `@` belongs to the path). The path resolves against the
 * working directory. Errors: InvalidArgumentError when only a scale is given.
 */
export function parseLoraValue(value: string, raw: string): { path: string; scale?: number } {
  let file = value;
  let scale: number | undefined;
  const m = /@([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)$/i.exec(file);
  if (m) {
    scale = Number(m[1]);
    file = file.slice(0, m.index);
    if (!file) throw new InvalidArgumentError(`--role-lora takes ${LORA_SHAPE}, got "${raw}"`);
  }
  return { path: path.resolve(file), ...(scale === undefined ? {} : { scale }) };
}

/** `role=value` pairs as a record (a later value for a role wins). */
export function pairRecord<T>(pairs: ReadonlyArray<[string, T]> | undefined): Record<string, T> {
  return Object.fromEntries(pairs ?? []);
}

/** `role=value` pairs as lists per role (a role given twice gets both, in flag order). */
export function pairLists<T>(pairs: ReadonlyArray<[string, T]> | undefined): Record<string, T[]> {
  const out: Record<string, T[]> = {};
  for (const [role, v] of pairs ?? []) (out[role] ??= []).push(v);
  return out;
}

/** parseRolePair over a list of raw values, for callers outside commander. Errors: UsageError. */
export function rolePairs<T = string>(values: readonly string[] | undefined, spec: RolePairSpec<T>, usage?: string): Array<[string, T]> {
  try {
    return (values ?? []).reduce<Array<[string, T]>>((acc, v) => parseRolePair(v, acc, spec), []);
  } catch (e) {
    throw e instanceof InvalidArgumentError ? new UsageError(e.message, usage) : e;
  }
}

/** `--role-lora` values as adapters per role, paths resolved against the working directory. Errors: UsageError. */
export function parseRoleLoras(values: readonly string[] | undefined, usage?: string): Record<string, Array<{ path: string; scale?: number }>> {
  return pairLists(rolePairs(values, { flag: 'role-lora', shape: LORA_SHAPE, value: parseLoraValue }, usage));
}

/**
 * `--db <file>`: the SQLite database, default `$FLOWLAB_DB`, else `flowlab.db` in the user's data
 * folder (host/dataFolder.ts; the global `--data <dir>` moves it). Folders a command writes beside
 * the database (workflows, versions, studies, reports) follow it.
 */
export function dbOption(description = 'SQLite database'): Option {
  return new Option('--db <file>', `${description}; by default flowlab.db in the data folder (--data <dir>, $FLOWLAB_DATA)`).default(defaultDatabase());
}

/** A comma-separated list flag value: trimmed, empty items dropped. */
export function commaList(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : value.split(',').map((s) => s.trim()).filter(Boolean);
}

// ---------- commander without process.exit ----------

/** Width the help is wrapped to. */
const HELP_WIDTH = 100;

/**
 * Configures `cmd` (and the subcommands added to it afterwards, which inherit these settings)
 * so commander writes only through `io` and never exits: its parse errors become UsageError
 * carrying the usage of the (sub)command that failed, worded as `flowlab` words them (see
 * usageErrorOf). Returns `cmd`.
 */
export function harden(cmd: Command, io: Io): Command {
  cmd
    // Subcommands inherit this callback; commander calls it as a method of the command whose parse
    // failed (`this`), so `flowlab job resume` without its <kind> prints `job resume`'s usage.
    .exitOverride(function (this: Command | undefined, err: CommanderError) {
      throw usageErrorOf(err, this instanceof Command ? this : cmd);
    })
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr, outputError: () => {} })
    .configureHelp({ helpWidth: HELP_WIDTH, showGlobalOptions: false })
    .helpOption('-h, --help', 'print this help')
    .helpCommand(false);
  return cmd;
}

/**
 * The UsageError for a commander parse error on `cmd`: `Unknown option '--x'`,
 * `missing --flag <value>`, `missing <argument>`, `expected <a> <b>, got N argument(s)`, an
 * InvalidArgumentError's own message (a choices() refusal as `--flag must be one of a, b, got "v"`); others lose commander's `error: ` prefix.
 */
export function usageErrorOf(err: CommanderError, cmd: Command): UsageError {
  const usage = cmd.helpInformation();
  const text = err.message.replace(/^error: /, '');
  switch (err.code) {
    case 'commander.unknownOption':
      return new UsageError(text.replace(/^unknown option/, 'Unknown option'), usage);
    case 'commander.missingMandatoryOptionValue':
      return new UsageError(`missing ${/'([^']+)'/.exec(text)?.[1] ?? text}`, usage);
    case 'commander.missingArgument':
      return new UsageError(`missing <${/'([^']+)'/.exec(text)?.[1] ?? '?'}>`, usage);
    case 'commander.excessArguments': {
      const want = cmd.registeredArguments.map((a) => (a.required ? `<${a.name()}>` : `[${a.name()}]`)).join(' ');
      return new UsageError(want ? `expected ${want}, got ${cmd.args.length} arguments` : `unexpected argument "${cmd.args[0]}"`, usage);
    }
    case 'commander.invalidArgument': {
      // choices(): commander's own text ("option '--x <v>' argument 'y' is invalid. Allowed choices are a, b.") with the flag and value kept.
      const choice = /^option '(--[^ ']+)[^']*' argument '(.*)' is invalid\. Allowed choices are (.*)\.$/s.exec(text);
      if (choice) return new UsageError(`${choice[1]} must be one of ${choice[3]}, got "${choice[2]}"`, usage);
      return new UsageError(text.replace(/^.* is invalid\. /, ''), usage);
    }
    case 'commander.help':
      // A command group without its subcommand: commander has printed the group's help (stderr) already.
      return new UsageError(`missing <command>: one of ${cmd.commands.map((c) => c.name()).join(', ')}`, '');
    default:
      return new UsageError(text, usage);
  }
}

/** Parses `argv` (user arguments, no program name) with the hardened `cmd`. Errors: UsageError. */
export function parseWith(cmd: Command, argv: readonly string[]): Command {
  return cmd.parse([...argv], { from: 'user' });
}

/** Where an action's exit status goes: commander's actions return nothing, so main reads it here. */
export interface CommandContext {
  io: Io;
  status?: number;
}

/** Wraps a command's run function as a commander action that records its exit status in `ctx`. */
export function act<A extends unknown[]>(ctx: CommandContext, run: (...args: A) => Promise<number>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    ctx.status = await run(...args);
  };
}
