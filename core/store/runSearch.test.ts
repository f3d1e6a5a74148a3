import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { agentEvent, modelCall, newExperiment, runRecord, storeTracker, tempDir, thrownBy } from '../../test/fixtures.ts';
import { asNodeId, asRoleName } from '../ids.ts';
import type { CreditResult } from '../blame/credit/index.ts';
import { MIGRATIONS } from './schema.ts';
import { ftsQuery, RunQueryError, taskLabel, type RunQuery } from './index.ts';
import type { SqliteStore } from './SqliteStore.ts';

const stores = storeTracker();
afterEach(() => stores.closeAll());

/** Credit with one root failure at node `n` blamed on `role`. */
const blamedOn = (role: string, n = 'solve'): CreditResult => ({
  roots: [{ nodeId: asNodeId(n), failureClass: 'execution', errorCode: 'AGENT_ERROR', blamed: asRoleName(role) }],
  cascades: [],
  byRole: {},
  ambiguous: [],
  infrastructure: [],
  silent: false,
});

/**
 * Experiment `a` (run, workflow gsm8k-team, model qwen.gguf) with 4 runs and experiment `b`
 * (rollouts, workflow learn-word, model stories260K.gguf) with 2 rollouts of one task:
 *   a/0 correct, completion "seven apples"            started 1000
 *   a/1 wrong, failed, solver blamed, completion "banana split"   started 2000
 *   a/2 wrong, planner blamed, completion "banana bread", output {"x":"cherry"}   started 3000
 *   a/3 wrong, completed, silent, prompt "count the banana"       started 4000
 *   b/0 (task g#r0) solver blamed, completion "banana"             started 5000
 *   b/1 (task g#r1) correct, completion "kiwi"                      started 6000
 */
function seed(store: SqliteStore): void {
  store.createExperiment(newExperiment({ id: 'a', limit: 4, workflowName: 'gsm8k-team', config: { models: { models: { default: '/m/qwen.gguf' } } } }));
  store.createExperiment(newExperiment({
    id: 'b', kind: 'rollouts', workflowName: 'learn-word', dataset: 'learn-word', config: { models: { models: { default: '/m/stories260K.gguf' } }, rollouts: { group: 2 } },
    tasks: [0, 1].map((i) => ({ taskIndex: i, taskId: `g#r${i}`, input: {} })),
  }));
  const call = (prompt: string, completion: string) => modelCall({ prompt, completion });
  const runs = [
    { run: runRecord('a', 0, { startedAt: 1000, endedAt: 1100 }), completion: 'seven apples', prompt: 'how many apples' },
    { run: runRecord('a', 1, { startedAt: 2000, endedAt: 2900, status: 'failed', correct: false, score: 0, failures: { execution: 1 }, credit: blamedOn('solver') }), completion: 'banana split', prompt: 'q' },
    { run: runRecord('a', 2, { startedAt: 3000, endedAt: 3050, correct: false, score: 0, failures: { wiring: 1 }, credit: blamedOn('planner', 'plan') }), completion: 'banana bread', prompt: 'q', output: { x: 'cherry' } },
    { run: runRecord('a', 3, { startedAt: 4000, endedAt: 4010, correct: false, score: 0 }), completion: 'nothing', prompt: 'count the banana' },
    { run: runRecord('b', 0, { taskId: 'g#r0', startedAt: 5000, endedAt: 5001, correct: false, score: 0, credit: blamedOn('solver') }), completion: 'banana', prompt: 'q' },
    { run: runRecord('b', 1, { taskId: 'g#r1', startedAt: 6000, endedAt: 6002 }), completion: 'kiwi', prompt: 'q' },
  ];
  for (const r of runs) {
    const e = agentEvent(r.run.runId, 'solve', 'solver', [call(r.prompt, r.completion)], r.output ? { output: r.output } : {});
    store.saveRun(r.run, [e]);
  }
}

const ids = (store: SqliteStore, q: RunQuery) => store.searchRuns({ sort: 'started', order: 'asc', ...q }).rows.map((r) => r.runId);

