/**
 * Test helpers for the crash-safety tests that kill a real CLI child (core/killPoint.ts): run a
 * command with `FLOWLAB_TEST_KILL_AT`, list a folder's files, read a store without marking
 * anything interrupted.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { openStore, type Store } from '../core/store/index.ts';

/** Runs `node bin/flowlab.js ...args` with the kill hook at `point` (`<name>[@n]`); resolves how the child ended. */
export function cliKilledAt(args: string[], point: string): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/flowlab.js', ...args], { stdio: 'ignore', env: { ...process.env, FLOWLAB_TEST_KILL_AT: point } });
    child.on('close', (code, signal) => resolve({ code, signal }));
  });
}

/** Every file under `dir` (relative paths, sorted, depth first); none when `dir` is missing. */
export function filesUnder(dir: string, rel = ''): string[] {
  if (!existsSync(path.join(dir, rel))) return [];
  return readdirSync(path.join(dir, rel)).sort().flatMap((n) => (statSync(path.join(dir, rel, n)).isDirectory() ? filesUnder(dir, path.join(rel, n)) : [path.join(rel, n)]));
}

/** `f` of the store at `db`, opened without marking running experiments interrupted, then closed. */
export function peekStore<T>(db: string, f: (s: Store) => T): T {
  const s = openStore(db, { markInterrupted: false });
  try {
    return f(s);
  } finally {
    s.close();
  }
}
