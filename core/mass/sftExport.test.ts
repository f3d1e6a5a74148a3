import { describe, expect, it } from 'vitest';
import { asRoleName } from '../ids.ts';
import { openStore } from '../store/index.ts';
import { agentEvent, modelCall, newExperiment, runRecord } from '../../test/fixtures.ts';
import { exportCallsOf } from './rsi.ts';
import { exportRows, manifestOf, sftSequencesOf, splitByRank, toJsonl, type ExportTrajectory } from './sftExport.ts';

const workflow = '\n\nWorkflow:\n- planner: plan the answer\n- solver: give the number';
const traj = (runId: string, rank: number, quarantined = false): ExportTrajectory => ({
  runId,
  taskId: 'toy/train/0',
  rank,
  bareTask: 'Say the number 7.',
  workflowText: workflow,
  orchestratorRole: 'orchestrator',
  quarantined,
  calls: [
    { role: 'orchestrator', system: 'You lead a team.', prompt: `Say the number 7.\n${workflow}\n\nPlan:`, completion: 'planner: think', promptTokenIds: [1, 50, 51, 52, 99], completionTokenIds: [60, 61, 2] },
    { role: 'planner', prompt: 'Plan: say 7', completion: 'the answer is 7', promptTokenIds: [1, 70], completionTokenIds: [71, 72, 2] },
    { role: 'solver', prompt: 'Solve', completion: '', error: 'TIMEOUT' },
    { role: 'orchestrator', prompt: `Team replied.${workflow}\nFinal?`, completion: '7', promptTokenIds: [1, 80], completionTokenIds: [81, 2] },
  ],
});

