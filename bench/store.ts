/**
 * Store insert benchmark: node events/s through `Store.saveRuns` (one transaction, with JSON
 * serialisation, constraints, foreign keys and indexes) against a bare better-sqlite3 loop that
 * inserts the same rows, already flattened to parameters, into plain tables with no constraints
 * or indexes. Both use temp file databases with WAL and synchronous=NORMAL. Best of `repeats`
 * by wall time, and by CPU time. Prints nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { asExperimentId, asNodeId, asRoleName, asRunId, HUMAN } from '../core/ids.ts';
import { computeWorkflowHash, openStore, type RunWithEvents } from '../core/store/index.ts';
import type { ModelCallRecord, NodeEvent } from '../core/trace/index.ts';
import type { RunRecord } from '../core/results/index.ts';

export interface StoreBenchOptions {
  /** Node events to insert per measurement. Default 100,000. */
  events?: number;
  /** Node events per run. Default 10 (every other one an agent node with one model call). */
  eventsPerRun?: number;
  /** Measurements per side; the best is reported. Default 3. */
  repeats?: number;
}

export interface StoreBenchResult {
  /** Node events per second through `saveRuns`, all runs in one transaction (best of `repeats`). */
  rowsPerSec: number;
  /** Node events per second for the bare insert loop of the same rows (best of `repeats`). */
  baselineRowsPerSec: number;
  /** rowsPerSec / baselineRowsPerSec. */
  ratio: number;
  /** The same ratio by the process's CPU time (user + system; less sensitive to other load on the machine). */
  cpuRatio: number;
  /** Node events per second with one `saveRun` transaction per run (how the engine writes). */
  perRunRowsPerSec: number;
  /** Runs per second read back with `getRunEvents` (events and their calls), every run once, from the per-run database. */
  readRunsPerSec: number;
  events: number;
  runs: number;
  calls: number;
}

