import { describe, expect, it } from 'vitest';
import { asExperimentId, asNodeId, asRoleName, asRunId, HUMAN } from '../ids.ts';
import { defaultTools } from '../tools/index.ts';
import type { NodeEvent } from '../trace/events.ts';
import type { RunRecord } from '../results/index.ts';
import { parseWorkflow } from '../workflow/load.ts';
import { ADVANTAGE_EPS, type Rollout, broadcastToTurns, flowGrpoAdvantages, groupAdvantages, ladderAdvantages } from './advantages.ts';
import { learningRoles, parseMode } from './modes.ts';
import { exportForTrl } from './trlExport.ts';

describe('group-relative advantages', () => {
  it('a worked group: rewards [1, 0, 0, 1] -> mean 0.5, std 0.5, A = ±0.5 / (0.5 + 1e-6)', () => {
    const g = groupAdvantages([1, 0, 0, 1]);
    expect(g.mean).toBe(0.5);
    expect(g.std).toBe(0.5);
    const a = 0.5 / (0.5 + ADVANTAGE_EPS);
    expect(g.advantages).toEqual([a, -a, -a, a]);
    expect(g.zeroSpread).toBe(false);
  });

  it('a worked group with uneven rewards [0.2, 0.4, 0.9]', () => {
    // mean 0.5; deviations -0.3, -0.1, 0.4; population variance (0.09 + 0.01 + 0.16) / 3 = 0.26/3.
    const g = groupAdvantages([0.2, 0.4, 0.9]);
    const std = Math.sqrt(0.26 / 3);
    expect(g.mean).toBeCloseTo(0.5, 15);
    expect(g.std).toBeCloseTo(std, 15);
    expect(g.advantages[0]).toBeCloseTo(-0.3 / (std + 1e-6), 12);
    expect(g.advantages[1]).toBeCloseTo(-0.1 / (std + 1e-6), 12);
    expect(g.advantages[2]).toBeCloseTo(0.4 / (std + 1e-6), 12);
    expect(g.advantages.reduce((s, x) => s + x, 0)).toBeCloseTo(0, 12);
  });

  it('zero spread and a single rollout give exactly zero advantage and are reported', () => {
    expect(groupAdvantages([0.3, 0.3, 0.3])).toEqual({ mean: 0.3, std: 0, advantages: [0, 0, 0], zeroSpread: true });
    expect(groupAdvantages([0.7])).toEqual({ mean: 0.7, std: 0, advantages: [0], zeroSpread: true });
    expect(() => groupAdvantages([])).toThrow(RangeError);
    expect(() => groupAdvantages([NaN])).toThrow(/not finite/);
  });

  it('per-role ladder advantages use each role\'s own h over the rollouts it took part in', () => {
    const group: Rollout[] = [
      { runId: 'r0', rewards: { planner: 0.2, solver: -0.15 }, outcome: 0 },
      { runId: 'r1', rewards: { planner: 0.2, solver: 1.0 }, outcome: 1 },
      { runId: 'r2', rewards: { planner: 0.2 }, outcome: 0 },
    ];
    const rows = ladderAdvantages(group, ['planner', 'solver']);
    // planner: all 0.2 -> zero spread.
    expect(rows.filter((r) => r.role === 'planner').map((r) => [r.runId, r.advantage, r.zeroSpread])).toEqual([['r0', 0, true], ['r1', 0, true], ['r2', 0, true]]);
    // solver: [-0.15, 1.0] mean 0.425 std 0.575 -> A = ∓0.575 / (0.575 + 1e-6).
    const a = 0.575 / (0.575 + 1e-6);
    const solver = rows.filter((r) => r.role === 'solver');
    expect(solver.map((r) => r.runId)).toEqual(['r0', 'r1']);
    expect(solver[0]!.advantage).toBeCloseTo(-a, 12);
    expect(solver[1]!.advantage).toBeCloseTo(a, 12);
    expect(solver[0]).toMatchObject({ mode: 'ladder', groupSize: 2, groupMean: 0.425 });
  });

  it('Flow-GRPO: one outcome per trajectory, normalised per trajectory, broadcast to every role and every turn', () => {
    const group = [
      { runId: 'a', rewards: { planner: 0.1, solver: 0.2 }, outcome: 1 },
      { runId: 'b', rewards: { planner: 0.3, solver: 0.4 }, outcome: 0 },
    ];
    const rows = flowGrpoAdvantages(group, ['planner', 'solver']);
    const a = 0.5 / (0.5 + 1e-6);
    expect(rows.map((r) => [r.runId, r.role, r.reward, r.advantage])).toEqual([['a', 'planner', 1, a], ['a', 'solver', 1, a], ['b', 'planner', 0, -a], ['b', 'solver', 0, -a]]);
    // A trajectory with 3 planner turns and 1 solver turn: every planner turn gets the same value.
    const turns = [
      { nodeId: 'plan', attempt: 1, callIndex: 0, role: 'planner' },
      { nodeId: 'solve', attempt: 1, callIndex: 0, role: 'solver' },
      { nodeId: 'plan', attempt: 2, callIndex: 0, role: 'planner' },
      { nodeId: 'plan', attempt: 3, callIndex: 0, role: 'planner' },
    ];
    const b = broadcastToTurns(turns, 'planner', a);
    expect(b).toHaveLength(3);
    expect(new Set(b.map((t) => t.advantage))).toEqual(new Set([a]));
  });
});

