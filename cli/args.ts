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

/** `role=value` pairs (repeatable flags such as --role-model). */
export function pairs(values: string[] | undefined, name: string, usage: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values ?? []) {
    const i = v.indexOf('=');
    if (i <= 0 || i === v.length - 1) throw new UsageError(`--${name} takes role=value, got "${v}"`, usage);
    out[v.slice(0, i)] = v.slice(i + 1);
  }
  return out;
}
