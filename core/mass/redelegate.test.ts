/** Re-delegation in hops (redelegate.ts): validated with located errors, compiled, run and recorded in the trace with authorship (SIMULATED team). */
import { describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../model/scripted.ts';
import { openStore } from '../store/index.ts';
import { createLearnDataset } from '../tasks/learn.ts';
import { compileMass } from './compile.ts';
import { designJson, parseMassDesign, renderMassDesign } from './design.ts';
import { massFamily } from './family.ts';
import { optimizerSchema } from './optimizer.ts';
import { massTools } from './redelegate.ts';
import { runMass } from './run.ts';
import { defaultTools } from '../tools/index.ts';
import { parseWorkflow } from '../workflow/index.ts';

const family = massFamily('learn-tool');
const catalogue = { checks: family.checks.names() };
const task = createLearnDataset('learn-tool', ['tool']).load({ split: 'train', limit: 1 })[0]!;
const agents = [
  { agent_id: 'picker', role: 'Tool picker', instruction: 'Name the tool.', contract: { fields: ['tool'], artefacts: [], checks: ['names_a_tool'] } },
  { agent_id: 'backup', role: 'Backup picker', instruction: 'Name the tool.' },
];
const parse = (hops: unknown[]) => parseMassDesign({ agents, hops }, catalogue);

/** SIMULATED team: the picker names `first` (a tool or not), the backup names `task.expected`. */
const team = (first: string) =>
  new ScriptedProvider((r) => {
    if (r.key.nodeId === 'orchestrator') return 'ask the picker';
    if (r.key.nodeId === 'h1_picker') return JSON.stringify({ tool: first });
    if (/_rd\d_/.test(r.key.nodeId)) return JSON.stringify({ tool: task.expected });
    if (r.key.nodeId === 'h2_backup') return '{"reply":"ok"}';
    return JSON.stringify(task.expected);
  });

describe('re-delegation in hops', () => {
  it('validates it with located errors', () => {
    const bad = parse([{ agent_id: 'picker', redelegate: { to: 'ghost', max: 3, when: 'x' } }]);
    expect(bad.ok).toBe(false);
    expect(bad.issues.map((i) => `${i.code} ${i.path}`)).toEqual(['BAD_SHAPE hops[0].redelegate.when', 'UNKNOWN_AGENT hops[0].redelegate.to', 'OVER_LIMIT hops[0].redelegate.max']);
    const over = parseMassDesign({ agents, hops: ['picker', 'backup', 'picker', 'backup', { agent_id: 'picker', redelegate: { max: 2 } }] }, catalogue);
    expect(over.issues.map((i) => i.message)).toEqual(['the design has 5 hops and 2 re-delegation(s); at most 6 in all']);
    const ok = parse([{ agent_id: 'picker', redelegate: {} }, 'backup']);
    expect(ok.ok && ok.design.hops[0]!.redelegate).toEqual({ to: 'picker', max: 1 });
  });

  it('renders it, stores it in the design JSON, and leaves designs without it compiled as before', () => {
    const d = parse([{ agent_id: 'picker', redelegate: { to: 'backup', max: 2 } }, 'backup']);
    if (!d.ok) throw new Error('must parse');
    expect(renderMassDesign(d.design)).toContain('1. picker (contract broken: re-delegate to backup, at most 2x)');
    expect(JSON.parse(designJson(d.design)).hops[0]).toEqual({ agent_id: 'picker', reads: [], redelegate: { to: 'backup', max: 2 } });
    const plain = parse(['picker', 'backup']);
    if (!plain.ok) throw new Error('must parse');
    const doc = JSON.parse(compileMass(plain.design, task, family).workflowText) as { edges?: unknown; hops: string[] };
    expect(doc.edges).toBeUndefined();
    expect(doc.hops).toEqual(['orchestrator', 'h1_picker', 'h2_backup', 'answer']);
  });

  it('re-delegates a reply that broke its contract to the named agent, once, and records it in the trace with authorship', async () => {
    const d = parse([{ agent_id: 'picker', redelegate: { to: 'backup', max: 2 } }, 'backup']);
    if (!d.ok) throw new Error('must parse');
    const store = openStore(':memory:');
    const ws = await runMass(d.design, task, { provider: team('hammer'), family, store }, { experimentId: 'rd', author: 'optimizer' });
    const events = store.getRunEvents('rd/0');
    const by = new Map(events.map((e) => [String(e.nodeId), e]));
    expect(by.get('h1_picker')).toMatchObject({ status: 'failed', errorCode: 'CONTRACT_VIOLATION' });
    expect(by.get('h1_picker_g1')).toMatchObject({ status: 'ok', output: { redelegate: 'yes', why: 'the latest reply broke its contract' } });
    expect(by.get('h1_picker_rd1_backup')).toMatchObject({ status: 'ok', role: 'backup', output: { tool: task.expected } });
    // Authorship: the design's author (here the optimizer) wired the re-delegated call, shared with the orchestrator that makes it.
    expect(by.get('h1_picker_rd1_backup')!.wiredBy).toBe('optimizer');
    const { graph } = parseWorkflow(store.getExperiment('rd').workflowYaml, { tools: massTools(defaultTools()), checks: family.checks });
    expect(graph.nodes.find((n) => n.id === 'h1_picker_rd1_backup')).toMatchObject({ role: 'backup', wiredBy: 'optimizer', sharedWiredBy: ['orchestrator'] });
    // The re-delegated reply kept its contract: the second decision says no and the second call is skipped.
    expect(by.get('h1_picker_g2')).toMatchObject({ status: 'ok', output: { redelegate: 'no' } });
    expect(by.get('h1_picker_rd2_backup')).toMatchObject({ status: 'skipped' });
    expect(ws.answer).toBe(task.expected);
    expect(ws.contractFailures.map((f) => f.nodeId)).toEqual(['h1_picker']);
    // A reply that keeps its contract is not re-delegated.
    const kept = await runMass(d.design, task, { provider: team(task.expected), family, store }, { experimentId: 'kept' });
    const byKept = new Map(store.getRunEvents('kept/0').map((e) => [String(e.nodeId), e.status]));
    expect([byKept.get('h1_picker'), byKept.get('h1_picker_g1'), byKept.get('h1_picker_rd1_backup')]).toEqual(['ok', 'ok', 'skipped']);
    expect(kept.conversations.map((c) => c.nodeId)).toEqual(['orchestrator', 'h1_picker', 'h2_backup', 'answer']);
    store.close();
  });

  it('the optimizer may write it: its grammar has redelegate on hops', () => {
    const schema = optimizerSchema(catalogue, undefined, { agents: ['picker', 'backup'], fields: ['tool', 'reply'] }) as { properties: Record<string, { properties: { hops: { items: { properties: Record<string, unknown> } } } }> };
    expect(schema.properties['improved_multi_agent_design']!.properties.hops.items.properties['redelegate']).toEqual({ type: 'object', properties: { to: { enum: ['picker', 'backup'] }, max: { enum: [1, 2] } }, required: ['to', 'max'] });
  });
});
