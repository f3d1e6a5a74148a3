/**
 * `saveRuns`' multi-row fast path (RunWriter.insertBatch, core/store/runWriter.ts): the rows and ids it writes are those of
 * one insert at a time, across statement and group boundaries, and any error falls back to the
 * run-by-run path with its exact error, leaving nothing written.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asExperimentId, asNodeId, asRoleName, asRunId, HUMAN } from '../ids.ts';
import type { NodeEvent } from '../trace/index.ts';
import type { RunRecord } from '../results/index.ts';
import { computeWorkflowHash, openStore, StoreError, type RunWithEvents, type Store } from './index.ts';
import { prepareStatements } from './statements.ts';

const EXP = asExperimentId('exp-batch');
let dir: string;
let file: string;
let store: Store;

/** `n` runs of `perRun` events; every third event an agent node with two model calls. */
function batch(n: number, perRun: number, from = 0): RunWithEvents[] {
  return Array.from({ length: n }, (_, k) => {
    const t = from + k;
    const runId = asRunId(`run-${t}`);
    const events: NodeEvent[] = Array.from({ length: perRun }, (_, s) => ({
      runId, nodeId: asNodeId(`n${s}`), attempt: 1, seq: s, kind: s % 3 === 0 ? 'agent' : 'tool', wiredBy: HUMAN,
      inputs: { q: `q${t}`, s }, output: s % 4 === 0 ? null : { v: t * s }, status: 'ok', startedAt: 1_000 + s, endedAt: 2_000 + s,
      ...(s % 5 === 1 ? { causes: [asNodeId('n0')] } : {}),
      calls: s % 3 === 0
        ? [0, 1].map((i) => ({
            callIndex: i, role: asRoleName('solver'), modelRef: 'solver', model: 'm.gguf', prompt: `p${t}.${s}.${i}`,
            params: { temperature: 0, maxTokens: 8 }, seed: t, completion: `c${i}`, promptTokens: 3, completionTokens: 1, ms: 1.5,
            startedAt: 1_000, ...(i === 1 ? { promptTokenIds: [1, 2, 3], completionTokenIds: [4] } : {}),
          }))
        : [],
    }));
    const run: RunRecord = {
      runId, experimentId: EXP, taskIndex: t, taskId: `t${t}`, status: 'completed', score: 1, correct: true, seed: t,
      promptTokens: 3, completionTokens: 1, startedAt: 1_000, endedAt: 3_000, failures: {},
    };
    return { run, events };
  });
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'flowlab-batch-'));
  file = join(dir, 'b.db');
  store = openStore(file);
  store.createExperiment({
    id: EXP, kind: 'run', workflowName: 'w', workflowYaml: 'name: w\n', workflowHash: computeWorkflowHash('name: w\n'),
    dataset: 'd', split: 'test', seed: 1, config: {}, tasks: Array.from({ length: 400 }, (_, i) => ({ taskIndex: i, taskId: `t${i}`, input: {} })),
  });
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

function rows(sql: string): unknown[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).raw().all();
  } finally {
    db.close();
  }
}

