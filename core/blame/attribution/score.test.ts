import { describe, expect, it } from 'vitest';
import { scoreAttribution } from './score.ts';
import type { AttributionRecord } from './types.ts';

describe('scoreAttribution', () => {
  it('three crafted logs, computed by hand', () => {
    const records: AttributionRecord[] = [
      // right agent (after normalisation), wrong step
      { logId: 'a', label: { agent: 'WebSurfer', step: 4 }, prediction: { agent: 'websurfer', step: 7 } },
      // right agent and right step; the label spelled with a qualifier
      { logId: 'b', label: { agent: 'Orchestrator (thought)', step: 2 }, prediction: { agent: 'Orchestrator', step: 2 } },
      // no prediction: not covered, wrong over all
      { logId: 'c', label: { agent: 'WebSurfer', step: 1 }, prediction: null },
    ];
    const s = scoreAttribution(records);
    expect(s.logs).toBe(3);
    expect(s.covered).toBe(2);
    // agents: a, b right -> 2/3 over all, 2/2 over covered
    expect(s.agentAccuracy).toEqual({ overAll: 2 / 3, overCovered: 1 });
    // steps: only b -> 1/3 over all, 1/2 over covered
    expect(s.stepAccuracy).toEqual({ overAll: 1 / 3, overCovered: 1 / 2 });
    expect(s.perAgent).toEqual([
      { agent: 'WebSurfer', labelled: 2, covered: 1, agentCorrect: 1, stepCorrect: 0, predictedAs: { websurfer: 1, '(none)': 1 } },
      { agent: 'Orchestrator (thought)', labelled: 1, covered: 1, agentCorrect: 1, stepCorrect: 1, predictedAs: { Orchestrator: 1 } },
    ]);
  });

  it('a step can be right with the wrong agent (the paper scores them independently)', () => {
    const s = scoreAttribution([{ logId: 'x', label: { agent: 'A', step: 3 }, prediction: { agent: 'B', step: 3 } }]);
    expect(s.agentAccuracy.overAll).toBe(0);
    expect(s.stepAccuracy.overAll).toBe(1);
  });

  it('nothing covered: overCovered is null; no logs: overAll is 0', () => {
    const s = scoreAttribution([{ logId: 'x', label: { agent: 'A', step: 0 }, prediction: null }]);
    expect(s.covered).toBe(0);
    expect(s.agentAccuracy).toEqual({ overAll: 0, overCovered: null });
    expect(s.stepAccuracy).toEqual({ overAll: 0, overCovered: null });
    expect(scoreAttribution([])).toEqual({ logs: 0, covered: 0, agentAccuracy: { overAll: 0, overCovered: null }, stepAccuracy: { overAll: 0, overCovered: null }, perAgent: [] });
  });
});
