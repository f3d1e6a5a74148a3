import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The team's shared folder (documents and test data).
 * Order: `opts.sharedDir` > `$FLOWLAB_SHARED` > `<cwd>/../shared`. Returns an absolute path;
 * it does not check that the folder exists.
 */
export function resolveSharedDir(opts: { sharedDir?: string } = {}): string {
  const given = opts.sharedDir ?? (process.env.FLOWLAB_SHARED || undefined);
  return given !== undefined ? path.resolve(given) : path.resolve(process.cwd(), '../shared');
}

/** The datasets folder of a user's data folder: `<userDataDir>/datasets` (absolute). */
export function userDatasetsDir(userDataDir: string): string {
  return path.join(path.resolve(userDataDir), 'datasets');
}

/**
 * The data folder: `opts.dataDir` when given (e.g. `--data-dir`), else `<shared>/data` when a
 * shared folder is named (`opts.sharedDir`, `$FLOWLAB_SHARED`) or `<cwd>/../shared` exists; else,
 * when `opts.userDataDir` is given (the desktop app's user data folder, the folder of
 * `flowlab serve`'s database), that folder's `datasets/` (where `flowlab datasets fetch` puts
 * them); else `<cwd>/../shared/data`. Absolute; the returned folder's existence is not checked.
 */
export function resolveDataDir(opts: { dataDir?: string; sharedDir?: string; userDataDir?: string } = {}): string {
  if (opts.dataDir !== undefined) return path.resolve(opts.dataDir);
  const named = opts.sharedDir !== undefined || !!process.env.FLOWLAB_SHARED;
  if (named || opts.userDataDir === undefined || existsSync(resolveSharedDir(opts))) return path.join(resolveSharedDir(opts), 'data');
  return userDatasetsDir(opts.userDataDir);
}
