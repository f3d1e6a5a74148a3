import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nodeEvents, runRecord, storeTracker, tempDir, thrownBy } from '../../test/fixtures.ts';
import { asExperimentId, asNodeId, asRoleName, asRunId, HUMAN, type ExperimentId } from '../ids.ts';
import type { ModelCallRecord, NodeEvent } from '../trace/index.ts';
import type { RunRecord } from '../results/index.ts';
import { MIGRATIONS } from './schema.ts';
import { computeWorkflowHash, isPidAlive, newExperimentId, openStore, SCHEMA_VERSION, StoreError, type NewExperiment, type SqliteStore as Store } from './index.ts';

let dir: string;
const stores = storeTracker();
const open = (file?: string): Store => stores.open(file);
beforeEach(() => {
  dir = tempDir('store');
});
afterEach(() => {
  stores.closeAll();
  rmSync(dir, { recursive: true, force: true });
});

function experiment(over: Partial<NewExperiment> = {}): NewExperiment {
  const yaml = 'name: demo\nsteps: []\n';
  return {
    kind: 'run',
    workflowName: 'demo',
    workflowYaml: yaml,
    workflowHash: computeWorkflowHash(yaml),
    dataset: 'gsm8k-mini',
    split: 'test',
    limit: 4,
    seed: 7,
    config: { models: { solver: 'tiny.gguf' }, threads: 1 },
    tasks: [0, 1, 2, 3].map((i) => ({ taskIndex: i, taskId: `t${i}`, input: { question: `q${i}?`, n: i }, expected: String(i * 2) })),
    ...over,
  };
}

function call(i: number, over: Partial<ModelCallRecord> = {}): ModelCallRecord {
  return {
    callIndex: i,
    role: asRoleName('solver'),
    modelRef: 'solver',
    model: 'tiny.gguf',
    system: 'You solve.',
    prompt: `prompt ${i}`,
    params: { temperature: 0, maxTokens: 64, stop: ['\n\n'] },
    seed: 42 + i,
    completion: `answer ${i}`,
    promptTokens: 10 + i,
    completionTokens: 3,
    ms: 12.5,
    startedAt: 1_700_000_000_000 + i,
    stopReason: 'eos',
    ...over,
  };
}

function run(expId: ExperimentId, taskIndex: number, over: Partial<RunRecord> = {}): RunRecord {
  return runRecord(expId, taskIndex, { answer: String(taskIndex * 2), expected: String(taskIndex * 2), ...over });
}

function events(r: RunRecord): NodeEvent[] {
  return [
    // The fixture's planner node, with structured inputs and output and three calls.
    {
      ...nodeEvents(r)[0]!,
      inputs: { task: { question: 'q?', tags: ['a', 'b'] } },
      output: { plan: ['step 1', 'step 2'], n: 2 },
      calls: [call(0, { role: asRoleName('planner'), jsonSchema: { type: 'object', required: ['plan'] } }), call(1), call(2, { system: undefined })],
      endedAt: 1_700_000_000_100,
    },
    {
      runId: r.runId,
      nodeId: asNodeId('calc'),
      attempt: 1,
      seq: 1,
      kind: 'tool',
      wiredBy: HUMAN,
      inputs: { expr: '1/0' },
      output: null,
      status: 'failed',
      failureClass: 'execution',
      errorCode: 'TOOL_ERROR',
      message: 'division by zero',
      calls: [],
      startedAt: 1_700_000_000_101,
      endedAt: 1_700_000_000_102,
      simulated: true,
    },
    {
      runId: r.runId,
      nodeId: asNodeId('answer'),
      attempt: 2,
      seq: 2,
      kind: 'agent',
      role: asRoleName('solver'),
      wiredBy: asRoleName('designer'),
      runBy: asRoleName('solver'),
      inputs: {},
      status: 'cascade',
      failureClass: 'cascade',
      causes: [asNodeId('calc')],
      calls: [call(0, { error: 'TIMEOUT: generation timed out after 30000 ms', completion: '' })],
      startedAt: 1_700_000_000_103,
      endedAt: 1_700_000_000_200,
      simulated: false,
    },
  ];
}

const codeOf = (fn: () => unknown): string => thrownBy(StoreError, fn).code;

function raw(file: string) {
  return new Database(file, { readonly: true });
}

