import { describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../model/scripted.ts';
import { openStore } from '../store/index.ts';
import { createLearnDataset } from '../tasks/learn.ts';
import { parseMassDesign } from './design.ts';
import { massFamily } from './family.ts';
import { evidenceOf, judgePair } from './judge.ts';
import { runMass } from './run.ts';
import { MASS_RUBRIC } from './types.ts';

const family = massFamily('learn-tool');
const task = createLearnDataset('learn-tool', ['tool']).load({ split: 'train', limit: 1 })[0]!;
const parsed = parseMassDesign(
  { agents: [{ agent_id: 'picker', role: 'Tool picker', instruction: 'Name the tool.', contract: { fields: ['tool'], artefacts: ['note'], checks: ['names_a_tool'] } }, { agent_id: 'checker', role: 'Checker', instruction: 'Check it.' }], hops: ['picker', { agent_id: 'checker', reads: ['picker'] }] },
  { checks: family.checks.names() },
);
if (!parsed.ok) throw new Error('fixture must parse');
const design = parsed.design;

/** A scripted team: the picker names `pick`, the checker agrees, the orchestrator answers `answer`. */
const team = (pick: string, answer: string) =>
  new ScriptedProvider((r) => {
    if (r.key.nodeId === 'orchestrator') return r.jsonSchema ? '{"delegate":"no","ask":""}' : 'ask the picker';
    if (r.key.nodeId === 'h1_picker') return JSON.stringify({ tool: pick, note: `because ${pick}` });
    if (r.key.nodeId === 'h2_checker') return '{"reply":"agreed"}';
    return JSON.stringify(answer);
  });

describe('runMass', () => {
  it('runs a design as a stored Flowlab run and returns its workspace', async () => {
    const store = openStore(':memory:');
    const ws = await runMass(design, task, { provider: team(task.expected, task.expected), family, store }, { experimentId: 'e1', version: 2 });
    expect(ws).toMatchObject({ experimentId: 'e1', runId: 'e1/0', version: 2, status: 'completed', answer: task.expected, delegated: true, handoffs: 1, contractFailures: [] });
    expect(ws.grade).toMatchObject({ score: 1, correct: true });
    expect(ws.files).toEqual({ 'picker/note': `because ${task.expected}`, answer: task.expected });
    expect(ws.conversations.map((c) => `${c.agent}@${c.nodeId}`)).toEqual(['orchestrator@orchestrator', 'picker@h1_picker', 'checker@h2_checker', 'orchestrator@answer']);
    expect(ws.conversations[0]!.messages[1]!.content).toContain(ws.designText);
    expect(ws.conversations[0]!.messages[1]!.content.startsWith(ws.taskPrompt)).toBe(true);
    expect(ws.conversations[1]!.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant']);
    // An ordinary run: stored with credit and ladder per role.
    const run = store.getRun('e1/0');
    expect(Object.keys(run.ladder ?? {}).sort()).toEqual(['checker', 'orchestrator', 'picker']);
    expect(store.getExperiment('e1').kind).toBe('mass');
    store.close();
  });

  it('records who designed the team: the optimizer wires the nodes of a design it wrote, a person those of one given', async () => {
    const store = openStore(':memory:');
    await runMass(design, task, { provider: team(task.expected, task.expected), family, store }, { experimentId: 'by-opt', version: 1, author: 'optimizer' });
    await runMass(design, task, { provider: team(task.expected, task.expected), family, store }, { experimentId: 'by-human' });
    const wirers = (id: string) => [...new Set(store.getRunEvents(`${id}/0`).map((e) => e.wiredBy))];
    expect(wirers('by-opt')).toEqual(['optimizer']);
    expect(wirers('by-human')).toEqual(['human']);
    store.close();
  });

  it('records a reply that breaks its contract as that agent’s failure and goes on', async () => {
    const ws = await runMass(design, task, { provider: team('hammer', 'search'), family });
    expect(ws.contractFailures).toEqual([{ nodeId: 'h1_picker', agent: 'picker', code: 'CONTRACT_VIOLATION', message: expect.stringContaining('names_a_tool') }]);
    expect(ws.status).toBe('completed');
    expect(ws.handoffs).toBe(0);
  });

  it('reads a stored run back instead of running it again', async () => {
    const store = openStore(':memory:');
    const p = team(task.expected, 'search');
    const first = await runMass(design, task, { provider: p, family, store }, { experimentId: 'e2' });
    const calls = p.calls;
    const again = await runMass(design, task, { provider: p, family, store }, { experimentId: 'e2' });
    expect(p.calls).toBe(calls);
    expect(again).toEqual(first);
    store.close();
  });

  it('runs the bare task: the orchestrator alone unless it delegates', async () => {
    const alone = await runMass(null, task, { provider: team('', task.expected), family });
    expect(alone).toMatchObject({ version: null, designText: '', delegated: false });
    expect(alone.conversations.map((c) => c.nodeId)).toEqual(['orchestrator', 'answer']);
    const asks = new ScriptedProvider((r) => (r.key.nodeId === 'orchestrator' ? '{"delegate":"yes","ask":"which tool?"}' : r.key.nodeId === 'helper' ? 'search' : '"search"'));
    const delegated = await runMass(null, task, { provider: asks, family });
    expect(delegated.delegated).toBe(true);
    expect(delegated.conversations.map((c) => c.nodeId)).toEqual(['orchestrator', 'helper', 'answer']);
  });
});

describe('judgePair', () => {
  it('asks for {winner, rationale} under the verdict schema, without the external grade, and stores the call', async () => {
    const store = openStore(':memory:');
    const a = await runMass(design, task, { provider: team(task.expected, task.expected), family, store }, { experimentId: 'wa' });
    const b = await runMass(null, task, { provider: team('', 'search'), family, store }, { experimentId: 'wb' });
    let seen: { prompt: string; schema: unknown } | undefined;
    const judge = new ScriptedProvider((r) => {
      seen = { prompt: r.prompt, schema: r.jsonSchema };
      return '{"winner":"A","rationale":"A checked its pick"}';
    });
    const v = await judgePair(a, b, MASS_RUBRIC, judge, { store, experimentId: 'j1' });
    expect(v).toEqual({ winner: 'A', rationale: 'A checked its pick', valid: true, experimentId: 'j1', runId: 'j1/0' });
    expect(seen!.prompt).toContain(`A: ${evidenceOf(a)}`);
    expect(seen!.prompt).toContain('Rubric: coverage, rigour, reproducibility, presentation, engineering, task alignment.');
    expect(seen!.prompt).not.toMatch(/score|correct/);
    expect((seen!.schema as { properties: { winner: { enum: string[] } } }).properties.winner.enum).toEqual(['A', 'B', 'tie']);
    expect(store.getExperimentCalls('j1')).toHaveLength(1);
    store.close();
  });

  it('records an unparsable verdict as an invalid tie, never a guess', async () => {
    const ws = await runMass(null, task, { provider: team('', 'search'), family });
    const v = await judgePair(ws, ws, MASS_RUBRIC, new ScriptedProvider(() => 'A is better'));
    expect(v.valid).toBe(false);
    expect(v.winner).toBe('tie');
    expect(v.rationale).toContain('not valid JSON');
  });
});
