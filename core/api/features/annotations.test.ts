import { afterEach, describe, expect, it } from 'vitest';
import { expectBadRequest, newExperiment, nodeEvents, runRecord, storeTracker, thrownBy } from '../../../test/fixtures.ts';
import { ApiError } from '../errors.ts';
import { createHandlers } from '../handlers.ts';
import { isApiMethod } from '../channels.ts';

const stores = storeTracker();
afterEach(() => stores.closeAll());

function api() {
  const store = stores.open();
  store.createExperiment(newExperiment({ id: 'e1', limit: 2 }));
  for (const i of [0, 1]) {
    const r = runRecord('e1', i, { correct: i === 0 });
    store.saveRun(r, nodeEvents(r));
  }
  return { store, api: createHandlers({ store, version: 't' }) };
}

describe('the annotation methods', () => {
  it('are API methods both hosts allow', () => {
    for (const m of ['addAnnotation', 'listAnnotations', 'removeAnnotation', 'listAnnotationTags']) expect(isApiMethod(m)).toBe(true);
  });

  it('add, list (by run, node, experiment, tag), remove, and the Runs table finds the tag', () => {
    const { api: lab } = api();
    const run = lab.addAnnotation({ runId: 'e1-r1', score: 2, tags: ['silent', 'arith'], note: 'right plan, wrong sum', author: 'ada' });
    expect(run).toMatchObject({ runId: 'e1-r1', experimentId: 'e1', score: 2, tags: ['arith', 'silent'], note: 'right plan, wrong sum', author: 'ada' });
    const node = lab.addAnnotation({ runId: 'e1-r1', nodeId: 'calc', score: -1, author: 'bob' });
    expect(node).toMatchObject({ nodeId: 'calc', score: -1, tags: [] });
    expect(lab.listAnnotations({ runId: 'e1-r1' }).map((a) => a.id)).toEqual([run.id, node.id]);
    expect(lab.listAnnotations({ runId: 'e1-r1', nodeId: 'calc' }).map((a) => a.id)).toEqual([node.id]);
    expect(lab.listAnnotations({ runId: 'e1-r1', nodeId: null }).map((a) => a.id)).toEqual([run.id]);
    expect(lab.listAnnotations({ experimentId: 'e1' })).toHaveLength(2);
    expect(lab.listAnnotations({ tag: 'silent' }).map((a) => a.id)).toEqual([run.id]);
    expect(lab.listAnnotationTags()).toEqual([{ tag: 'arith', runs: 1 }, { tag: 'silent', runs: 1 }]);
    const found = lab.searchRuns({ tag: 'silent' });
    expect(found.total).toBe(1);
    expect(found.rows[0]).toMatchObject({ runId: 'e1-r1', tags: ['arith', 'silent'] });
    expect(lab.removeAnnotation({ id: run.id })).toEqual({ removed: run.id });
    expect(lab.searchRuns({ tag: 'silent' }).total).toBe(0);
    expect(thrownBy(ApiError, () => lab.removeAnnotation({ id: run.id })).code).toBe('NOT_FOUND');
  });

  it('refuses a bad payload naming the field, and an unknown run or node as NOT_FOUND', () => {
    const { api: lab, store } = api();
    expectBadRequest(() => lab.addAnnotation({ runId: 'e1-r0', author: 'ada' }), 'addAnnotation', 'score', /give a score, a tag or a note/);
    expectBadRequest(() => lab.addAnnotation({ runId: 'e1-r0', score: Number.POSITIVE_INFINITY, author: 'ada' }), 'addAnnotation', 'score', /finite number/);
    expectBadRequest(() => lab.addAnnotation({ runId: 'e1-r0', score: '3' as never, author: 'ada' }), 'addAnnotation', 'score', /expected number, received string/);
    expectBadRequest(() => lab.addAnnotation({ runId: 'e1-r0', tags: ['fine', 'not fine'], author: 'ada' }), 'addAnnotation', 'tags.1', /no spaces/);
    expectBadRequest(() => lab.addAnnotation({ runId: 'e1-r0', note: 'x', author: 'ada', colour: 'red' } as never), 'addAnnotation', 'colour', /unknown field\(s\) "colour"/);
    expectBadRequest(() => lab.addAnnotation({ runId: 'e1-r0', note: 'x' } as never), 'addAnnotation', 'author', /./);
    expectBadRequest(() => lab.listAnnotations({}), 'listAnnotations', 'runId', /give runId, experimentId or tag/);
    expectBadRequest(() => lab.listAnnotations({ experimentId: 'e1', nodeId: 'calc' }), 'listAnnotations', 'nodeId', /nodeId needs runId/);
    expectBadRequest(() => lab.searchRuns({ tag: '' }), 'searchRuns', 'tag', /must not be empty/);
    const missingRun = thrownBy(ApiError, () => lab.addAnnotation({ runId: 'e9-r0', note: 'x', author: 'ada' }));
    expect([missingRun.code, missingRun.message]).toEqual(['NOT_FOUND', 'addAnnotation: :memory:: no run e9-r0 to annotate']);
    const missingNode = thrownBy(ApiError, () => lab.addAnnotation({ runId: 'e1-r0', nodeId: 'solve', note: 'x', author: 'ada' }));
    expect([missingNode.code, missingNode.message]).toEqual(['NOT_FOUND', 'addAnnotation: :memory:: run e1-r0 has no node "solve" to annotate']);
    expect(store.annotations.list()).toEqual([]);
  });
});
