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

/**
 * The data folder: `opts.dataDir` when given (e.g. `--data-dir`), else `<shared>/data`
 * (see `resolveSharedDir`). Absolute; existence is not checked.
 */
export function resolveDataDir(opts: { dataDir?: string; sharedDir?: string } = {}): string {
  if (opts.dataDir !== undefined) return path.resolve(opts.dataDir);
  return path.join(resolveSharedDir(opts), 'data');
}
