import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDesignedExperiment } from '../../core/api/designedRun.fixture.ts';
import { createHandlers, type FlowlabApi, type RunTrace } from '../../core/api/index.ts';
import { openStore, type Store } from '../../core/store/index.ts';
import { traceElements, viewportToFit } from './elements.ts';
import { graphStyle } from './graphStyle.ts';
import { authorBadges, buildTraceModel } from './traceModel.ts';

let store: Store;
let traces: RunTrace[];

beforeAll(async () => {
  store = openStore(':memory:');
  const exp = await seedDesignedExperiment(store);
  const api: FlowlabApi = createHandlers({ store, version: 'test' });
  traces = api.listRuns({ experimentId: exp }).map((r) => api.getRunTrace({ runId: r.runId }));
});
afterAll(() => store.close());

const modelOf = (t: RunTrace) => buildTraceModel(t.graph ?? null, t.run, t.events);

describe('the trace of a designed run (scripted, SIMULATED designer)', () => {
  it('marks each node with its authors: the design node the designer\'s, designed nodes wired by it and run by their role', () => {
    const m = modelOf(traces[0]!);
    expect(m.design).toEqual({ nodeId: 'design', role: 'designer' });
    const badges = Object.fromEntries(m.nodes.map((n) => [n.id, authorBadges(n, m.design).map((b) => `${b.kind}: ${b.text}`)]));
    expect(badges).toEqual({
      design: ['design: ✎ design node, run by designer'],
      a: ['wired: ✎ wired by designer', 'run: ▶ run by executor'],
      b: ['wired: ✎ wired by designer'],
    });
  });

  it('shows the pre-failed wiring node as a root failure blamed on the designer', () => {
    const b = modelOf(traces[0]!).nodes.find((n) => n.id === 'b')!;
    expect(b).toMatchObject({ state: 'root', failureClass: 'wiring', errorCode: 'DANGLING_EDGE', blamed: 'designer', origin: 'designed', tool: 'calculator', wiringFault: { code: 'DANGLING_EDGE' } });
  });

  it('draws authors by label, shape and ring, not by colour alone', () => {
    const els = traceElements(modelOf(traces[1]!));
    const node = (id: string) => els.find((e) => e.group === 'nodes' && e.data.id === id)!;
    expect(node('design').classes).toBe('kind-agent st-ok with-author design-node');
    expect(node('a').classes).toBe('kind-skill st-ok with-author wired-designer');
    expect(node('a').data.label).toBe('✓ a\nskill expression\n✎ wired by designer\n▶ run by executor');
    expect(node('b').data.label).toBe('✓ b\ntool calculator\n✎ wired by designer');
    expect(els.filter((e) => e.group === 'edges').map((e) => [e.data.source, e.data.target])).toEqual([['a', 'b']]);
    const sheet = graphStyle('light') as Array<{ selector: string; style: Record<string, unknown> }>;
    const style = (sel: string) => sheet.find((s) => s.selector === sel)!.style;
    expect([style('node.design-node').shape, style('node.design-node')['outline-style']]).toEqual(['cut-rectangle', 'double']);
    expect(style('node.wired-designer')['outline-style']).toBe('dashed');
    // The border stays the state's: the author classes never set one.
    for (const sel of ['node.design-node', 'node.wired-designer', 'node.with-author']) expect(Object.keys(style(sel)).filter((k) => k.startsWith('border'))).toEqual([]);
  });

  it('fits the taller nodes of a designed run into the canvas', () => {
    const els = traceElements(modelOf(traces[0]!));
    // Three unconnected nodes in one column, 125 apart; each 2 × 62 tall with its ring.
    expect(els.map((e) => e.position!.y)).toEqual([-125, 0, 125]);
    expect(viewportToFit(els, 600, 460, { padding: 24, maxZoom: 1.5 })!.zoom).toBeCloseTo((460 - 48) / (250 + 124), 10);
    const plain = els.map(({ data: { halfW: _w, halfH: _h, ...data }, ...e }) => ({ ...e, data }));
    expect(viewportToFit(plain, 600, 460, { padding: 24, maxZoom: 1.5 })!.zoom).toBeCloseTo((460 - 48) / (250 + 76), 10);
  });

  it('an unusable design: the design node is the one root failure, blamed on the designer, and nothing else is drawn', () => {
    const m = modelOf(traces[2]!);
    expect(m.nodes.map((n) => [n.id, n.state, n.errorCode, n.blamed])).toEqual([['design', 'root', 'CONTRACT_VIOLATION', 'designer']]);
  });

  it('a hand-written run has no author marks and keeps its labels', () => {
    const m = buildTraceModel({ nodes: [{ id: 'x', kind: 'agent', role: 'solver' }], edges: [] }, { credit: undefined, correct: true, status: 'completed' }, []);
    expect(authorBadges(m.nodes[0]!, m.design)).toEqual([]);
    expect(traceElements(m)[0]!.data.label).toBe('– x\nsolver');
    expect(traceElements(m)[0]!.classes).toBe('kind-agent st-skipped');
  });
});
