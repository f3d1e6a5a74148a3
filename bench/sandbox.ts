/**
 * The code sandbox's HumanEval check: every one of the 164 canonical solutions run against its
 * tests in the warm pool (models/sandbox, 2 interpreters), timed from a fresh pool (its start
 * from the cached memory snapshot included), beside two baselines measured in the same run on
 * the first few tasks and extrapolated to 164 (so they are estimates, and say so):
 * - cold: a fresh interpreter per task that loads Pyodide from scratch (no snapshot);
 * - snapshot: a fresh interpreter per task started from the memory snapshot.
 * Prints nothing; the caller prints. Needs `<shared>/data/humaneval/HumanEval.jsonl`.
 */
import { getDataset, humanEvalProgram, type Task } from '../core/tasks/index.ts';
import { PyodideSandbox } from '../models/sandbox/index.ts';

export interface SandboxBenchResult {
  tasks: number;
  passed: number;
  /** Pool start (2 workers from the snapshot, or made cold when none is cached), ms. */
  warmMs: number;
  /** The 164 runs after the pool is warm, ms. */
  checkMs: number;
  /** warmMs + checkMs. */
  totalMs: number;
  /** Per-task ms of a fresh interpreter per task, measured on `sampled` tasks. */
  coldPerTaskMs: number;
  snapshotPerTaskMs: number;
  sampled: number;
}

async function freshPerTask(tasks: Task[], snapshotDir: string | false | undefined): Promise<number> {
  let total = 0;
  for (const t of tasks) {
    const t0 = performance.now();
    const sb = new PyodideSandbox({ size: 1, ...(snapshotDir !== undefined && { snapshotDir }) });
    const r = await sb.run({ code: humanEvalProgram(t, t.expected), timeoutMs: 60_000 });
    await sb.close();
    if (r.status !== 'ok') throw new Error(`baseline run of ${t.id} ended ${r.status}`);
    total += performance.now() - t0;
  }
  return total / tasks.length;
}

export async function benchSandbox(opts: { sharedDir: string; sampled?: number }): Promise<SandboxBenchResult> {
  const tasks = getDataset('humaneval', { sharedDir: opts.sharedDir }).load({ split: 'test' });
  const t0 = performance.now();
  const sb = new PyodideSandbox({ size: 2 });
  await sb.warm();
  const warmMs = performance.now() - t0;
  const results = await Promise.all(tasks.map((t) => sb.run({ code: humanEvalProgram(t, t.expected), timeoutMs: 20_000 })));
  const checkMs = performance.now() - t0 - warmMs;
  await sb.close();
  const sample = tasks.slice(0, opts.sampled ?? 3);
  const coldPerTaskMs = await freshPerTask(sample, false);
  const snapshotPerTaskMs = await freshPerTask(sample, undefined);
  return {
    tasks: tasks.length,
    passed: results.filter((r) => r.status === 'ok').length,
    warmMs, checkMs, totalMs: warmMs + checkMs, coldPerTaskMs, snapshotPerTaskMs, sampled: sample.length,
  };
}
