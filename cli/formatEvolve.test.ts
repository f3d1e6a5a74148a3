import { describe, expect, it } from 'vitest';
import type { MassRecord } from '../core/store/index.ts';
import { proposalStats } from './formatEvolve.ts';

const rec = (i: number, value: Record<string, unknown>): MassRecord => ({ evolutionId: 'e', kind: 'proposal', key: `t0/i${i}`, value });
const edit = (op: string, hop: number) => ({ accepted: true, issues: [], proposal: { edit: { op, hop, max: 1 } } });

describe('proposalStats (what evolve prints about the optimizer)', () => {
  it('counts valid (accepted or a valid repeat), accepted and cut-off proposals, and edits by op', () => {
    const s = proposalStats([
      rec(1, edit('retry', 1)),
      rec(2, edit('retry', 2)),
      rec(3, { accepted: false, issues: [{ code: 'UNCHANGED' }], proposal: { edit: { op: 'retry', hop: 1, max: 1 } } }),
      rec(4, { accepted: false, issues: [{ code: 'UNPARSABLE' }], proposal: null }),
      rec(5, { accepted: false, issues: [{ code: 'UNKNOWN_AGENT' }], proposal: { improved_multi_agent_design: {} } }),
      { evolutionId: 'e', kind: 'champion', key: 't0/0', value: { iteration: 0, version: 0, reason: 'the first design (direct rule)' } },
      { evolutionId: 'e', kind: 'champion', key: 't0/2', value: { iteration: 2, version: 2, reason: 'beat champion v0 directly' } },
      { evolutionId: 'e', kind: 'champion', key: 't1/0', value: { iteration: 0, version: 0, reason: 'first version to beat the baseline' } },
    ], 'the model, m.gguf');
    // Task 1's version 0 beat the baseline: a verdict chose it (judged), but no proposal became champion there.
    expect([s.proposals, s.valid, s.accepted, s.won, s.judged, s.cutOff, s.distinctEdits, s.constant]).toEqual([5, 3, 2, 1, 2, 1, 2, false]);
    expect(s.ops).toEqual({ retry: 3 });
    expect(s.text).toBe('Proposals (proposer: the model, m.gguf): 5; valid 3 (60%); new versions 2, of which 1 became champion; cut off or outside the grammar 1; 2 distinct edit(s), by op: retry 3\n');
  });

  it('labels a proposer that always names the same edit CONSTANT, and a random one RANDOM', () => {
    const same = [rec(1, edit('retry', 1)), rec(2, edit('retry', 1))];
    expect(proposalStats(same, 'the model, m.gguf').text).toContain('CONSTANT PROPOSER: every proposal was the same edit');
    const won = { evolutionId: 'e', kind: 'champion', key: 't0/1', value: { iteration: 1, version: 1 } };
    expect(proposalStats([rec(1, edit('retry', 1)), rec(2, edit('retry', 2)), won], 'RANDOM (SIMULATED)').text).toContain('RANDOM PROPOSER (SIMULATED): the champions were found by random edits, not by the model.');
    expect(proposalStats([rec(1, edit('retry', 1)), rec(2, edit('retry', 2))], 'RANDOM (SIMULATED)').text).toContain("RANDOM PROPOSER (SIMULATED): the edits were random, not the model's; none became champion.");
    expect(proposalStats([], 'x').text).toBe('Proposals: none (one iteration runs version 0 only)\n');
  });
});
