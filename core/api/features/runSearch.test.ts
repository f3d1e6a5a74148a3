import { afterEach, describe, expect, it } from 'vitest';
import { agentEvent, expectBadRequest, modelCall, newExperiment, runRecord, storeTracker } from '../../../test/fixtures.ts';
import { createHandlers } from '../handlers.ts';

const stores = storeTracker();
afterEach(() => stores.closeAll());

describe('searchRuns (the Runs table)', () => {
  it('answers what flowlab ls answers, and refuses a bad field by name', () => {
    const store = stores.open();
    store.createExperiment(newExperiment({ id: 'e1' }));
    for (const i of [0, 1, 2]) {
      const r = runRecord('e1', i, { correct: i !== 1, startedAt: 1000 * i });
      store.saveRun(r, [agentEvent(r.runId, 'solve', 'solver', [modelCall({ completion: i === 1 ? 'a mango' : 'a pear' })])]);
    }
    const api = createHandlers({ store, version: 't' });
    const found = api.searchRuns({ text: 'mango', field: 'completion' });
    expect(found.total).toBe(1);
    expect(found.rows[0]).toMatchObject({ runId: 'e1-r1', correct: false, workflowName: 'demo', blamed: [] });
    expect(api.searchRuns({ experimentId: 'e1', sort: 'task', order: 'desc', limit: 2 }).rows.map((r) => r.taskIndex)).toEqual([2, 1]);
    expectBadRequest(() => api.searchRuns({ text: '?!' }), 'searchRuns', 'text', /no word to find/);
    expectBadRequest(() => api.searchRuns({ limit: 5000 }), 'searchRuns', 'limit', /at most 1000/);
    expectBadRequest(() => api.searchRuns({ sort: 'colour' } as never), 'searchRuns', 'sort', /./);
  });
});