describe('run search (flowlab ls, the Runs table)', () => {
  it('filters by experiment, blamed role and a word in a completion, together and alone', () => {
    const store = stores.open();
    seed(store);
    expect(ids(store, { experimentId: 'a', blamed: 'solver', text: 'banana', field: 'completion' })).toEqual(['a-r1']);
    expect(ids(store, { blamed: 'solver' })).toEqual(['a-r1', 'b-r0']);
    expect(ids(store, { text: 'banana', field: 'completion' })).toEqual(['a-r1', 'a-r2', 'b-r0']);
    // "banana" is in a-r3's prompt only: found with any field or prompt, not with completion.
    expect(ids(store, { text: 'banana' })).toEqual(['a-r1', 'a-r2', 'a-r3', 'b-r0']);
    expect(ids(store, { text: 'banana', field: 'prompt' })).toEqual(['a-r3']);
    expect(ids(store, { text: 'cherry', field: 'output' })).toEqual(['a-r2']);
    expect(ids(store, { text: '"banana bread"' })).toEqual(['a-r2']);
    expect(ids(store, { text: 'ban*', field: 'completion' })).toEqual(['a-r1', 'a-r2', 'b-r0']);
    expect(ids(store, { text: 'BANANA split' })).toEqual(['a-r1']);
  });

  it('filters by grade, status, failure class, kind, workflow, dataset, model, rollout group and date', () => {
    const store = stores.open();
    seed(store);
    expect(ids(store, { correct: true })).toEqual(['a-r0', 'b-r1']);
    expect(ids(store, { correct: false, experimentId: 'a' })).toEqual(['a-r1', 'a-r2', 'a-r3']);
    expect(ids(store, { status: 'failed' })).toEqual(['a-r1']);
    expect(ids(store, { failureClass: 'wiring' })).toEqual(['a-r2']);
    expect(ids(store, { kind: 'rollouts' })).toEqual(['b-r0', 'b-r1']);
    expect(ids(store, { workflow: 'GSM8K' })).toEqual(['a-r0', 'a-r1', 'a-r2', 'a-r3']);
    expect(ids(store, { dataset: 'learn-word' })).toEqual(['b-r0', 'b-r1']);
    expect(ids(store, { model: 'stories' })).toEqual(['b-r0', 'b-r1']);
    expect(ids(store, { group: 'g' })).toEqual(['b-r0', 'b-r1']);
    expect(ids(store, { group: 'g#r' })).toEqual([]);
    expect(ids(store, { since: 2000, until: 4000 })).toEqual(['a-r1', 'a-r2']);
  });

  it('sorts, pages, counts the total and carries the blamed roles and the experiment', () => {
    const store = stores.open();
    seed(store);
    const first = store.searchRuns({ limit: 2 });
    expect(first.total).toBe(6);
    expect(first.rows.map((r) => r.runId)).toEqual(['b-r1', 'b-r0']); // newest first by default
    expect(store.searchRuns({ limit: 2, offset: 4 }).rows.map((r) => r.runId)).toEqual(['a-r1', 'a-r0']);
    expect(ids(store, { sort: 'duration', order: 'desc', limit: 3 })).toEqual(['a-r1', 'a-r0', 'a-r2']); // 900, 100, 50 ms
    const hit = store.searchRuns({ experimentId: 'b', blamed: 'solver' }).rows[0]!;
    expect(hit).toMatchObject({ runId: 'b-r0', kind: 'rollouts', workflowName: 'learn-word', dataset: 'learn-word', blamed: ['solver'], correct: false, rollout: { task: 0, index: 0 } });
    expect(taskLabel(store.searchRuns({ experimentId: 'b', sort: 'task' }).rows[1]!)).toBe('0/1');
    expect(taskLabel(store.searchRuns({ experimentId: 'a', sort: 'task' }).rows[3]!)).toBe('3');
  });

  it('indexes runs written in bulk (saveRuns) and the runs stored before the migration', () => {
    const dir = tempDir('run-search');
    const file = join(dir, 'old.db');
    const old = stores.open(file, { migrations: MIGRATIONS.slice(0, 13) });
    seed(old);
    old.close();
    const store = stores.open(file);
    expect(store.migration.applied[0]).toBe(14); // and any later migration
    expect(ids(store, { experimentId: 'a', blamed: 'solver', text: 'banana', field: 'completion' })).toEqual(['a-r1']);
    expect(ids(store, { text: 'cherry' })).toEqual(['a-r2']);
    // 70 runs in one saveRuns (the bulk path, 64 runs or more): every one is found.
    store.createExperiment(newExperiment({ id: 'c', limit: 70 }));
    store.saveRuns(Array.from({ length: 70 }, (_, i) => {
      const run = runRecord('c', i, { correct: i % 2 === 0, credit: i % 7 === 0 ? blamedOn('verifier') : undefined });
      return { run, events: [agentEvent(run.runId, 'solve', 'solver', [modelCall({ completion: i % 5 === 0 ? 'durian' : 'fig' })])] };
    }));
    expect(store.searchRuns({ experimentId: 'c', text: 'durian' }).total).toBe(14); // i = 0, 5, ..., 65
    expect(store.searchRuns({ experimentId: 'c', text: 'durian', blamed: 'verifier' }).total).toBe(2); // i = 0, 35
  });

  it('forgets a deleted experiment\'s runs', () => {
    const dir = tempDir('run-search-del');
    const file = join(dir, 'lab.db');
    const store = stores.open(file);
    seed(store);
    store.close();
    const db = new Database(file);
    db.pragma('foreign_keys = ON');
    db.prepare(`DELETE FROM experiments WHERE id = 'a'`).run();
    expect(db.prepare('SELECT count(*) FROM run_docs').pluck().get()).toBe(2);
    expect(db.prepare(`SELECT count(*) FROM run_fts WHERE run_fts MATCH 'banana'`).pluck().get()).toBe(1);
    expect(db.prepare('SELECT count(*) FROM run_blame').pluck().get()).toBe(1);
    db.close();
  });

  it('refuses a query it cannot run, naming the field', () => {
    const store = stores.open();
    const bad = (q: RunQuery) => thrownBy(RunQueryError, () => store.searchRuns(q));
    expect(bad({ text: ' !! ' })).toMatchObject({ code: 'BAD_QUERY', location: { field: 'text' } });
    expect(bad({ limit: 0 }).location.field).toBe('limit');
    expect(bad({ failureClass: 'bogus' as never }).location.field).toBe('failureClass');
    expect(bad({ sort: 'name' as never }).location.field).toBe('sort');
  });

  it('gives the same runs whichever plan the sizes choose (probe, lookup table, hits first)', () => {
    const store = stores.open();
    store.createExperiment(newExperiment({ id: 'x', limit: 100 }));
    store.createExperiment(newExperiment({ id: 'y', limit: 2 }));
    const save = (exp: string, i: number, completion: string) => {
      const r = runRecord(exp, i);
      store.saveRun(r, [agentEvent(r.runId, 'solve', 'solver', [modelCall({ completion })])]);
    };
    for (let i = 0; i < 100; i++) save('x', i, i === 42 ? 'zz qq' : 'zz');
    save('y', 0, 'zz');
    save('y', 1, 'nothing');
    const db = (store as unknown as { db: Database.Database }).db;
    const plan = (q: RunQuery) => {
      const spy = db.prepare.bind(db);
      const seen: string[] = [];
      (db as { prepare: typeof db.prepare }).prepare = ((sql: string) => (seen.push(sql), spy(sql))) as typeof db.prepare;
      try {
        const r = store.searchRuns({ ...q, sort: 'task', order: 'asc' });
        const used = seen.find((s) => s.includes('json_each(?)')) ? 'probe' : seen.find((s) => s.includes('r.id IN (SELECT d.run_id')) ? 'drive' : 'set';
        return { used, ids: r.rows.map((h) => h.runId), total: r.total };
      } finally {
        (db as { prepare: typeof db.prepare }).prepare = spy;
      }
    };
    // 2 candidates, 101 hits: probe each candidate.
    expect(plan({ experimentId: 'y', text: 'zz' })).toEqual({ used: 'probe', ids: ['y-r0'], total: 1 });
    // 100 candidates, 101 hits: the hits as a lookup table.
    expect(plan({ experimentId: 'x', text: 'qq zz' })).toMatchObject({ ids: ['x-r42'], total: 1 });
    expect(plan({ experimentId: 'x', text: 'zz', limit: 3 })).toMatchObject({ ids: ['x-r0', 'x-r1', 'x-r2'], total: 100 });
    // 102 candidates, 1 hit: the hits drive the count (the page walks the order's index); a full first page is counted.
    expect(plan({ text: 'qq' })).toMatchObject({ ids: ['x-r42'], total: 1 });
    expect(plan({ text: 'zz', limit: 2 })).toEqual({ used: 'drive', ids: ['x-r0', 'y-r0'], total: 101 });
  });

  it('quotes the words of the search text, so FTS5 syntax in it is literal', () => {
    expect(ftsQuery('apple OR pie')).toBe('"apple" AND "OR" AND "pie"');
    expect(ftsQuery('say "hello there" x*', 'completion')).toBe('completion : ("say" AND "hello there" AND "x" *)');
    expect(ftsQuery('NEAR(a b)')).toBe('"NEAR(a" AND "b)"');
  });
});
