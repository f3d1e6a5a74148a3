import { readFileSync } from 'node:fs';

/**
 * Whether a process with this pid is alive on this machine, by `process.kill(pid, 0)`:
 * success or `EPERM` (exists, owned by someone else) means alive; `ESRCH` means gone.
 * A missing or non-positive pid counts as dead (`kill(0)` would signal our own group).
 * A zombie (exited, not yet reaped by its parent; Linux `/proc/<pid>/stat` state Z) counts as dead.
 * Caveat: a pid reused by an unrelated process reads as alive (`flowlab resume --force`).
 */
export function isPidAlive(pid: number | null | undefined): boolean {
  if (pid == null || !Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return !isZombie(pid);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false; // no /proc (macOS, Windows): trust kill(pid, 0)
  }
}
