import { describe, expect, it } from 'vitest';
import { openStore, StoreError } from './index.ts';

describe('the studies repo', () => {
  it('creates, finds, lists and updates studies, merging state keys', () => {
    const store = openStore(':memory:');
    const a = store.studies.create({ id: 'st-a-1', name: 'a', plan: { name: 'a' }, planFile: '/p/a.yaml' });
    expect(a).toMatchObject({ id: 'st-a-1', name: 'a', plan: { name: 'a' }, planFile: '/p/a.yaml', status: 'planned', state: {}, pid: process.pid });
    expect(() => store.studies.create({ id: 'st-a-1', name: 'a', plan: {} })).toThrow(StoreError);
    store.studies.update('st-a-1', { state: { units: { u: 1 }, estimate: { seconds: 3 } } });
    const b = store.studies.update('st-a-1', { status: 'running', state: { units: { u: 2 } } });
    expect(b).toMatchObject({ status: 'running', state: { units: { u: 2 }, estimate: { seconds: 3 } } });
    expect(store.studies.find('nope')).toBeUndefined();
    expect(() => store.studies.get('nope')).toThrow(/no study nope/);
    expect(() => store.studies.update('st-a-1', { status: 'bogus' as never })).toThrow();
    expect(store.studies.list().map((s) => s.id)).toEqual(['st-a-1']);
    store.close();
  });
});