describe('saveRuns fast path', () => {
  it('numbers events and calls as single inserts would, across statements and groups, and round-trips every value', () => {
    store.saveRun(batch(1, 3, 0)[0]!.run, batch(1, 3, 0)[0]!.events); // ids 1..3 already taken
    const b = batch(300, 7, 1); // 2,100 events, 1,800 calls: several 256-row statements, two groups
    store.saveRuns(b);
    const events = rows('SELECT id, run_id, seq FROM node_events ORDER BY id') as [number, string, number][];
    const expected = [...batch(1, 3, 0), ...b].flatMap(({ run, events: evs }) => evs.map((e) => [run.runId, e.seq]));
    expect(events.map(([, r, s]) => [r, s])).toEqual(expected);
    expect(events.map(([id]) => id)).toEqual(expected.map((_, i) => i + 1));
    const calls = rows(`SELECT c.id, e.run_id, e.seq, c.call_index FROM model_calls c JOIN node_events e ON e.id = c.node_event_id ORDER BY c.id`) as [number, string, number, number][];
    const expectedCalls = [...batch(1, 3, 0), ...b].flatMap(({ run, events: evs }) => evs.flatMap((e) => e.calls.map((c) => [run.runId, e.seq, c.callIndex])));
    expect(calls.map(([, ...rest]) => rest)).toEqual(expectedCalls);
    expect(calls.map(([id]) => id)).toEqual(expectedCalls.map((_, i) => i + 1));
    expect(rows('SELECT rowid, id FROM runs ORDER BY rowid').map((r) => (r as [number, string])[1])).toEqual([0, ...b.map((_, i) => i + 1)].map((t) => `run-${t}`));
    for (const { run, events: evs } of [b[0]!, b[150]!, b[299]!]) {
      expect(store.getRun(run.runId)).toEqual(run);
      expect(store.getRunEvents(run.runId)).toEqual(evs);
    }
  });

  it('on an error, writes nothing and throws the run-by-run error: duplicate seq, a stored run, an event of another run', () => {
    const dup = batch(100, 4);
    dup[70]!.events[2] = { ...dup[70]!.events[2]!, seq: 1 };
    const e1 = (() => { try { store.saveRuns(dup); } catch (e) { return e as StoreError; } })();
    expect(e1).toBeInstanceOf(StoreError);
    expect(e1!.code).toBe('INVALID_RECORD');
    expect(e1!.message).toContain('run run-70 node n2 attempt 1 (seq 1)');
    expect(rows('SELECT COUNT(*) FROM runs')).toEqual([[0]]);
    expect(rows('SELECT COUNT(*) FROM node_events')).toEqual([[0]]);

    store.saveRuns(batch(1, 2, 50));
    const e2 = (() => { try { store.saveRuns(batch(100, 2)); } catch (e) { return e as StoreError; } })();
    expect(e2!.code).toBe('RUN_EXISTS');
    expect(e2!.message).toContain('a run for task 50 of experiment exp-batch is already stored');
    expect(rows('SELECT COUNT(*) FROM runs')).toEqual([[1]]);

    const foreign = batch(10, 2, 200);
    foreign[4]!.events[1] = { ...foreign[4]!.events[1]!, runId: asRunId('run-9999') };
    const e3 = (() => { try { store.saveRuns(foreign); } catch (e) { return e as StoreError; } })();
    expect(e3!.code).toBe('INVALID_RECORD');
    expect(e3!.message).toBe('run run-204: event for node n1 (seq 1) belongs to run run-9999');
    expect(rows('SELECT COUNT(*) FROM node_events')).toEqual([[2]]);
  });

  it('checks foreign keys itself in a bulk batch (64+ runs): an unplanned task or no experiment is NOT_FOUND, nothing written', () => {
    const late = batch(100, 3, 350); // tasks 400..449 are not planned
    const e1 = (() => { try { store.saveRuns(late); } catch (e) { return e as StoreError; } })();
    expect(e1).toBeInstanceOf(StoreError);
    expect(e1!.code).toBe('NOT_FOUND');
    expect(e1!.message).toContain('cannot store run run-400: experiment exp-batch has no planned task 400');
    const orphan = batch(70, 2).map(({ run, events }) => ({ run: { ...run, experimentId: asExperimentId('exp-none') }, events }));
    const e2 = (() => { try { store.saveRuns(orphan); } catch (e) { return e as StoreError; } })();
    expect(e2!.code).toBe('NOT_FOUND');
    expect(e2!.message).toContain('cannot store run run-0: no experiment exp-none');
    expect(rows('SELECT COUNT(*) FROM runs')).toEqual([[0]]);
    expect(rows('SELECT COUNT(*) FROM node_events')).toEqual([[0]]);

    store.saveRuns(batch(80, 3));
    expect(rows('PRAGMA foreign_key_check')).toEqual([]);
    expect(rows('SELECT COUNT(*) FROM model_calls')).toEqual([[80 * 2]]);
    // SQLite's checks are back on for the next write: a single run of no experiment is refused by them.
    const [one] = batch(1, 1, 90);
    expect(() => store.saveRun({ ...one!.run, experimentId: asExperimentId('exp-none') }, one!.events)).toThrow(/no experiment exp-none/);
  });
});

describe('trace reads', () => {
  it('find runs, events and calls through indexes (EXPLAIN QUERY PLAN: no table scan)', () => {
    const db = new Database(file, { readonly: true });
    try {
      const st = prepareStatements(db);
      const plan = (name: 'eventsOfRun' | 'callsOfRun' | 'callsOfExperiment' | 'runsOf' | 'runById' | 'pendingOf') =>
        (db.prepare(`EXPLAIN QUERY PLAN ${st[name].source}`).all('x') as { detail: string }[]).map((r) => r.detail);
      expect(plan('eventsOfRun')).toEqual(['SEARCH node_events USING INDEX sqlite_autoindex_node_events_1 (run_id=?)']);
      expect(plan('callsOfRun')).toEqual([
        'SEARCH e USING COVERING INDEX sqlite_autoindex_node_events_1 (run_id=?)',
        'SEARCH c USING INDEX sqlite_autoindex_model_calls_1 (node_event_id=?)',
        'SEARCH x USING PRIMARY KEY (node_event_id=? AND call_index=?) LEFT-JOIN',
      ]);
      expect(plan('callsOfExperiment')).toEqual([
        'SEARCH r USING INDEX sqlite_autoindex_runs_2 (experiment_id=?)',
        'SEARCH e USING COVERING INDEX sqlite_autoindex_node_events_1 (run_id=?)',
        'SEARCH c USING INDEX sqlite_autoindex_model_calls_1 (node_event_id=?)',
        'SEARCH x USING PRIMARY KEY (node_event_id=? AND call_index=?) LEFT-JOIN',
      ]);
      expect(plan('runsOf')).toEqual(['SEARCH runs USING INDEX sqlite_autoindex_runs_2 (experiment_id=?)']);
      expect(plan('runById')).toEqual(['SEARCH runs USING INDEX sqlite_autoindex_runs_1 (id=?)']);
    } finally {
      db.close();
    }
  });

  it('reads a run\'s calls grouped by event in call order', () => {
    const b = batch(70, 7);
    store.saveRuns(b);
    for (const { run, events } of [b[0]!, b[69]!]) expect(store.getRunEvents(run.runId)).toEqual(events);
  });
});
