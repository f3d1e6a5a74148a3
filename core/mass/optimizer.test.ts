import { describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../model/scripted.ts';
import { openStore } from '../store/index.ts';
import { defaultTools } from '../tools/index.ts';
import { designJson } from './design.ts';
import { catalogue, designWith, family, tasks } from './loop.fixture.ts';
import { optimize, optimizerPrompt, optimizerSchema, takeaways, vocabularyOf, type OptimizerInput } from './optimizer.ts';

const input = (over: Partial<OptimizerInput> = {}): OptimizerInput => ({
  task: tasks[0]!,
  taskPrompt: String(tasks[0]!.input.prompt),
  current: { version: 2, design: designWith(5) },
  best: { version: 1, design: designWith(1) },
  first: designWith(2),
  evidence: 'answer: search; picker: {"tool":"search"}; tokens: 90',
  history: [],
  ...over,
});

describe('the optimizer', () => {
  it('reads task, current, best and first designs, evidence and history, within its character budget, most recent history first to go in', () => {
    const history = Array.from({ length: 30 }, (_, i) => ({ key: `v${i}_vs_baseline`, outcome: i % 2 ? 'candidate' : 'baseline', rationale: `Round ${i}: the pick is not checked. It looks fine.`, diff: `-old ${i}\n+new ${i}` }));
    const p = optimizerPrompt(input({ history }));
    expect(p.length).toBeLessThanOrEqual(1450);
    expect(p.startsWith('Improve the team design v2 -> v3. Strengthen contracts and hops first')).toBe(true);
    for (const part of [`Task: ${tasks[0]!.input.prompt}`, `Current v2: ${designJson(designWith(5)).slice(0, 40)}`, 'Best v1: ', 'First v0: ', 'Evidence v2: answer: search']) expect(p).toContain(part);
    const entry = (i: number) => `- v${i}_vs_baseline: ${i % 2 ? 'candidate' : 'baseline'}. "Round ${i}: the pick is not checked. It looks fine." Fix: Round ${i}: the pick is not checked. Diff: -old ${i} | +new ${i}`;
    expect(p.endsWith(`History (oldest first):\n${entry(27)}\n${entry(28)}\n${entry(29)}\nJSON:`)).toBe(true);
    expect(p).not.toContain('v26_vs_baseline');
    // With a long design, the newest entry still goes in.
    const long = optimizerPrompt(input({ history: [{ key: 'v1_vs_baseline', outcome: 'tie', rationale: 'x'.repeat(500), diff: 'y'.repeat(500) }] }), 10);
    expect(long).toContain('- v1_vs_baseline: tie.');
  });

  it('takes the rationale sentences that name a defect as takeaways', () => {
    expect(takeaways('A is tidy. B failed to name a tool! Both are short. The check is missing.')).toEqual(['B failed to name a tool!', 'The check is missing.']);
    expect(takeaways('Both are fine.')).toEqual([]);
  });

  it('decodes under a grammar of the six fields with closed vocabularies for ids, contract names and checks', () => {
    const vocab = vocabularyOf(input());
    expect(vocab).toEqual({ agents: ['picker', 'planner', 'solver', 'reviewer'], fields: ['tool', 'reply', 'reason', 'plan', 'check', 'note'] });
    const s = optimizerSchema(catalogue, undefined, vocab) as { properties: Record<string, any>; required: string[] };
    expect(s.required).toEqual(['improved_multi_agent_design', 'changes_from_previous', 'why_it_should_improve', 'evidence_used', 'expected_impact', 'verification_checks']);
    const agent = s.properties.improved_multi_agent_design.properties.agents;
    expect(agent.maxItems).toBe(2);
    expect(agent.items.properties.agent_id).toEqual({ enum: vocab.agents });
    expect(agent.items.properties.contract.properties.checks.items).toEqual({ enum: catalogue.checks });
    expect(s.properties.improved_multi_agent_design.properties.hops.items.properties.reads.items).toEqual({ enum: vocab.agents });
  });

  it('returns a design the validator passed, or the rejection with located issues; a reply outside the grammar is the engine’s contract violation', async () => {
    const store = openStore(':memory:');
    const deps = { store, tools: defaultTools() };
    const reply = (design: unknown) => new ScriptedProvider(() => JSON.stringify({ improved_multi_agent_design: design, changes_from_previous: 'a', why_it_should_improve: 'b', evidence_used: 'c', expected_impact: 'd', verification_checks: 'e' }));
    const agent = { agent_id: 'solver', role: 'Solver', instruction: 'Solve it.', contract: { fields: ['tool'], artefacts: [], checks: ['names_a_tool'] } };
    const ok = await optimize(input(), family, { ...deps, provider: reply({ agents: [agent], hops: [{ agent_id: 'solver', reads: [] }] }) }, { experimentId: 'o1', seed: 1, catalogue });
    expect(ok.issues).toEqual([]);
    expect(ok.design?.agents.map((a) => a.agent_id)).toEqual(['solver']);
    expect(store.getRun('o1/0')).toMatchObject({ score: 1, correct: true });
    const bad = await optimize(input(), family, { ...deps, provider: reply({ agents: [agent], hops: [{ agent_id: 'solver', reads: ['solver'] }] }) }, { experimentId: 'o2', seed: 1, catalogue });
    expect(bad.design).toBeUndefined();
    expect(bad.issues.map((i) => `${i.code} ${i.path}`)).toEqual(['READS_LATER hops[0].reads[0]']);
    expect(store.getRun('o2/0')).toMatchObject({ score: 0, correct: false });
    const outside = await optimize(input(), family, { ...deps, provider: reply({ agents: [{ ...agent, agent_id: 'Tom said' }], hops: [{ agent_id: 'solver', reads: [] }] }) }, { experimentId: 'o3', seed: 1, catalogue });
    expect(outside.issues).toEqual([{ code: 'CONTRACT_VIOLATION', path: '', message: expect.stringContaining('agent_id must be equal to one of the allowed values') }]);
    store.close();
  });
});
