import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectBadRequest } from '../../../test/fixtures.ts';
import { evolve } from '../../mass/inner.ts';
import { scripted, spec } from '../../mass/loop.fixture.ts';
import { openStore, type Store } from '../../store/index.ts';
import { defaultTools } from '../../tools/index.ts';
import { ApiError, createHandlers, type FlowlabApi } from '../index.ts';

let store: Store;
let api: FlowlabApi;
beforeAll(async () => {
  store = openStore(':memory:');
  await evolve(spec('evo-a'), { store, provider: scripted(), tools: defaultTools() });
  api = createHandlers({ store, version: 'test' });
});
afterAll(() => store.close());

describe('MASS reads (scripted loop: SIMULATED team, judge and optimizer)', () => {
  it('lists evolutions with their settings and champions', () => {
    expect(api.listEvolutions()).toEqual([{ evolutionId: 'evo-a', dataset: 'learn-tool', rule: 'baseline', iterations: 6, tasks: 1, champions: [2], records: 30 }]);
  });

  it('gives the champion timeline: versions, rejected proposals, verdicts with orientation, champion changes', () => {
    const t = api.getEvolution({ evolutionId: 'evo-a' });
    const task = t.tasks[0]!;
    expect(task.champion).toBe(2);
    expect(task.iterations.map((i) => `${i.iteration}:${i.version}:${i.champion}${i.championChanged ? '*' : ''}`)).toEqual(['0:0:0*', '1:1:0', '2:2:2*', '3:3:2', '4:null:2', '5:null:2']);
    expect(task.iterations[1]!.verdicts.map((v) => `${v.kind} vs ${v.against} ${v.candidateWon}`)).toEqual(['baseline vs baseline true', 'arbitration vs v0 false']);
    expect(task.iterations[4]!.rejected).toEqual([expect.stringMatching(/^UNKNOWN_AGENT hops\[0\]\.agent_id: hop calls "reviewer"/)]);
    expect(task.designs.map((d) => `${d.version}<-${d.parent} ${d.source}`)).toEqual(['0<-null first', '1<-0 optimizer', '2<-1 optimizer', '3<-2 optimizer']);
  });

  it('diffs any two versions', () => {
    const d = api.getDesignDiff({ evolutionId: 'evo-a', taskIndex: 0, a: 0, b: 2 });
    expect(d.agents.changed).toEqual([{ agent_id: 'picker', field: 'role', from: 'Picker P2', to: 'Picker P5' }]);
    expect(d.lines.filter((l) => l.op !== ' ').map((l) => l.op + l.text)).toEqual(['-- picker: Picker P2. Name the tool. Returns: tool. Checks: names_a_tool.', '+- picker: Picker P5. Name the tool. Returns: tool. Checks: names_a_tool.']);
  });

  it('answers NOT_FOUND for an unknown evolution or version, BAD_REQUEST for a bad payload', () => {
    for (const call of [() => api.getEvolution({ evolutionId: 'nope' }), () => api.getDesignDiff({ evolutionId: 'evo-a', taskIndex: 0, a: 0, b: 9 })]) {
      expect(call).toThrow(ApiError);
      try {
        call();
      } catch (e) {
        expect((e as ApiError).code).toBe('NOT_FOUND');
      }
    }
    expectBadRequest(() => api.getDesignDiff({ evolutionId: 'evo-a', taskIndex: -1, a: 0, b: 1 } as never), 'getDesignDiff', 'taskIndex', /greater than or equal to 0|>=0/);
  });
});
