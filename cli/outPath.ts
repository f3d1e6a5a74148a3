/**
 * Where `--out` writes: checked before anything is written, so a path that cannot be used is one
 * clear error naming it (`CommandError` `BAD_OUT`) instead of Node's raw `EEXIST: file already
 * exists, mkdir` or `EISDIR`.
 */
import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { CommandError } from './errors.ts';

function statOrUndefined(p: string) {
  try {
    return statSync(p);
  } catch {
    return undefined;
  }
}

/** The first existing ancestor of `p` that is not a folder (a file in the way), or undefined. */
function fileInTheWay(p: string): string | undefined {
  for (let dir = p; ; dir = path.dirname(dir)) {
    const st = statOrUndefined(dir);
    if (st) return st.isDirectory() ? undefined : dir;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** Creates `folder` and its parents; errors as `BAD_OUT` naming `flag` and the path. */
function makeFolder(folder: string, flag: string): void {
  try {
    mkdirSync(folder, { recursive: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new CommandError('BAD_OUT', `${flag} ${folder}: cannot create the folder (${code}: ${(err as Error).message})`, {}, { cause: err });
  }
}

/**
 * `out` as an absolute folder, created when missing.
 * @throws CommandError `BAD_OUT` when `out` (or a parent) is an existing file, or it cannot be created.
 */
export function outFolder(out: string, flag = '--out'): string {
  const dir = path.resolve(out);
  const blocker = fileInTheWay(dir);
  if (blocker === dir) throw new CommandError('BAD_OUT', `${flag} ${dir} is an existing file, not a folder: this export writes several files into a folder; pass a folder path`);
  if (blocker) throw new CommandError('BAD_OUT', `${flag} ${dir}: ${blocker} is a file, so the folder cannot be created there`);
  makeFolder(dir, flag);
  return dir;
}

/**
 * `out` as an absolute file path whose folder exists (created when missing); an existing file is
 * replaced by the writer.
 * @throws CommandError `BAD_OUT` when `out` is an existing folder, or its folder cannot be made.
 */
export function outFile(out: string, flag = '--out'): string {
  const file = path.resolve(out);
  if (statOrUndefined(file)?.isDirectory()) throw new CommandError('BAD_OUT', `${flag} ${file} is a folder: this export writes one file; pass a file path (e.g. ${path.join(file, 'traces.json')})`);
  const blocker = fileInTheWay(path.dirname(file));
  if (blocker) throw new CommandError('BAD_OUT', `${flag} ${file}: ${blocker} is a file, so the folder cannot be created there`);
  makeFolder(path.dirname(file), flag);
  return file;
}