describe('co-evolution modes', () => {
  const yaml = `
name: m
roles: { gen: { kind: generator }, planner: { kind: planner }, solver: { kind: executor }, checker: { kind: verifier } }
skills: { recheck: { prompt: "check {{x}}" } }
nodes:
  - { id: plan, role: planner, prompt: p }
  - { id: solve, role: solver, prompt: "{{plan}}", inputs: { plan: plan } }
  - { id: rc, kind: skill, skill: recheck, role: checker, inputs: { x: solve } }
`;
  const { graph } = parseWorkflow(yaml, { tools: defaultTools() });
  it('resolves which roles learn, and rejects modes that do not fit', () => {
    expect(learningRoles(graph, parseMode('single:solver'))).toEqual(['solver']);
    expect(learningRoles(graph, parseMode('upstream-downstream'))).toEqual(['gen', 'planner', 'solver']);
    expect(learningRoles(graph, parseMode('agent-skill'))).toEqual(['solver', 'checker']);
    expect(learningRoles(graph, parseMode('multi-agent'))).toEqual(['planner', 'solver', 'checker']);
    expect(() => learningRoles(graph, parseMode('single:ghost'))).toThrow(/no role "ghost"/);
    expect(() => parseMode('everyone')).toThrow(/unknown co-evolution mode/);
  });
});