describe('opening and migrations', () => {
  it('applies every migration once on a fresh file and nothing on re-open', () => {
    const file = join(dir, 'lab.db');
    const a = openStore(file);
    expect(a.migration).toEqual({ from: 0, to: SCHEMA_VERSION, applied: Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1) });
    a.close();
    const b = openStore(file);
    expect(b.migration).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION, applied: [] });
    b.close();
    const db = raw(file);
    const rows = db.prepare('SELECT version, COUNT(*) AS n FROM schema_migrations GROUP BY version ORDER BY version').all();
    expect(rows).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => ({ version: i + 1, n: 1 })));
    const tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).pluck().all();
    expect(tables).toEqual(['advantages', 'annotation_tags', 'annotations', 'card_uses', 'cards', 'endpoint_decisions', 'experiment_tasks', 'experiments', 'mass_records', 'model_call_settings', 'model_calls', 'node_events', 'repro_records', 'run_blame', 'run_docs', 'run_forks', 'run_fts', 'run_fts_config', 'run_fts_data', 'run_fts_docsize', 'run_fts_idx', 'runs', 'schema_migrations', 'studies', 'train_loops', 'weight_versions', 'workshop_predictions', 'workshop_results', 'workshop_sessions']);
    db.close();
  });

  it('applies a later migration once, and rolls back a failing one', () => {
    const file = join(dir, 'lab.db');
    openStore(file).close();
    const base = [...MIGRATIONS]; // all shipped versions are applied; only the next one runs.
    const next = SCHEMA_VERSION + 1;
    const bad = [...base, { version: next, name: 'broken', up: 'CREATE TABLE extra (x INTEGER); SELECT * FROM no_such_table;' }];
    expect(codeOf(() => openStore(file, { migrations: bad }))).toBe('MIGRATION_FAILED');
    let db = raw(file);
    expect(db.prepare('SELECT MAX(version) FROM schema_migrations').pluck().get()).toBe(SCHEMA_VERSION);
    expect(db.prepare(`SELECT COUNT(*) FROM sqlite_master WHERE name = 'extra'`).pluck().get()).toBe(0);
    db.close();
    const good = [...base, { version: next, name: 'extra', up: 'CREATE TABLE extra (x INTEGER);' }];
    const s = openStore(file, { migrations: good });
    expect(s.migration.applied).toEqual([next]);
    s.close();
    expect(openStore(file, { migrations: good }).migration.applied).toEqual([]);
    db = raw(file);
    expect(db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all()).toEqual([...base.map((m) => m.version), next]);
    db.close();
  });

  it('refuses a database with a newer schema than the code knows', () => {
    const file = join(dir, 'lab.db');
    openStore(file).close();
    const db = new Database(file);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(SCHEMA_VERSION + 5, 'future', Date.now());
    db.close();
    try {
      openStore(file);
      expect.unreachable();
    } catch (err) {
      expect((err as StoreError).code).toBe('SCHEMA_TOO_NEW');
      expect((err as StoreError).message).toContain(file);
      expect((err as StoreError).message).toContain(`version ${SCHEMA_VERSION + 5}`);
    }
  });

  it('migration 5 upgrades a version-4 file in place: same rows, no model_calls_run, enums checked in code, foreign keys kept', () => {
    const file = join(dir, 'v4.db');
    const v4 = openStore(file, { migrations: MIGRATIONS.slice(0, 4) });
    const { id } = v4.createExperiment(experiment({ tasks: Array.from({ length: 70 }, (_, i) => ({ taskIndex: i, taskId: `t${i}`, input: {} })) }));
    const r0 = run(id, 0);
    v4.saveRun(r0, events(r0));
    v4.close();
    const dump = () => {
      const db = raw(file);
      try {
        return ['runs', 'node_events', 'model_calls'].map((t) => db.prepare(`SELECT * FROM ${t} ORDER BY rowid`).raw().all());
      } finally {
        db.close();
      }
    };
    const before = dump();
    const indexes = (db: Database.Database) => db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'model_calls'`).pluck().all();
    const tableSql = (db: Database.Database, t: string) => db.prepare(`SELECT sql FROM sqlite_schema WHERE name = ?`).pluck().get(t) as string;
    let db = raw(file);
    expect(indexes(db)).toContain('model_calls_run');
    expect(tableSql(db, 'node_events')).toContain(`CHECK (kind IN ('agent','tool','skill'))`);
    db.close();

    const s = open(file);
    expect(s.migration).toEqual({ from: 4, to: SCHEMA_VERSION, applied: Array.from({ length: SCHEMA_VERSION - 4 }, (_, i) => 5 + i) }); // 5, and any later migration
    expect(dump()).toEqual(before);
    expect(s.getRunEvents(r0.runId)).toEqual(events(r0));
    db = raw(file);
    expect(indexes(db)).toEqual(['sqlite_autoindex_model_calls_1']);
    for (const t of ['runs', 'node_events']) expect(tableSql(db, t)).not.toMatch(/CHECK/);
    expect(tableSql(db, 'experiments')).toContain('CHECK (status IN');
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();

    // The rows the CHECKs refused are refused in code, one run or a bulk batch, with the same code; nothing is written.
    const r1 = run(id, 1);
    const bulk = (bad: RunRecord | NodeEvent) => Array.from({ length: 64 }, (_, k) => {
      const r = run(id, k + 2);
      const evs = events(r);
      if (k !== 40) return { run: r, events: evs };
      return 'taskIndex' in bad ? { run: { ...bad, runId: r.runId, taskIndex: r.taskIndex }, events: evs } : { run: r, events: [evs[0]!, { ...bad, runId: r.runId }] };
    });
    const badRun = { ...r1, status: 'exploded' as RunRecord['status'] };
    const evs1 = events(r1);
    for (const badEvent of [{ ...evs1[1]!, kind: 'robot' as NodeEvent['kind'] }, { ...evs1[1]!, status: 'exploded' as NodeEvent['status'] },
      { ...evs1[1]!, failureClass: 'cosmic' as NodeEvent['failureClass'] }]) {
      expect(codeOf(() => s.saveRun(r1, [evs1[0]!, badEvent]))).toBe('INVALID_RECORD');
      expect(codeOf(() => s.saveRuns(bulk(badEvent)))).toBe('INVALID_RECORD');
    }
    expect(thrownBy(StoreError, () => s.saveRun(badRun, [])).message).toBe(`run ${r1.runId}: status "exploded" is not one of completed, failed, cancelled`);
    expect(codeOf(() => s.saveRuns(bulk(badRun)))).toBe('INVALID_RECORD');
    expect(s.listRuns(id).map((x) => x.taskIndex)).toEqual([0]);
    // Foreign keys are still SQLite's: an event of no run is refused.
    const w = new Database(file);
    w.pragma('foreign_keys = ON');
    expect(() => w.prepare(`INSERT INTO node_events (run_id, seq, node_id, attempt, kind, wired_by, status, inputs_json, started_at, ended_at)
      VALUES ('no-run', 0, 'n', 1, 'tool', 'human', 'ok', '{}', 1, 1)`).run()).toThrow(/FOREIGN KEY/);
    w.close();
  });

  it('uses WAL, synchronous NORMAL and foreign keys on a file database', () => {
    const file = join(dir, 'lab.db');
    const s = open(file);
    s.createExperiment(experiment());
    const db = raw(file);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
    // foreign keys: a run for an experiment that does not exist is refused, not stored.
    expect(codeOf(() => s.saveRun(run(asExperimentId('nope'), 0), []))).toBe('NOT_FOUND');
  });

  it('rejects a file that is not a SQLite database, naming the file', () => {
    const file = join(dir, 'notes.db');
    writeFileSync(file, 'these are my notes, not a database\n'.repeat(20));
    try {
      openStore(file);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(StoreError);
      expect((err as StoreError).code).toBe('NOT_A_DATABASE');
      expect((err as StoreError).message).toContain(file);
      expect((err as StoreError).where).toBe(file);
    }
    expect(codeOf(() => openStore(join(dir, 'missing', 'lab.db')))).toBe('CANNOT_OPEN');
  });

  it('works in memory and refuses use after close', () => {
    const s = openStore(':memory:');
    expect(s.listExperiments()).toEqual([]);
    s.close();
    s.close();
    expect(s.closed).toBe(true);
    expect(codeOf(() => s.listExperiments())).toBe('CLOSED');
  });
});

describe('experiments', () => {
  it('creates an experiment with its planned tasks', () => {
    const s = open();
    const e = s.createExperiment(experiment());
    expect(e.id).toMatch(/^exp-\d{8}-\d{6}-[0-9a-z]{4}$/);
    expect(e).toMatchObject({ kind: 'run', status: 'running', pid: process.pid, limit: 4, seed: 7, dataset: 'gsm8k-mini', split: 'test' });
    expect(e.config).toEqual({ models: { solver: 'tiny.gguf' }, threads: 1 });
    expect(e.finishedAt).toBeUndefined();
    expect(s.getExperiment(e.id)).toStrictEqual(e);
    expect(s.listTasks(e.id)).toStrictEqual(experiment().tasks);
    expect(codeOf(() => s.createExperiment(experiment({ id: e.id })))).toBe('EXPERIMENT_EXISTS');
    expect(codeOf(() => s.getExperiment('exp-missing'))).toBe('NOT_FOUND');
    expect(s.findExperiment('exp-missing')).toBeUndefined();
  });

  it('writes nothing when a task is invalid', () => {
    const s = open();
    const tasks = [{ taskIndex: 0, taskId: 'a', input: 1 }, { taskIndex: 0, taskId: 'b', input: 2 }];
    expect(codeOf(() => s.createExperiment(experiment({ id: 'exp-dup', tasks })))).toBe('INVALID_RECORD');
    expect(s.findExperiment('exp-dup')).toBeUndefined();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(codeOf(() => s.createExperiment(experiment({ id: 'exp-cyc', config: cyclic })))).toBe('INVALID_RECORD');
    expect(s.listExperiments()).toEqual([]);
  });

  it('sets, finishes and claims status', () => {
    const s = open();
    const { id } = s.createExperiment(experiment());
    s.setExperimentStatus(id, 'cancelled');
    expect(s.getExperiment(id).status).toBe('cancelled');
    s.finishExperiment(id, 'completed');
    const done = s.getExperiment(id);
    expect(done.status).toBe('completed');
    expect(done.finishedAt).toBeGreaterThan(0);
    const claimed = s.claimExperiment(id);
    expect(claimed).toMatchObject({ status: 'running', pid: process.pid });
    expect(claimed.finishedAt).toBeUndefined();
    expect(codeOf(() => s.setExperimentStatus('exp-missing', 'failed'))).toBe('NOT_FOUND');
    expect(codeOf(() => s.finishExperiment('exp-missing', 'failed'))).toBe('NOT_FOUND');
    expect(codeOf(() => s.claimExperiment('exp-missing'))).toBe('NOT_FOUND');
  });

  it('makes readable, sortable ids and sha256 hashes', () => {
    expect(newExperimentId(new Date(Date.UTC(2025, 2, 14, 9, 26, 53)))).toMatch(/^exp-20250314-092653-[0-9a-z]{4}$/);
    expect(computeWorkflowHash('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('runs', () => {
  it('round-trips a run with its events and calls, ordered by seq then call index', () => {
    const s = open();
    const { id } = s.createExperiment(experiment());
    const r = run(id, 1, { failures: { execution: 1, cascade: 1 }, answer: undefined, status: 'failed', correct: false, score: 0 });
    delete r.answer;
    const evs = events(r);
    s.saveRun(r, [evs[2]!, evs[0]!, evs[1]!]); // stored order follows seq, not argument order
    expect(s.getRun(r.runId)).toStrictEqual(r);
    const back = s.getRunEvents(r.runId);
    const expected = evs.map((e) => ({ ...e, calls: e.calls.map((c) => stripUndefined(c)) }));
    expect(back).toStrictEqual(expected);
    expect(back[1]!.output).toBeNull();
    expect(back[2]!.output).toBeUndefined();
    expect('output' in back[2]!).toBe(false);
    expect(back[0]!.calls.map((c) => c.callIndex)).toEqual([0, 1, 2]);
    expect(s.listRuns(id)).toStrictEqual([r]);
    expect(codeOf(() => s.getRun('no-run'))).toBe('NOT_FOUND');
    expect(codeOf(() => s.getRunEvents('no-run'))).toBe('NOT_FOUND');
  });

  it('returns an experiment\'s calls with task index, node and attempt', () => {
    const s = open();
    const { id } = s.createExperiment(experiment());
    for (const i of [2, 0]) {
      const r = run(id, i);
      s.saveRun(r, events(r));
    }
    const calls = s.getExperimentCalls(id);
    expect(calls.map((c) => [c.taskIndex, c.nodeId, c.attempt, c.callIndex])).toEqual([
      [0, 'plan', 1, 0], [0, 'plan', 1, 1], [0, 'plan', 1, 2], [0, 'answer', 2, 0],
      [2, 'plan', 1, 0], [2, 'plan', 1, 1], [2, 'plan', 1, 2], [2, 'answer', 2, 0],
    ]);
    expect(calls[0]).toMatchObject({ runId: `${id}-r0`, prompt: 'prompt 0', jsonSchema: { type: 'object', required: ['plan'] } });
    expect(calls[3]!.error).toContain('TIMEOUT');
  });

  it('is atomic: a failing event leaves no run, no events and no calls', () => {
    const file = join(dir, 'lab.db');
    const s = open(file);
    const { id } = s.createExperiment(experiment());
    const r = run(id, 0);
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.me = cyclic;
    const evs = events(r);
    const withCycle = [evs[0]!, { ...evs[1]!, inputs: cyclic }, evs[2]!];
    expect(codeOf(() => s.saveRun(r, withCycle))).toBe('INVALID_RECORD');
    const badStatus = [evs[0]!, evs[1]!, { ...evs[2]!, status: 'exploded' as NodeEvent['status'] }];
    expect(codeOf(() => s.saveRun(r, badStatus))).toBe('INVALID_RECORD');
    const dupSeq = [evs[0]!, { ...evs[1]!, seq: 0 }];
    expect(codeOf(() => s.saveRun(r, dupSeq))).toBe('INVALID_RECORD');
    const foreign = [evs[0]!, { ...evs[1]!, runId: asRunId('other') }];
    expect(codeOf(() => s.saveRun(r, foreign))).toBe('INVALID_RECORD');
    const db = raw(file);
    for (const t of ['runs', 'node_events', 'model_calls']) expect(db.prepare(`SELECT COUNT(*) FROM ${t}`).pluck().get()).toBe(0);
    db.close();
    expect(s.pendingTasks(id)).toHaveLength(4);
    // the same run, valid, then stores fine
    s.saveRun(r, evs);
    expect(s.getRunEvents(r.runId)).toHaveLength(3);
  });

  it('saveRuns is all or nothing across runs', () => {
    const s = open();
    const { id } = s.createExperiment(experiment());
    const a = run(id, 0);
    const b = run(id, 1);
    expect(codeOf(() => s.saveRuns([{ run: a, events: events(a) }, { run: b, events: [{ ...events(b)[0]!, kind: 'robot' as NodeEvent['kind'] }] }]))).toBe(
      'INVALID_RECORD',
    );
    expect(s.listRuns(id)).toEqual([]);
    s.saveRuns([{ run: a, events: events(a) }, { run: b, events: events(b) }]);
    expect(s.listRuns(id).map((x) => x.taskIndex)).toEqual([0, 1]);
  });

  it('refuses a second run for the same task (RUN_EXISTS) and changes nothing', () => {
    const file = join(dir, 'lab.db');
    const s = open(file);
    const { id } = s.createExperiment(experiment());
    const r = run(id, 0);
    s.saveRun(r, events(r));
    const again = run(id, 0, { runId: asRunId('another-id'), answer: 'different' });
    expect(codeOf(() => s.saveRun(again, events(again)))).toBe('RUN_EXISTS');
    const sameId = run(id, 1, { runId: r.runId });
    expect(codeOf(() => s.saveRun(sameId, events(sameId)))).toBe('RUN_EXISTS');
    expect(s.listRuns(id)).toStrictEqual([r]);
    const db = raw(file);
    expect(db.prepare('SELECT COUNT(*) FROM node_events').pluck().get()).toBe(3);
    expect(db.prepare('SELECT COUNT(*) FROM model_calls').pluck().get()).toBe(4);
    db.close();
  });

  it('refuses a run for a task that is not planned', () => {
    const s = open();
    const { id } = s.createExperiment(experiment());
    try {
      s.saveRun(run(id, 9), []);
      expect.unreachable();
    } catch (err) {
      expect((err as StoreError).code).toBe('NOT_FOUND');
      expect((err as StoreError).message).toContain('no planned task 9');
    }
  });

  it('lists pending tasks in task order', () => {
    const s = open();
    const { id } = s.createExperiment(experiment());
    for (const i of [2, 0]) {
      const r = run(id, i);
      s.saveRun(r, events(r));
    }
    expect(s.pendingTasks(id).map((t) => t.taskIndex)).toEqual([1, 3]);
    expect(s.pendingTasks(id)[0]).toStrictEqual({ taskIndex: 1, taskId: 't1', input: { question: 'q1?', n: 1 }, expected: '2' });
    expect(codeOf(() => s.pendingTasks('exp-missing'))).toBe('NOT_FOUND');
  });

  it('lists experiments newest first with counts', async () => {
    const s = open();
    const older = s.createExperiment(experiment({ id: 'exp-a' }));
    await new Promise((r) => setTimeout(r, 5));
    const newer = s.createExperiment(experiment({ id: 'exp-b', tasks: experiment().tasks.slice(0, 2) }));
    const results: [number, boolean, number, RunRecord['status']][] = [[0, true, 1, 'completed'], [1, false, 0.5, 'completed'], [2, false, 0, 'failed']];
    for (const [i, correct, score, status] of results) {
      const r = run(older.id, i, { correct, score, status });
      s.saveRun(r, events(r));
    }
    const list = s.listExperiments();
    expect(list.map((e) => e.id)).toEqual([newer.id, older.id]);
    expect(list[0]).toMatchObject({ tasksPlanned: 2, runsDone: 0, runsCompleted: 0, runsCorrect: 0, accuracy: null, meanScore: null, completionRate: null });
    expect(list[1]).toMatchObject({ tasksPlanned: 4, runsDone: 3, runsCompleted: 2, runsCorrect: 1, meanScore: 0.5 });
    expect(list[1]!.accuracy).toBeCloseTo(1 / 3);
    expect(list[1]!.completionRate).toBeCloseTo(2 / 3);
  });
});

describe('interrupted experiments', () => {
  it('marks running experiments of dead processes interrupted on open, and leaves live ones', async () => {
    const file = join(dir, 'lab.db');
    const s = openStore(file);
    const dead = s.createExperiment(experiment({ id: 'exp-dead' }));
    const live = s.createExperiment(experiment({ id: 'exp-live' }));
    const init = s.createExperiment(experiment({ id: 'exp-pid1' }));
    const done = s.createExperiment(experiment({ id: 'exp-done' }));
    s.finishExperiment(done.id, 'completed');
    s.close();

    const deadPid = await exitedChildPid();
    expect(isPidAlive(deadPid)).toBe(false);
    const db = new Database(file);
    db.prepare('UPDATE experiments SET pid = ? WHERE id = ?').run(deadPid, dead.id);
    db.prepare('UPDATE experiments SET pid = 1 WHERE id = ?').run(init.id); // alive (EPERM when not root)
    db.prepare('UPDATE experiments SET pid = ? WHERE id = ?').run(deadPid, done.id);
    db.close();

    const again = open(file);
    expect(again.interruptedOnOpen).toEqual([dead.id]);
    expect(again.getExperiment(dead.id).status).toBe('interrupted');
    expect(again.getExperiment(live.id)).toMatchObject({ status: 'running', pid: process.pid });
    expect(again.getExperiment(init.id).status).toBe('running');
    expect(again.getExperiment(done.id).status).toBe('completed');
    expect(again.markInterrupted()).toEqual([]);

    // resume takes the interrupted one over
    expect(again.claimExperiment(dead.id)).toMatchObject({ status: 'running', pid: process.pid });
  });

  it('refuses to claim an experiment another live process is running', async () => {
    const file = join(dir, 'lab.db');
    const s = open(file);
    const e = s.createExperiment(experiment());
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
    try {
      await new Promise((r) => child.once('spawn', r));
      const db = new Database(file);
      db.prepare('UPDATE experiments SET pid = ? WHERE id = ?').run(child.pid, e.id);
      db.close();
      expect(s.markInterrupted()).toEqual([]);
      expect(codeOf(() => s.claimExperiment(e.id))).toBe('EXPERIMENT_BUSY');
    } finally {
      child.kill();
    }
  });

  it('treats missing and non-positive pids as dead', () => {
    expect(isPidAlive(process.pid)).toBe(true);
    expect(isPidAlive(undefined)).toBe(false);
    expect(isPidAlive(0)).toBe(false);
    expect(isPidAlive(-1)).toBe(false);
  });
});

function exitedChildPid(): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', () => resolve(child.pid!));
  });
}

/** The record as it reads back: optional keys given as undefined are absent. */
function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
