import { describe, expect, it } from 'vitest';
import { newExperiment, nodeEvents, runRecord, scratchDir, storeTracker } from '../../test/fixtures.ts';
import { openStore, SCHEMA_VERSION, type Store } from './index.ts';
import { MIGRATIONS } from './schema.ts';
import path from 'node:path';

/** A store with experiment `e1` (runs e1-r0, e1-r1, e1-r2; nodes plan and calc) and `e2` (e2-r0). */
function seeded(store: Store): void {
  const e1 = store.createExperiment(newExperiment({ id: 'e1', limit: 3 }));
  for (let i = 0; i < 3; i++) {
    const run = runRecord(e1.id, i, { correct: i !== 1, score: i === 1 ? 0 : 1 });
    store.saveRun(run, nodeEvents(run));
  }
  const e2 = store.createExperiment(newExperiment({ id: 'e2', limit: 1 }));
  store.saveRun(runRecord(e2.id, 0), []);
}

describe('annotations (migration 16)', () => {
  const stores = storeTracker();
  const dir = scratchDir('annotations');

  it('stores a run annotation and a node annotation with their tags, lists them and removes one', () => {
    const store = stores.open();
    seeded(store);
    const a = store.annotations.add({ runId: 'e1-r1', score: 0.25, tags: ['wrong-plan', 'arith', 'wrong-plan'], note: 'planner skipped the carry', author: 'ada' }, 1_700_000_100_000);
    expect(a).toMatchObject({ runId: 'e1-r1', experimentId: 'e1', score: 0.25, tags: ['arith', 'wrong-plan'], note: 'planner skipped the carry', author: 'ada', createdAt: 1_700_000_100_000 });
    expect(a.nodeId).toBeUndefined();
    expect(a.id).toMatch(/^ann-20231114-\d{6}-[0-9a-z]{4}$/);
    const b = store.annotations.add({ runId: 'e1-r1', nodeId: 'calc', tags: ['tool-bug'], author: 'bob' }, 1_700_000_200_000);
    expect(b).toMatchObject({ nodeId: 'calc', tags: ['tool-bug'], note: '', author: 'bob' });
    expect(b.score).toBeUndefined();
    store.annotations.add({ runId: 'e2-r0', score: 1, author: 'ada' }, 1_700_000_300_000);

    expect(store.annotations.list({ runId: 'e1-r1' }).map((x) => x.id)).toEqual([a.id, b.id]);
    expect(store.annotations.list({ runId: 'e1-r1', nodeId: null }).map((x) => x.id)).toEqual([a.id]);
    expect(store.annotations.list({ runId: 'e1-r1', nodeId: 'calc' }).map((x) => x.id)).toEqual([b.id]);
    expect(store.annotations.list({ experimentId: 'e1' })).toHaveLength(2);
    expect(store.annotations.list({ tag: 'arith' }).map((x) => x.id)).toEqual([a.id]);
    expect(store.annotations.list()).toHaveLength(3);
    // Tags in use: each counted once per run.
    expect(store.annotations.tags()).toEqual([{ tag: 'arith', runs: 1 }, { tag: 'tool-bug', runs: 1 }, { tag: 'wrong-plan', runs: 1 }]);

    expect(store.annotations.remove(a.id)).toBe(true);
    expect(store.annotations.remove(a.id)).toBe(false);
    expect(store.annotations.list({ tag: 'arith' })).toEqual([]);
    expect(store.annotations.tags().map((t) => t.tag)).toEqual(['tool-bug']);
    expect(() => store.annotations.get(a.id)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
  });

  it('refuses a bad annotation with the field at fault, and writes nothing', () => {
    const store = stores.open();
    seeded(store);
    const bad = (input: unknown) => {
      try {
        store.annotations.add(input);
      } catch (err) {
        return { code: (err as { code: string }).code, message: (err as Error).message };
      }
      throw new Error('accepted');
    };
    expect(bad({ runId: 'e1-r0', author: 'ada' })).toEqual({ code: 'INVALID_RECORD', message: ':memory:: annotation.score: give a score, a tag or a note' });
    expect(bad({ runId: 'e1-r0', score: Number.NaN, author: 'ada' }).message).toMatch(/annotation\.score: /);
    expect(bad({ runId: 'e1-r0', score: Infinity, author: 'ada' }).message).toBe(':memory:: annotation.score: score must be a finite number');
    expect(bad({ runId: 'e1-r0', tags: ['two words'], author: 'ada' }).message).toMatch(/^:memory:: annotation\.tags\.0: a tag is letters, digits/);
    expect(bad({ runId: 'e1-r0', tags: ['ok', ''], author: 'ada' }).message).toBe(':memory:: annotation.tags.1: a tag must not be empty');
    expect(bad({ runId: 'e1-r0', tags: Array.from({ length: 33 }, (_, i) => `t${i}`), author: 'ada' }).message).toBe(':memory:: annotation.tags: at most 32 tags');
    expect(bad({ runId: 'e1-r0', note: 'x', author: '' }).message).toBe(':memory:: annotation.author: author must not be empty');
    expect(bad({ runId: 'e1-r0', note: 'x', author: 'ada', extra: 1 }).message).toMatch(/annotation\.annotation: .*extra/i);
    expect(bad({ runId: 'nope', note: 'x', author: 'ada' })).toEqual({ code: 'NOT_FOUND', message: ':memory:: no run nope to annotate' });
    expect(bad({ runId: 'e1-r0', nodeId: 'solve', note: 'x', author: 'ada' })).toEqual({ code: 'NOT_FOUND', message: ':memory:: run e1-r0 has no node "solve" to annotate' });
    expect(store.annotations.list()).toEqual([]);
    expect(store.annotations.tags()).toEqual([]);
    // A note of spaces beside a score is no note: stored empty, as with no --note (it was kept as '   ').
    expect(store.annotations.add({ runId: 'e1-r0', score: 0.5, note: '  \n ', author: 'ada' }).note).toBe('');
  });

  it('filters runs by tag and lists each run with its tags (flowlab ls --tag, the Runs table)', () => {
    const store = stores.open();
    seeded(store);
    store.annotations.add({ runId: 'e1-r1', tags: ['arith'], author: 'ada' });
    store.annotations.add({ runId: 'e1-r1', nodeId: 'plan', tags: ['plan', 'arith'], author: 'bob' });
    store.annotations.add({ runId: 'e2-r0', tags: ['plan'], author: 'ada' });
    const byTag = (tag: string) => store.searchRuns({ tag, sort: 'experiment' }).rows.map((r) => [r.runId, r.tags]);
    expect(byTag('arith')).toEqual([['e1-r1', ['arith', 'plan']]]);
    expect(byTag('plan')).toEqual([['e1-r1', ['arith', 'plan']], ['e2-r0', ['plan']]]);
    expect(byTag('none')).toEqual([]);
    // With other filters: AND.
    expect(store.searchRuns({ tag: 'plan', experimentId: 'e2' }).total).toBe(1);
    expect(store.searchRuns({ tag: 'plan', correct: false }).rows.map((r) => r.runId)).toEqual(['e1-r1']);
    // Untagged runs carry [].
    expect(store.searchRuns({ experimentId: 'e1', sort: 'task' }).rows.map((r) => r.tags)).toEqual([[], ['arith', 'plan'], []]);
  });

  it('migrates a version-15 database to 16 (its runs kept) and keeps annotations across reopening', () => {
    const file = path.join(dir(), 'a.db');
    const v15 = openStore(file, { migrations: MIGRATIONS.slice(0, 15) });
    seeded(v15);
    v15.close();
    const first = openStore(file);
    expect(first.migration).toMatchObject({ from: 15, applied: [16] });
    expect(SCHEMA_VERSION).toBe(16);
    const a = first.annotations.add({ runId: 'e1-r0', tags: ['keep'], author: 'ada' });
    first.close();
    const again = stores.open(file);
    expect(again.annotations.get(a.id)).toEqual(a);
    expect(again.searchRuns({ tag: 'keep' }).rows.map((r) => r.runId)).toEqual(['e1-r0']);
  });
});