describe('TRL export', () => {
  const call = (role: string, prompt: string, completion: string) => ({
    callIndex: 0, role: asRoleName(role), modelRef: 'default', model: 'stories260K.gguf', system: `You are the ${role}.`, prompt,
    params: { temperature: 0.8, maxTokens: 16 }, seed: 42, completion, promptTokens: 3, completionTokens: 2, ms: 1, startedAt: 0,
  });
  const event = (runId: string, nodeId: string, role: string, c: ReturnType<typeof call>): NodeEvent => ({
    runId: asRunId(runId), nodeId: asNodeId(nodeId), attempt: 1, seq: 0, kind: 'agent', role: asRoleName(role), wiredBy: HUMAN, runBy: asRoleName(role),
    inputs: {}, output: c.completion, status: 'ok', calls: [c], startedAt: 0, endedAt: 1,
  });
  const run = (runId: string, correct: boolean): RunRecord => ({
    runId: asRunId(runId), experimentId: asExperimentId('e'), taskIndex: 0, taskId: 't#r', status: 'completed', score: correct ? 1 : 0, correct,
    seed: 1, promptTokens: 3, completionTokens: 2, startedAt: 0, endedAt: 1, failures: {},
  });
  const input = {
    experiment: { id: 'e', workflowName: 'w', workflowHash: 'abc', seed: 0, dataset: 'gsm8k', split: 'test' },
    models: { default: '/m/stories260K.gguf' }, mode: 'single:solver', roles: ['solver'],
    runs: [
      { run: run('r0', true), events: [event('r0', 'solve', 'solver', call('solver', 'Q: 2+2?', '{"expression":"2+2"}')), event('r0', 'plan', 'planner', call('planner', 'Q', 'plan'))] },
      { run: run('r1', false), events: [event('r1', 'solve', 'solver', call('solver', 'Q: 2+2?', '{"expression":"x"}'))] },
    ],
    advantages: [
      { runId: 'r0', role: 'solver', mode: 'ladder' as const, groupKey: 'gsm8k/test/0', reward: 1, advantage: 0.99, groupMean: 0.5, groupStd: 0.5, groupSize: 2 },
      { runId: 'r1', role: 'solver', mode: 'ladder' as const, groupKey: 'gsm8k/test/0', reward: 0, advantage: -0.99, groupMean: 0.5, groupStd: 0.5, groupSize: 2 },
    ],
    advantageMode: 'ladder' as const, format: 'conversational' as const, sftFilter: 'beat-group' as const,
  };

  it('writes records with the field names TRL documents (conversational prompt-completion, messages)', () => {
    const out = exportForTrl(input);
    expect(Object.keys(out.files).sort()).toEqual(['manifest.json', 'solver.grpo.jsonl', 'solver.sft.jsonl']);
    const grpo = out.files['solver.grpo.jsonl']!.trim().split('\n').map((l) => JSON.parse(l));
    // Fixture: TRL's conversational prompt-completion type plus our reward/advantage/group_id columns.
    expect(grpo[0]).toEqual({
      prompt: [{ role: 'system', content: 'You are the solver.' }, { role: 'user', content: 'Q: 2+2?' }],
      completion: [{ role: 'assistant', content: '{"expression":"2+2"}' }],
      reward: 1, advantage: 0.99, group_id: 'gsm8k/test/0', label: true,
      run_id: 'r0', node_id: 'solve', attempt: 1, call_index: 0, seed: 42, temperature: 0.8, model: 'stories260K.gguf',
    });
    expect(grpo).toHaveLength(2); // the planner's turn is not the solver's
    for (const r of grpo) {
      for (const m of [...r.prompt, ...r.completion]) expect(Object.keys(m).sort()).toEqual(['content', 'role']);
      expect(['system', 'user']).toEqual(expect.arrayContaining(r.prompt.map((m: { role: string }) => m.role)));
      expect(r.completion.map((m: { role: string }) => m.role)).toEqual(['assistant']);
    }
    // SFT: only the rollout that beat its group, as TRL conversational language modeling.
    const sft = out.files['solver.sft.jsonl']!.trim().split('\n').map((l) => JSON.parse(l));
    expect(sft).toEqual([{ messages: [{ role: 'system', content: 'You are the solver.' }, { role: 'user', content: 'Q: 2+2?' }, { role: 'assistant', content: '{"expression":"2+2"}' }], run_id: 'r0', node_id: 'solve' }]);
    expect(out.manifest).toMatchObject({ workflow: { name: 'w', hash: 'abc' }, coevolutionMode: 'single:solver', learningRoles: ['solver'], counts: { solver: { grpo: 2, sft: 1, zeroAdvantage: 0, groups: 1 } } });
  });

  it('standard format: plain prompt and completion strings (base models without a chat template)', () => {
    const out = exportForTrl({ ...input, format: 'standard' });
    const first = JSON.parse(out.files['solver.grpo.jsonl']!.split('\n')[0]!);
    expect(first.prompt).toBe('You are the solver.\n\nQ: 2+2?');
    expect(first.completion).toBe('{"expression":"2+2"}');
    const sft = JSON.parse(out.files['solver.sft.jsonl']!.trim());
    expect(Object.keys(sft).sort()).toEqual(['completion', 'node_id', 'prompt', 'run_id']);
  });
});
