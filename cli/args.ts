import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { FlowlabError } from '../core/errors.ts';

/** Bad command-line arguments: printed with the command's usage, exit code 2 (cli/errors.ts). */
export class UsageError extends FlowlabError<'USAGE'> {
  override readonly name = 'UsageError';
  constructor(message: string, readonly usage?: string) {
    super('USAGE', message);
  }
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** parseArgs in strict mode, turning its errors into UsageError. */
export function parse<O extends Options>(argv: string[], options: O, usage: string) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message.replace(/\. To specify a positional argument.*$/, ''), usage);
  }
}

/** A non-negative integer flag, or UsageError naming the flag. */
export function intFlag(value: string | undefined, name: string, usage: string, opts: { min?: number } = {}): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < (opts.min ?? 0)) throw new UsageError(`--${name} must be an integer >= ${opts.min ?? 0}, got "${value}"`, usage);
  return n;
}

/**
 * The one parser of repeatable `role=value` flags (`--role-model`, `--role-lora`,
 * `--role-version`): splits each value at its first `=`, in flag order. `shape` names the
 * expected form in the error (default `role=value`); `once` refuses a role given twice.
 * Errors: UsageError naming the flag and the value.
 */
export function rolePairs(values: readonly string[] | undefined, name: string, usage: string, opts: { shape?: string; once?: boolean } = {}): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const v of values ?? []) {
    const i = v.indexOf('=');
    if (i <= 0 || i === v.length - 1) throw new UsageError(`--${name} takes ${opts.shape ?? 'role=value'}, got "${v}"`, usage);
    const role = v.slice(0, i);
    if (opts.once && out.some(([r]) => r === role)) throw new UsageError(`--${name} gives role "${role}" twice`, usage);
    out.push([role, v.slice(i + 1)]);
  }
  return out;
}

/** `role=value` pairs as a record (a later value for a role wins). */
export function pairs(values: string[] | undefined, name: string, usage: string): Record<string, string> {
  return Object.fromEntries(rolePairs(values, name, usage));
}

/**
 * Parses `--role-lora` values: `role=adapter.gguf` or `role=adapter.gguf@scale` (repeat the flag
 * to stack adapters on one role). A trailing `@<number>` is the scale; any other `@` belongs to
 * the path. Paths resolve against the working directory.
 */
export function parseRoleLoras(values: readonly string[] | undefined, usage: string): Record<string, Array<{ path: string; scale?: number }>> {
  const shape = 'role=adapter.gguf[@scale]';
  const out: Record<string, Array<{ path: string; scale?: number }>> = {};
  for (const [role, value] of rolePairs(values, 'role-lora', usage, { shape })) {
    let file = value;
    let scale: number | undefined;
    const m = /@([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)$/i.exec(file);
    if (m) {
      scale = Number(m[1]);
      file = file.slice(0, m.index);
      if (!file) throw new UsageError(`--role-lora takes ${shape}, got "${role}=${value}"`, usage);
    }
    (out[role] ??= []).push({ path: path.resolve(file), ...(scale === undefined ? {} : { scale }) });
  }
  return out;
}
