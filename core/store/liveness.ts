/**
 * Whether a process with this pid is alive on this machine, by `process.kill(pid, 0)`:
 * success or `EPERM` (exists, owned by someone else) means alive; `ESRCH` means gone.
 * A missing or non-positive pid counts as dead (`kill(0)` would signal our own group).
 * Caveat: a pid reused by an unrelated process reads as alive.
 */
export function isPidAlive(pid: number | null | undefined): boolean {
  if (pid == null || !Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
