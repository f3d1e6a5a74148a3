import { describe, expect, it } from 'vitest';
import { openStore } from '../../store/index.ts';
import { runToyStudy } from '../../studies/study.fixture.ts';
import { ApiError, createHandlers } from '../index.ts';

describe('the studies API', () => {
  it('lists studies with progress and gives one with its cells, table and estimate', async () => {
    const store = openStore(':memory:');
    const out = await runToyStudy(store);
    const api = createHandlers({ store, version: 'test' });
    expect(api.listStudies()).toEqual([expect.objectContaining({ id: out.studyId, name: 'toy', status: 'completed', cells: 4, cellsDone: 4, runsDone: 12, runsPlanned: 12 })]);
    const d = api.getStudy({ studyId: out.studyId });
    expect(d.cells.map((c) => [c.key, c.status, c.done, c.total])).toEqual([
      ['base/id/s0/m', 'completed', 4, 4], ['base/far/s0/m', 'completed', 2, 2], ['better/id/s0/m', 'completed', 4, 4], ['better/far/s0/m', 'completed', 2, 2],
    ]);
    expect(d.cells[0]!.experimentId).toBe(`${out.studyId}.base.id.s0.m`);
    expect(d.table).toEqual(out.table);
    expect(d.units).toEqual([]);
    expect(d.wallSeconds).toHaveLength(1);
    expect(() => api.getStudy({ studyId: 'st-nope' })).toThrow(ApiError);
    expect(() => api.getStudy({} as never)).toThrow(/studyId/);
    store.close();
  });
});

describe('a study whose process died', () => {
  it('lists as interrupted', async () => {
    const store = openStore(':memory:');
    const out = await runToyStudy(store);
    store.studies.update(out.studyId, { status: 'running' });
    const api = createHandlers({ store, version: 'test' });
    expect(api.listStudies()[0]!.status).toBe('running'); // this process is alive
    const db = (store as unknown as { db: { prepare(sql: string): { run(...a: unknown[]): void } } }).db;
    db.prepare('UPDATE studies SET pid = ? WHERE id = ?').run(2 ** 22 + 12345, out.studyId);
    expect(api.listStudies()[0]!.status).toBe('interrupted');
    store.close();
  });
});