describe('SFT export', () => {
  it('ranks 1-15 train, 16 validation, the rest unused', () => {
    const ranked = Array.from({ length: 18 }, (_, i) => ({ rank: 18 - i }));
    const s = splitByRank(ranked);
    expect(s.train.map((r) => r.rank)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    expect(s.validation.map((r) => r.rank)).toEqual([16]);
    expect(s.unused.map((r) => r.rank)).toEqual([17, 18]);
    expect(() => splitByRank(ranked, { train: 0 })).toThrow(/train must be an integer >= 1/);
  });

  it("strips the workflow: the orchestrator's first prompt becomes the bare task, later prompts lose the workflow text", () => {
    const rows = exportRows([traj('r1', 1)], 'train');
    expect(rows.map((r) => r.agent)).toEqual(['orchestrator', 'planner', 'orchestrator']);
    expect(rows[0]!.messages).toEqual([
      { role: 'system', content: 'You lead a team.' },
      { role: 'user', content: 'Say the number 7.\n\nPlan:' },
      { role: 'assistant', content: 'planner: think' },
    ]);
    expect(rows[0]!.stripped).toBe(true);
    expect(rows[0]!.promptTokenIds).toBeUndefined();
    expect(rows[1]!.stripped).toBe(false);
    expect(rows[1]!.promptTokenIds).toEqual([1, 70]);
    expect(rows[2]!.messages[0]).toEqual({ role: 'user', content: 'Team replied.\nFinal?' });
    expect(rows[2]!.callIndex).toBe(3);
    for (const r of rows) expect(JSON.stringify(r.messages)).not.toContain('Workflow:');
  });

  it('writes TRL conversational JSON lines with provenance alongside', () => {
    const rows = exportRows([traj('r1', 1), traj('r2', 2)], 'train');
    const lines = toJsonl(rows).trim().split('\n').map((l) => JSON.parse(l) as { messages: unknown[] });
    expect(lines).toHaveLength(6);
    expect(Object.keys(lines[0]!)).toEqual(['messages']);
    expect(manifestOf(rows)[3]).toEqual({ runId: 'r2', taskId: 'toy/train/0', rank: 2, split: 'train', agent: 'orchestrator', callIndex: 0, stripped: true });
    expect(toJsonl([])).toBe('');
  });

  it('never exports a quarantined trajectory', () => {
    expect(() => exportRows([traj('r1', 1), traj('bad', 2, true)], 'train')).toThrow(/run bad \(task toy\/train\/0\) is quarantined and is never exported/);
    expect(() => exportRows([{ ...traj('r1', 1), orchestratorRole: 'boss' }], 'train')).toThrow(/no call of the orchestrator role "boss"/);
    expect(() => exportRows([{ ...traj('r1', 1), bareTask: 'Say 8.' }], 'train')).toThrow(/does not hold the bare task/);
    // A bare-task run (no workflow) keeps its recorded prompts and ids.
    const bare = exportRows([{ ...traj('r1', 1), workflowText: undefined, calls: [{ role: 'orchestrator', prompt: 'Say the number 7.\nDelegate?', completion: 'no', promptTokenIds: [1, 5], completionTokenIds: [6, 2] }] }], 'train');
    expect(bare[0]).toMatchObject({ stripped: false, promptTokenIds: [1, 5], prompt: 'Say the number 7.\nDelegate?' });
  });

  it('loss mask on assistant tokens only; a rewritten prompt is re-tokenized', async () => {
    const rows = exportRows([traj('r1', 1)], 'train');
    const asked: Array<{ system?: string; prompt: string }> = [];
    const { sequences, skipped } = await sftSequencesOf(rows, async (input) => {
      asked.push(input);
      return [1, 50, 51];
    });
    expect(skipped).toBe(0);
    expect(asked).toEqual([{ system: 'You lead a team.', prompt: 'Say the number 7.\n\nPlan:' }, { prompt: 'Team replied.\nFinal?' }]);
    expect(sequences[0]).toEqual({ tokens: [1, 50, 51, 60, 61, 2], lossMask: [0, 0, 0, 1, 1, 1] });
    expect(sequences[1]).toEqual({ tokens: [1, 70, 71, 72, 2], lossMask: [0, 0, 1, 1, 1] });
    const noIds = exportRows([{ ...traj('r1', 1), calls: [{ role: 'orchestrator', prompt: 'Say the number 7. x', completion: 'y' }] }], 'train');
    expect(await sftSequencesOf(noIds, async () => [1])).toEqual({ sequences: [], skipped: 1 });
  });
});

describe('exportCallsOf: a run\'s calls for the export (core/mass/rsi.ts)', () => {
  it('a call of a node that failed carries the failure, so the export leaves it out (a cut-off, unparsable reply is no lesson)', () => {
    const store = openStore(':memory:');
    try {
      store.createExperiment(newExperiment({ id: 'exp-r', limit: 1 }));
      const run = runRecord('exp-r', 0);
      const ok = agentEvent(run.runId, 'orchestrator', 'orchestrator', [modelCall({ role: asRoleName('orchestrator'), prompt: 'Say the number 7.\nPlan:', completion: '{"delegate": "no"}' })]);
      const cut = agentEvent(run.runId, 'answer', 'orchestrator', [modelCall({ role: asRoleName('orchestrator'), prompt: 'Answer:', completion: '{ "delegate": "no", "ask": "', stopReason: 'length' })], {
        seq: 1, status: 'failed', failureClass: 'execution', errorCode: 'UNPARSABLE_OUTPUT', message: 'cut off at max_tokens', output: undefined,
      });
      store.saveRun(run, [ok, cut]);
      const calls = exportCallsOf(store, run.runId);
      expect(calls.map((c) => [c.nodeId, c.error])).toEqual([['orchestrator', undefined], ['answer', 'node answer failed: UNPARSABLE_OUTPUT']]);
      const rows = exportRows([{ runId: run.runId, taskId: 't', rank: 1, bareTask: 'Say the number 7.', orchestratorRole: 'orchestrator', quarantined: false, calls }], 'train');
      expect(rows.map((r) => r.messages.at(-1)!.content)).toEqual(['{"delegate": "no"}']);
    } finally {
      store.close();
    }
  });
});
