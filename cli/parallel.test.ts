/**
 * `--parallel` keeps results independent of timing (issue 26 with issue 24's rule): the same
 * experiment at `--parallel 1` and `--parallel 16`, against a loopback OpenAI-compatible server
 * (bench/latencyServer.mjs, SIMULATED) whose answers are a function of the prompt and whose
 * latency is a hash of the prompt (so calls finish out of order), stores the same runs, node
 * events and model calls, in the same row order, under the same run ids, and prints the same table.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExperiment } from '../core/experiments/index.ts';
import { openStore } from '../core/store/index.ts';
import { defaultTools } from '../core/tools/index.ts';
import { loadWorkflowFile } from '../core/workflow/index.ts';
import { fileModelPort } from '../models/factory.ts';
import { resolveModels } from '../models/resolve.ts';
import { startLatencyServer, type LatencyServer } from '../bench/latencyServer.mjs';
import { capture, tempDir } from '../test/fixtures.ts';
import { main } from './main.ts';

const TASKS = 24;
const TIMING = new Set(['startedAt', 'endedAt', 'ms', 'wallSeconds']);
/** A stored value without its clock readings (which differ between any two runs). */
function untimed(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(untimed);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).filter(([k]) => !TIMING.has(k)).map(([k, x]) => [k, untimed(x)]));
  return v;
}