export async function benchStore(options: StoreBenchOptions = {}): Promise<StoreBenchResult> {
  const nEvents = options.events ?? 100_000;
  const perRun = options.eventsPerRun ?? 10;
  const repeats = options.repeats ?? 3;
  const nRuns = Math.ceil(nEvents / perRun);
  const batch = makeBatch(nRuns, perRun);
  const calls = batch.reduce((n, b) => n + b.events.reduce((m, e) => m + e.calls.length, 0), 0);
  const dir = mkdtempSync(join(tmpdir(), 'flowlab-bench-store-'));
  try {
    let best = Infinity;
    let baseline = Infinity;
    let bestCpu = Infinity;
    let baselineCpu = Infinity;
    for (let i = 0; i < repeats; i++) {
      const s = timeStore(join(dir, `store-${i}.db`), batch, 'one');
      const b = timeBaseline(join(dir, `bare-${i}.db`), batch);
      best = Math.min(best, s.wall);
      bestCpu = Math.min(bestCpu, s.cpu);
      baseline = Math.min(baseline, b.wall);
      baselineCpu = Math.min(baselineCpu, b.cpu);
    }
    const each = timeStore(join(dir, 'per-run.db'), batch, 'each');
    const n = nRuns * perRun;
    return {
      rowsPerSec: n / best, baselineRowsPerSec: n / baseline, ratio: baseline / best, cpuRatio: baselineCpu / bestCpu, perRunRowsPerSec: n / each.wall,
      readRunsPerSec: nRuns / each.read, events: n, runs: nRuns, calls,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const EXP = asExperimentId('exp-bench');

/** Starts a clock; calling the result gives the seconds of wall and CPU time (user + system) since. */
function clock(): () => { wall: number; cpu: number } {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  return () => {
    const c = process.cpuUsage(c0);
    return { wall: (performance.now() - t0) / 1000, cpu: (c.user + c.system) / 1e6 };
  };
}

/** Seconds to store `batch`, in one transaction (`one`) or one per run (`each`), then (`read`, wall) to read every run's events back. */
function timeStore(file: string, batch: RunWithEvents[], tx: 'one' | 'each'): { wall: number; cpu: number; read: number } {
  const store = openStore(file);
  try {
    store.createExperiment({
      id: EXP, kind: 'run', workflowName: 'bench', workflowYaml: 'name: bench\n', workflowHash: computeWorkflowHash('name: bench\n'),
      dataset: 'bench', split: 'test', seed: 1, config: {},
      tasks: batch.map((b) => ({ taskIndex: b.run.taskIndex, taskId: b.run.taskId, input: { q: b.run.taskId } })),
    });
    const stop = clock();
    if (tx === 'one') store.saveRuns(batch);
    else for (const b of batch) store.saveRun(b.run, b.events);
    const written = stop();
    const t0 = performance.now();
    if (tx === 'each') for (const b of batch) store.getRunEvents(b.run.runId);
    return { ...written, read: (performance.now() - t0) / 1000 };
  } finally {
    store.close();
  }
}

/** Seconds for a bare loop inserting the same rows (pre-flattened) into unconstrained tables. */
function timeBaseline(file: string, batch: RunWithEvents[]): { wall: number; cpu: number } {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec(`CREATE TABLE r (a, b, c, d, e, f, g, h, i, j, k, l, m, n, o);
      CREATE TABLE e (a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r);
      CREATE TABLE c (a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, s, t);`);
    const ir = db.prepare(`INSERT INTO r VALUES (${qs(15)})`);
    const ie = db.prepare(`INSERT INTO e VALUES (${qs(18)})`);
    const ic = db.prepare(`INSERT INTO c VALUES (${qs(20)})`);
    const rows = batch.map(({ run, events }) => ({
      run: [run.runId, run.experimentId, run.taskIndex, run.taskId, run.status, run.answer ?? null, run.expected ?? null, run.score,
        run.correct ? 1 : 0, run.seed, run.promptTokens, run.completionTokens, run.startedAt, run.endedAt, JSON.stringify(run.failures)],
      events: events.map((e) => ({
        event: [run.runId, e.seq, e.nodeId, e.attempt, e.kind, e.role ?? null, e.wiredBy, e.runBy ?? null, e.status, e.failureClass ?? null,
          e.errorCode ?? null, e.message ?? null, null, JSON.stringify(e.inputs), JSON.stringify(e.output), e.startedAt, e.endedAt, null],
        calls: e.calls.map((c): unknown[] => [run.runId, 0, e.nodeId, e.attempt, c.callIndex, c.role, c.modelRef, c.model, c.system ?? null, c.prompt,
          JSON.stringify(c.params), c.seed, null, c.completion, c.promptTokens, c.completionTokens, c.ms, c.startedAt, c.stopReason ?? null, null]),
      })),
    }));
    const stop = clock();
    db.transaction(() => {
      for (const r of rows) {
        ir.run(r.run);
        for (const e of r.events) {
          const id = ie.run(e.event).lastInsertRowid;
          for (const c of e.calls) {
            c[1] = Number(id);
            ic.run(c);
          }
        }
      }
    })();
    return stop();
  } finally {
    db.close();
  }
}

const qs = (n: number) => Array(n).fill('?').join(',');

export function makeBatch(nRuns: number, perRun: number): RunWithEvents[] {
  const out: RunWithEvents[] = [];
  for (let t = 0; t < nRuns; t++) {
    const runId = asRunId(`run-${t}`);
    const events: NodeEvent[] = [];
    for (let s = 0; s < perRun; s++) {
      const agent = s % 2 === 0;
      const calls: ModelCallRecord[] = agent
        ? [{
            callIndex: 0, role: asRoleName('solver'), modelRef: 'solver', model: 'tiny.gguf', system: 'You solve arithmetic.',
            prompt: `Task ${t} step ${s}: compute 17 * ${t % 97} and explain briefly.`, params: { temperature: 0, maxTokens: 64 },
            seed: t, completion: `${17 * (t % 97)}`, promptTokens: 24, completionTokens: 4, ms: 31.5, startedAt: 1_700_000_000_000 + t, stopReason: 'eos',
          }]
        : [];
      events.push({
        runId, nodeId: asNodeId(`n${s}`), attempt: 1, seq: s, kind: agent ? 'agent' : 'tool',
        ...(agent ? { role: asRoleName('solver'), runBy: asRoleName('solver') } : {}),
        wiredBy: HUMAN, inputs: { question: `q${t}`, previous: s ? `n${s - 1}` : null }, output: { value: t * s, text: 'ok' },
        status: 'ok', calls, startedAt: 1_700_000_000_000 + s, endedAt: 1_700_000_000_001 + s,
      });
    }
    const run: RunRecord = {
      runId, experimentId: EXP, taskIndex: t, taskId: `task-${t}`, status: 'completed', answer: '42', expected: '42', score: 1,
      correct: true, seed: t, promptTokens: 120, completionTokens: 20, startedAt: 1_700_000_000_000, endedAt: 1_700_000_000_100, failures: {},
    };
    out.push({ run, events });
  }
  return out;
}
