import { describe, expect, it } from 'vitest';
import { defaultTools } from '../tools/index.ts';
import { createLearnDataset } from '../tasks/learn.ts';
import { parseWorkflow } from '../workflow/index.ts';
import { compileMass } from './compile.ts';
import { designJson, diffMassDesigns, diffText, parseMassDesign, renderMassDesign } from './design.ts';
import { massFamily } from './family.ts';

const family = massFamily('learn-tool');
const catalogue = { checks: family.checks.names() };
const V0 = [
  { agent_id: 'agent_orchestrator', role: 'Lead', instruction: 'Coordinate the team.' },
  { agent_id: 'picker', role: 'Tool picker', instruction: 'Name the one tool the request needs.' },
  { agent_id: 'checker', role: 'Checker', instruction: 'Check the pick against the request.' },
];

describe('parseMassDesign', () => {
  it('reads version 0: the orchestrator entry apart, sub-agents once each in list order with a reply field', () => {
    const r = parseMassDesign(JSON.stringify(V0), catalogue);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.design.orchestrator).toEqual({ role: 'Lead', instruction: 'Coordinate the team.' });
    expect(r.design.agents.map((a) => a.agent_id)).toEqual(['picker', 'checker']);
    expect(r.design.agents[0]!.contract).toEqual({ fields: ['reply'], artefacts: [], checks: [] });
    expect(r.design.hops).toEqual([{ agent_id: 'picker', reads: [] }, { agent_id: 'checker', reads: ['picker'] }]);
  });

  it('reads version 1 with contracts, recall and hand-offs, and round-trips through designJson', () => {
    const doc = {
      agents: [
        { agent_id: 'picker', role: 'Tool picker', instruction: 'Name the tool.', contract: { fields: ['tool'], artefacts: ['why'], checks: ['names_a_tool'] } },
        { agent_id: 'checker', role: 'Checker', instruction: 'Check it.', contract: { fields: ['verdict'], checks: ['non_empty'] } },
      ],
      hops: ['picker', { agent_id: 'checker', reads: ['picker'] }, { agent_id: 'picker', reads: ['checker'], scope: 'Fix the pick if the checker disagrees.' }],
    };
    const r = parseMassDesign(doc, catalogue);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.design.hops[2]).toEqual({ agent_id: 'picker', reads: ['checker'], scope: 'Fix the pick if the checker disagrees.' });
    const again = parseMassDesign(designJson(r.design), catalogue);
    expect(again.ok && again.design).toEqual(r.design);
    expect(renderMassDesign(r.design).split('\n')).toEqual([
      'Create an agent team with following agent candidates to solve this problem:',
      '- picker: Tool picker. Name the tool. Returns: tool, why (artefact). Checks: names_a_tool.',
      '- checker: Checker. Check it. Returns: verdict. Checks: non_empty.',
      'Hops:',
      '1. picker',
      '2. checker reads picker',
      '3. recall picker reads checker: Fix the pick if the checker disagrees.',
    ]);
  });

  it('locates every problem by path and code', () => {
    const r = parseMassDesign(
      {
        agents: [
          { agent_id: 'picker', role: 'P', instruction: 'x', contract: { fields: ['Tool!'], checks: ['no_such_check'] } },
          { agent_id: 'picker', role: 'Q', instruction: 'y' },
          { agent_id: 'ok', role: '', instruction: 'z' },
        ],
        hops: [{ agent_id: 'ghost' }, { agent_id: 'picker', reads: ['ok'] }],
        extra: 1,
      },
      catalogue,
    );
    expect(r.ok).toBe(false);
    expect(r.issues.map((i) => `${i.code} ${i.path}`)).toEqual([
      'BAD_SHAPE extra',
      'BAD_FIELD_NAME agents[0].contract.fields[0]',
      'UNKNOWN_CHECK agents[0].contract.checks[0]',
      'DUPLICATE_AGENT agents[1].agent_id',
      'EMPTY_TEXT agents[2].role',
      'UNKNOWN_AGENT hops[0].agent_id',
      'UNKNOWN_AGENT hops[1].reads[0]',
    ]);
    expect(r.issues[2]!.message).toContain('known checks: non_empty');
  });

  it('rejects text that is not JSON, a design with no sub-agent, and one over the limits', () => {
    expect(parseMassDesign('the team is great', catalogue).issues[0]!.code).toBe('NOT_JSON');
    expect(parseMassDesign('[{"agent_id": "x"', catalogue).issues[0]!.code).toBe('NOT_JSON');
    expect(parseMassDesign([V0[0]], catalogue).issues.map((i) => i.code)).toEqual(['NO_AGENTS']);
    expect(parseMassDesign([{ agent_id: 'judge', role: 'r', instruction: 'i' }], catalogue).issues.map((i) => `${i.code} ${i.path}`)).toEqual(['RESERVED_ID [0].agent_id']);
    const many = Array.from({ length: 5 }, (_, i) => ({ agent_id: `a${i}`, role: 'r', instruction: 'i' }));
    expect(parseMassDesign(many, catalogue).issues.map((i) => i.code)).toEqual(['OVER_LIMIT']);
    expect(parseMassDesign({ agents: [V0[1]], hops: [{ agent_id: 'picker', reads: ['picker'] }] }, catalogue).issues.map((i) => i.code)).toEqual(['READS_LATER']);
  });
});