describe('flowlab run --parallel', () => {
  let server: LatencyServer;
  const dir = tempDir('parallel');
  const dataDir = path.join(dir, 'data');
  beforeAll(async () => {
    // 5-35 ms per call, by prompt: later tasks often finish before earlier ones.
    server = await startLatencyServer({ latencyMs: 5, jitterMs: 30 });
    mkdirSync(path.join(dataDir, 'gsm8k'), { recursive: true });
    const lines = Array.from({ length: TASKS }, (_, i) => JSON.stringify({ question: `What is ${i + 3} + ${2 * i + 1}?`, answer: `work\n#### ${3 * i + 4}` }));
    writeFileSync(path.join(dataDir, 'gsm8k/test.jsonl'), lines.join('\n') + '\n');
  });
  afterAll(() => server.close());

  async function runAt(parallel: number | undefined, name: string, ref = `openai:${server.baseUrl}#latency&concurrency=8`, command: string[] = ['run']) {
    const db = path.join(dir, `${name}.db`);
    const io = capture();
    server.reset();
    const code = await main([...command, 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--limit', String(TASKS), '--model', ref, '--db', db, '--data-dir', dataDir, ...(parallel === undefined ? [] : ['--parallel', String(parallel)])], io);
    expect(code, io.err).toBe(0);
    const stats = server.stats();
    const store = openStore(db);
    const exp = store.listExperiments()[0]!;
    const runs = store.listRuns(exp.id);
    // Run ids are `<experiment id>/<task index>`: the experiment's own id (fresh each time) is masked.
    const stored = JSON.parse(JSON.stringify(runs.map((r) => ({ run: untimed(r), events: untimed(store.getRunEvents(r.runId)) }))).split(exp.id).join('<id>')) as unknown[];
    const decisions = store.endpointDecisions.of(exp.id);
    store.close();
    const raw = new Database(db, { readonly: true });
    const rowOrder = (raw.prepare('SELECT task_index FROM runs ORDER BY rowid').all() as Array<{ task_index: number }>).map((r) => r.task_index);
    const callOrder = (raw.prepare('SELECT * FROM model_calls ORDER BY rowid').all() as Array<Record<string, unknown>>).map((c) => String(c.completion));
    raw.close();
    // The table without its clock lines (wall seconds, seconds per task) and the experiment id.
    const table = io.out.split(exp.id).join('<id>').replace(/.*(wall seconds|seconds per task).*\n/g, '');
    return { stats, decisions, stored, rowOrder, callOrder, table, err: io.err, runIds: runs.map((r) => r.runId.slice(exp.id.length)) };
  }

  let one: Awaited<ReturnType<typeof runAt>>;
  it('stores identical completions, runs and tables at --parallel 1 and 16, rows in task order', { timeout: 120_000 }, async () => {
    one = await runAt(1, 'one');
    const many = await runAt(16, 'many');
    // It did run in parallel: 16 tasks, so 8 calls (the endpoint's concurrency) at once, against 1.
    expect(one.stats.maxInFlight).toBe(1);
    expect(many.stats.maxInFlight).toBe(8);
    expect(many.stats.answered).toBe(one.stats.answered);
    expect(one.stored).toHaveLength(TASKS);
    expect(many.runIds).toEqual(Array.from({ length: TASKS }, (_, i) => `/${i}`));
    expect(many.stored).toEqual(one.stored);
    expect(many.rowOrder).toEqual(Array.from({ length: TASKS }, (_, i) => i));
    expect(one.rowOrder).toEqual(many.rowOrder);
    expect(many.callOrder).toEqual(one.callOrder);
    expect(many.table).toEqual(one.table);
    expect(one.table).toContain('gsm8k-team');
  });

  it('defaults to three times the endpoint concurrency in tasks, the endpoint concurrency in calls, and says so', { timeout: 120_000 }, async () => {
    const d = await runAt(undefined, 'default');
    expect(d.err).toContain('24 tasks in flight (default: 3 x the sum of endpoint concurrency 8 = 3 x 8; --parallel sets it)');
    // 24 tasks in flight, but never more calls than the endpoint's 8 slots: the rest wait in its queue.
    expect(d.stats.maxInFlight).toBe(8);
    expect(d.stored).toEqual((one ??= await runAt(1, 'one-default')).stored);
  });

  it('with one of two replicas answering 429 to every third call: every task completes, the same as on one server, and the decisions are stored', { timeout: 120_000 }, async () => {
    const shedding = await startLatencyServer({ latencyMs: 5, jitterMs: 30, rejectEvery: 3 });
    try {
      const ref = `openai:${shedding.baseUrl}#latency&concurrency=8,${server.baseUrl}#latency&concurrency=8`;
      one ??= await runAt(1, 'one-alone');
      const two = await runAt(16, 'shedding', ref);
      expect(shedding.stats().rejected).toBeGreaterThan(0);
      expect(two.stored).toEqual(one.stored);
      expect(two.decisions.length).toBeGreaterThan(0);
      expect(two.decisions[0]).toMatchObject({ endpoint: `${shedding.baseUrl}#latency`, action: 'decrease', limit: 4 });
      expect(two.decisions[0]!.reason).toMatch(/answered 429/);
      expect(two.err).toContain(`endpoint decisions (docs/scale.md): ${shedding.baseUrl}#latency limit`);
    } finally {
      await shedding.close();
    }
  });

  it('blame-eval (the same loop, SIMULATED faults keyed by task): identical stores and blame tables at --parallel 1 and 8', { timeout: 120_000 }, async () => {
    const cmd = ['blame-eval', '--inject', 'solver=error@0.5', '--inject', 'verifier=wrong@0.3'];
    const a = await runAt(1, 'blame-one', undefined, cmd);
    const b = await runAt(8, 'blame-many', undefined, cmd);
    expect(b.stats.maxInFlight).toBe(8);
    expect(b.stored).toEqual(a.stored);
    expect(b.rowOrder).toEqual(a.rowOrder);
    expect(b.table).toEqual(a.table);
    expect(a.table).toMatch(/SIMULATED/);
  });

  it('cancelled at --parallel 8 mid-run, then resumed: the stored runs are a prefix in task order, and the end is the same as one uninterrupted run', { timeout: 120_000 }, async () => {
    const file = path.resolve('examples/gsm8k-team.yaml');
    const tools = defaultTools();
    const workflow = loadWorkflowFile(file, { tools });
    const ref = `openai:${server.baseUrl}#latency&concurrency=8`;
    const { config } = resolveModels(workflow.graph, { default: ref });
    const store = openStore(path.join(dir, 'cancel.db'));
    try {
      let runs = 0;
      const handle = await startExperiment(
        { kind: 'run', workflow: { ...workflow, file }, dataset: 'gsm8k', split: 'test', limit: TASKS, seed: 0, dataDir, models: config, parallel: 8 },
        { store, models: fileModelPort(), tools },
        { onEvent: (e) => { if (e.type === 'run' && e.status !== 'cancelled' && ++runs === 5) handle.cancel(); } },
      );
      const first = await handle.done;
      expect(first.status).toBe('cancelled');
      const kept = store.listRuns(first.experimentId).map((r) => r.taskIndex);
      expect(kept.length).toBeGreaterThanOrEqual(5);
      expect(kept.length).toBeLessThan(TASKS);
      expect(kept).toEqual(kept.map((_, i) => i)); // a prefix: nothing after the first run not finished
      const resumed = await (await startExperiment({ kind: 'resume', experimentId: first.experimentId, parallel: 8 }, { store, models: fileModelPort(), tools })).done;
      expect(resumed.status).toBe('completed');
      const stored = JSON.parse(JSON.stringify(store.listRuns(first.experimentId).map((r) => ({ run: untimed(r), events: untimed(store.getRunEvents(r.runId)) }))).split(first.experimentId).join('<id>')) as unknown[];
      one ??= await runAt(1, 'one-for-resume');
      expect(stored).toEqual(one.stored);
    } finally {
      store.close();
    }
  });

  it('with one of two replicas not answering at all: taken out, every task completes, the same as on one server', { timeout: 120_000 }, async () => {
    const gone = await startLatencyServer({ latencyMs: 5 });
    const deadUrl = gone.baseUrl;
    await gone.close(); // connection refused from now on
    one ??= await runAt(1, 'one-for-dead');
    const two = await runAt(16, 'dead-replica', `openai:${deadUrl}#latency&concurrency=8,${server.baseUrl}#latency&concurrency=8`);
    expect(two.stored).toEqual(one.stored);
    expect(two.decisions[0]).toMatchObject({ endpoint: `${deadUrl}#latency`, action: 'remove', limit: 0 });
    expect(two.decisions[0]!.reason).toMatch(/cannot reach/);
    expect(two.err).toMatch(/taken out \dx/);
  });
});
