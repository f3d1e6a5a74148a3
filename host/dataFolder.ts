/**
 * The user's data folder: where the CLI and `flowlab serve` keep the database and everything
 * written beside it (workflows, weight versions, studies, MASS outputs, workshop reports) unless
 * told otherwise, so nothing lands in the folder a command happens to run in (a checkout's root).
 * The desktop app keeps the same things in Electron's `userData` (electron/main.ts).
 *
 * Order: `$FLOWLAB_DATA` (the CLI's global `--data <dir>` sets it), else the platform's data home
 * with `flowlab` under it: `$XDG_DATA_HOME/flowlab` (an absolute `XDG_DATA_HOME`, as the XDG Base
 * Directory specification asks), else `~/.local/share/flowlab` on Linux and other Unix systems;
 * `~/Library/Application Support/flowlab` on macOS; `%APPDATA%\flowlab` (else
 * `~\AppData\Roaming\flowlab`) on Windows. Pure: nothing is created here (`ensureDataFolder`).
 */
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** What the data folder is read from (the process's by default; tests pass their own). */
export interface DataFolderContext {
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  home?: string;
}

/** The user's data folder (absolute), per the order above. */
export function userDataFolder(ctx: DataFolderContext = {}): string {
  const env = ctx.env ?? process.env;
  const platform = ctx.platform ?? process.platform;
  const home = ctx.home ?? os.homedir();
  const p = platform === 'win32' ? path.win32 : path.posix;
  if (env['FLOWLAB_DATA']) return p.resolve(env['FLOWLAB_DATA']);
  if (platform === 'win32') return p.join(env['APPDATA'] && p.isAbsolute(env['APPDATA']) ? env['APPDATA'] : p.join(home, 'AppData', 'Roaming'), 'flowlab');
  if (platform === 'darwin') return p.join(home, 'Library', 'Application Support', 'flowlab');
  const xdg = env['XDG_DATA_HOME'];
  return p.join(xdg && p.isAbsolute(xdg) ? xdg : p.join(home, '.local', 'share'), 'flowlab');
}

/** The default database: `$FLOWLAB_DB`, else `flowlab.db` in the user's data folder. */
export function defaultDatabase(ctx: DataFolderContext = {}): string {
  const env = ctx.env ?? process.env;
  return env['FLOWLAB_DB'] || path.join(userDataFolder(ctx), 'flowlab.db');
}

/** Creates the folder of `dbFile` when missing (the data folder on first use); returns it. Errors: the file system's (EACCES...). */
export function ensureDataFolder(dbFile: string): string {
  const dir = path.dirname(path.resolve(dbFile));
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * Whether `dbFile` names one of SQLite's private databases, which have no file of their own:
 * `:memory:` (in memory) and `''` (a temporary file SQLite deletes on close). Nothing the lab
 * keeps for later is written beside them by name (the lab host's added-models list is skipped).
 */
export function isPrivateDatabase(dbFile: string): boolean {
  return dbFile === ':memory:' || dbFile === '';
}

/**
 * The path `names` beside the database `dbFile` (absolute): `<folder of dbFile>/<names...>`,
 * where everything a command or the lab host writes by default lives (weight versions, studies,
 * MASS outputs, workflows, the corpus cache, fetched datasets, workshop reports). No name: the
 * folder itself. Pure: nothing is created.
 *
 * One rule for every caller, the CLI and the lab host alike: a private database
 * ({@link isPrivateDatabase}) has no folder, so the system's temporary folder (`os.tmpdir()`)
 * stands in for it: what a throwaway database's run writes is as temporary as the database, and
 * it never lands in the folder a command happens to run in (a checkout's root).
 */
export function besideDatabase(dbFile: string, names: readonly string[] = []): string {
  const base = isPrivateDatabase(dbFile) ? os.tmpdir() : path.dirname(path.resolve(dbFile));
  return path.join(base, ...names);
}
