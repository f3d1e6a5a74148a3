import { describe, expect, it } from 'vitest';
import { openStore } from '../store/index.ts';
import { createLearnDataset } from '../tasks/learn.ts';
import { championOf } from './champions.ts';
import { DESIGN_LIMITS } from './design.ts';

describe('champions from a stored inner loop', () => {
  it('the winning design of each task, the bare task when none won, refusing another task', () => {
    const store = openStore(':memory:');
    const [t0, t1] = createLearnDataset('learn-word', ['word']).load({ split: 'train', limit: 2 });
    const design = [{ agent_id: 'helper_a', role: 'Helper', instruction: 'Say how they felt.' }];
    store.mass.put({ evolutionId: 'evo', kind: 'evolution', key: 'settings', value: { catalogue: { checks: [] }, limits: DESIGN_LIMITS } });
    store.mass.put({ evolutionId: 'evo', kind: 'design', key: 't0/v2', taskIndex: 0, value: { design } });
    store.mass.put({ evolutionId: 'evo', kind: 'result', key: 't0', taskIndex: 0, value: { taskIndex: 0, taskId: t0!.id, champion: 2 } });
    store.mass.put({ evolutionId: 'evo', kind: 'result', key: 't1', taskIndex: 1, value: { taskIndex: 1, taskId: t1!.id, champion: null } });
    const c0 = championOf(store, 'evo', 0, t0!);
    expect(c0.version).toBe(2);
    expect(c0.design!.agents.map((a) => a.agent_id)).toEqual(['helper_a']);
    expect(championOf(store, 'evo', 1, t1!)).toEqual({ design: null, version: null });
    expect(() => championOf(store, 'evo', 0, t1!)).toThrow(/ran learn-word\/train\/0 as task 0, not learn-word\/train\/1/);
    expect(() => championOf(store, 'evo', 5, t1!)).toThrow(/has no result for task 5/);
    store.close();
  });
});