describe('diffMassDesigns', () => {
  it('names agents added, removed and changed field by field, the hop change and the line diff', () => {
    const a = parseMassDesign(V0, catalogue);
    const b = parseMassDesign({ agents: [{ ...V0[1], contract: { fields: ['tool'], checks: ['names_a_tool'] } }, { agent_id: 'referee', role: 'Referee', instruction: 'Judge.' }], hops: ['picker', 'referee'] }, catalogue);
    if (!a.ok || !b.ok) throw new Error('fixtures must parse');
    const d = diffMassDesigns(a.design, b.design);
    expect(d.identical).toBe(false);
    expect(d.agents).toEqual({
      added: ['referee'],
      removed: ['checker'],
      changed: [
        { agent_id: 'picker', field: 'contract.fields', from: 'reply', to: 'tool' },
        { agent_id: 'picker', field: 'contract.checks', from: '', to: 'names_a_tool' },
      ],
    });
    expect(d.hops).toEqual({ from: ['picker', 'checker reads picker'], to: ['picker', 'referee'] });
    expect(d.orchestrator).toEqual({ from: 'Lead. Coordinate the team.', to: '' });
    expect(diffText(d)).toContain('+- referee: Referee. Judge. Returns: reply.');
    expect(diffMassDesigns(a.design, a.design)).toMatchObject({ identical: true, lines: expect.any(Array) });
    expect(diffText(diffMassDesigns(a.design, a.design))).toBe('(designs are identical)');
    expect(diffMassDesigns(null, a.design).lines.every((l) => l.op === '+')).toBe(true);
  });
});

describe('compileMass', () => {
  const task = createLearnDataset('learn-tool', ['tool']).load({ split: 'train', limit: 1 })[0]!;
  it('compiles a design into a valid workflow: orchestrator, one node per hop under its contract, answer', () => {
    const r = parseMassDesign({ agents: [{ ...V0[1], contract: { fields: ['tool'], artefacts: ['note'], checks: ['names_a_tool'] } }, V0[2]], hops: ['picker', { agent_id: 'checker', reads: ['picker'] }, { agent_id: 'picker', reads: ['checker'] }] }, catalogue);
    if (!r.ok) throw new Error('fixture must parse');
    const c = compileMass(r.design, task, family);
    const { graph } = parseWorkflow(c.workflowText, { tools: defaultTools(), checks: family.checks });
    expect(graph.hops).toEqual(['orchestrator', 'h1_picker', 'h2_checker', 'h3_picker', 'answer']);
    const h1 = graph.nodes.find((n) => n.id === 'h1_picker')!;
    expect(h1.contract?.checks).toEqual(['names_a_tool']);
    expect((h1.contract?.schema as { required: string[] }).required).toEqual(['tool', 'note']);
    const h3 = graph.nodes.find((n) => n.id === 'h3_picker')!;
    expect(h3.inputs.map((p) => `${p.name}<-${p.source.kind === 'node' ? p.source.node : 'task'}`)).toEqual(['brief<-task', 'plan<-orchestrator', 'before<-h1_picker', 'r0<-h2_checker']);
    expect(c.input.mass_design).toBe(renderMassDesign(r.design));
    expect(c.input.mass_task).toBe(task.input.prompt);
  });
  it('compiles the bare task: orchestrator with a conditional helper', () => {
    const c = compileMass(null, task, family);
    const { graph } = parseWorkflow(c.workflowText, { tools: defaultTools(), checks: family.checks });
    expect(graph.nodes.map((n) => n.id)).toEqual(['orchestrator', 'helper', 'answer']);
    expect(graph.edges.find((e) => e.to === 'helper' && e.type === 'control')?.condition).toBeDefined();
    expect(c.input.mass_design).toBe('');
  });
});
