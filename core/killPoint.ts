/**
 * A test hook for crash-safety tests: `FLOWLAB_TEST_KILL_AT=<point>[@<n>]` makes this process
 * SIGKILL itself the n-th time (default: the first) it reaches the named point, so a test can
 * kill a real child process exactly between two writes. This module is the only place that
 * reads the variable; unset (always, outside tests) every call is a no-op.
 *
 * Points: `gguf-temp-written` (models/gguf/writeGguf.ts: a GGUF's temp file is written, not
 * yet renamed), `rollout-stored` (a train-loop rollout run is stored), `rollouts-done` (an
 * iteration's rollouts experiment is finished, no version written), `version-file-written`
 * (a role's version file is renamed into place, its row not yet recorded),
 * `iteration-committed` (an iteration's versions are recorded, the models not yet reloaded);
 * and in MASS (core/mass/): `mass-step-created` (stored.ts: a step's experiment is created or
 * taken over, its run not yet started), `outer-run-guarded` (outer.ts: an outer-loop run's
 * guard verdict is freshly written to its environment's guard.json), `outer-pair-judged`
 * (outer.ts: a tournament pair's verdict is stored), `outer-tournament-done` (outer.ts: a task's
 * tournament is judged, not yet ranked), `outer-rankings-stored` (rank.ts: the rankings are
 * recorded, nothing exported), `outer-arm-exported` (rank.ts: one arm's export is written,
 * the next not yet), `rsi-version-recorded` (rsi.ts: an arm's trained version is recorded, the
 * next arm not yet trained), and `rsi-cycle-stored` (rsi.ts: a cycle's record is stored, its
 * state.json not yet written).
 */
const SPEC = /^([a-z][a-z0-9-]*)(?:@([1-9][0-9]*))?$/;

let target: { point: string; nth: number } | null | undefined;
const reached = new Map<string, number>();

/** SIGKILLs this process when `FLOWLAB_TEST_KILL_AT` names `point` and this is its n-th time here. */
export function killPoint(point: string): void {
  if (target === undefined) {
    const m = SPEC.exec(process.env['FLOWLAB_TEST_KILL_AT'] ?? '');
    target = m ? { point: m[1]!, nth: m[2] ? Number(m[2]) : 1 } : null;
  }
  if (!target || target.point !== point) return;
  const n = (reached.get(point) ?? 0) + 1;
  reached.set(point, n);
  if (n === target.nth) process.kill(process.pid, 'SIGKILL');
}
