/**
 * The process-level guards of the `flowlab` process. A rejection nobody awaits or an exception
 * nobody catches (a native library's internal promise, a bug) would otherwise end the process
 * with Node's stack dump and leave every experiment it was running `running` in its database
 * until some later open notices the dead pid. The guard records them first: every experiment
 * this process runs in every store it has open is marked `interrupted` (`SqliteStore.interruptOwn`),
 * one line says what failed and which experiments `flowlab resume` can finish, and the process
 * ends with status 1. A long-running server (`flowlab serve`) keeps serving instead: it logs the
 * fault and lets other requests go on.
 */
import type { SqliteStore } from '../core/store/index.ts';
import type { Io } from './io.ts';

/**
 * The open stores, read only when a fault happens: the store module (and better-sqlite3) is
 * imported lazily so installing the guard costs `flowlab --help` nothing; when no command has
 * loaded it, no store is open.
 */
async function openStoresNow(): Promise<SqliteStore[]> {
  return (await import('../core/store/index.ts')).openStores();
}

/** What a guard does after recording: end the process (`exit`) or log and continue (`serve`). */
export type GuardMode = 'exit' | 'continue';

/**
 * What the guard writes and returns for one fault: the experiments marked `interrupted` and
 * the stderr line. Exported for tests (the handler itself ends the process).
 */
export async function recordFault(fault: unknown, command: string, io: Io, mode: GuardMode): Promise<string[]> {
  const ids = (await openStoresNow()).flatMap((s) => {
    try {
      return mode === 'exit' ? s.interruptOwn().map(String) : [];
    } catch {
      return [];
    }
  });
  const err = fault instanceof Error ? fault : new Error(String(fault));
  const code = (err as { code?: unknown }).code;
  const tag = typeof code === 'string' && !err.message.includes(code) ? ` [${code}]` : '';
  let line = `flowlab ${command}: internal failure (${mode === 'exit' ? 'the process ends' : 'the server goes on'}): ${err.message}${tag}\n`;
  if (ids.length > 0) line += `Recorded as interrupted: ${ids.join(', ')}; \`flowlab resume <experiment-id>\` finishes the tasks left.\n`;
  if (process.env.FLOWLAB_DEBUG && err.stack) line += `${err.stack}\n`;
  io.stderr(line);
  return ids;
}

/**
 * Installs the guard on `unhandledRejection` and `uncaughtException` for `command`.
 * @param exit ends the process in `exit` mode (default `process.exit`), after the stores are closed.
 * @returns a function that removes the guard again.
 */
export function installProcessGuards(command: string, io: Io, mode: GuardMode = command === 'serve' ? 'continue' : 'exit', exit: (code: number) => void = (c) => process.exit(c)): () => void {
  const onFault = (fault: unknown): void => {
    void (async () => {
      try {
        await recordFault(fault, command, io, mode);
        if (mode === 'continue') return;
        for (const s of await openStoresNow()) s.close();
      } catch {
        // recording is best effort; the process still ends
      }
      if (mode === 'exit') exit(1);
    })();
  };
  process.on('unhandledRejection', onFault);
  process.on('uncaughtException', onFault);
  return () => {
    process.off('unhandledRejection', onFault);
    process.off('uncaughtException', onFault);
  };
}
