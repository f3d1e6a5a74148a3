/**
 * SIMULATED wiring faults in designs (core/faults/design.ts): each kind on steps and graph
 * documents, checked against the real design compiler; the spec syntax; and the must-show
 * blame evaluation through the experiment service, with a SIMULATED designer (a ScriptedProvider
 * that always writes a correct design) and executor skills, wiring faults in designer outputs and
 * execution faults in executor outputs at once, resumed and replayed.
 */
import { describe, expect, it } from 'vitest';
import { compileDesign, type DesignRecord } from '../design/index.ts';
import { parseWorkflow } from '../workflow/load.ts';
import type { DesignStage } from '../workflow/index.ts';
import { checkFaultSpecs, replayDesignFaultsFor, replayExperiment, startExperiment, type ExperimentEvent } from '../experiments/index.ts';
import { ReplayProvider } from '../../models/replay/index.ts';
import { scoreBlame } from '../blame/index.ts';
import { DESIGN_FAULT_KINDS, DesignFaultInjector, injectDesignFault, parseFaultSpec, type DesignFaultKind } from './index.ts';
import { DESIGNS, designedBlameEval as service, graph, skill, stage, tools } from '../experiments/designedBlameEval.fixture.ts';

/** Compiles a (tampered) design and returns the wiring fault code of each node that has one. */
function faultsOf(doc: unknown, notation: DesignStage['notation'] = 'steps') {
  const c = compileDesign({ ...stage, notation }, doc, { tools, reserved: ['design', 'report'] });
  expect(c.usable, c.problem).toBe(true);
  return Object.fromEntries(c.nodes.filter((n) => n.wiringFault).map((n) => [n.id, n.wiringFault!.code]));
}
const inject = (kind: DesignFaultKind, doc: unknown, pick = 0, notation: DesignStage['notation'] = 'steps') => injectDesignFault(kind, doc, { notation, stage, tools, pick });

describe('design faults (SIMULATED): each kind on a design document', () => {
  const CODE: Record<DesignFaultKind, string> = { dangling_edge: 'DANGLING_EDGE', unknown_tool: 'UNKNOWN_TOOL', missing_port: 'MISSING_PORT', unbounded_loop: 'UNBOUNDED_CYCLE' };

  it('the correct designs compile without a fault', () => {
    for (const d of Object.values(DESIGNS)) expect(faultsOf(d)).toEqual({});
  });

  it('dangling_edge rewrites an input to an id the design lacks; the validator fails exactly that node', () => {
    const t = inject('dangling_edge', DESIGNS.weather, 0.99)!;
    expect(t.fault).toEqual({ kind: 'dangling_edge', nodeId: 'b', simulated: true });
    expect(t.document).toEqual({ steps: [DESIGNS.weather.steps[0], { id: 'b', tool: 'weather', inputs: { day: 'c' } }] });
    expect(faultsOf(t.document)).toEqual({ b: 'DANGLING_EDGE' });
    expect(inject('dangling_edge', DESIGNS.weather, 0)!.fault.nodeId).toBe('a');
  });

  it('unknown_tool renames a tool step to a tool outside the catalogue', () => {
    const t = inject('unknown_tool', DESIGNS.both, 0.6)!;
    expect(t.fault).toEqual({ kind: 'unknown_tool', nodeId: 'd', simulated: true });
    expect((t.document as typeof DESIGNS.both).steps[3]).toEqual({ id: 'd', tool: 'search_v2', inputs: { kind: 'c' } });
    expect(faultsOf(t.document)).toEqual({ d: 'UNKNOWN_TOOL' });
  });

  it('missing_port removes a required port of a tool step', () => {
    const t = inject('missing_port', DESIGNS.both, 0)!;
    expect(t.fault).toEqual({ kind: 'missing_port', nodeId: 'b', simulated: true });
    expect((t.document as typeof DESIGNS.both).steps[1]).toEqual({ id: 'b', tool: 'weather', inputs: {} });
    expect(faultsOf(t.document)).toEqual({ b: 'MISSING_PORT' });
  });

  it('unbounded_loop makes an earlier node read a later one that depends on it; the cycle closes on the earlier node', () => {
    const t = inject('unbounded_loop', DESIGNS.weather, 0)!;
    expect(t.fault).toEqual({ kind: 'unbounded_loop', nodeId: 'a', simulated: true });
    expect((t.document as typeof DESIGNS.weather).steps[0]).toEqual(skill('a', 'day_args', 'b'));
    expect(faultsOf(t.document)).toEqual({ a: 'UNBOUNDED_CYCLE' });
    // Every place in the four-step design: the ground truth is the node the compiler faults.
    const places = new Set<string>();
    for (let k = 0; k < 40; k++) {
      const u = inject('unbounded_loop', DESIGNS.both, k / 40)!;
      places.add(`${u.fault.nodeId}`);
      expect(faultsOf(u.document)).toEqual({ [u.fault.nodeId]: 'UNBOUNDED_CYCLE' });
    }
    expect([...places].sort()).toEqual(['a', 'b', 'c']);
  });

  it('every kind at every place of every design: the fault lands on the ground-truth node only, and the input is never changed', () => {
    let checked = 0;
    for (const kind of DESIGN_FAULT_KINDS) {
      for (const d of Object.values(DESIGNS)) {
        const before = JSON.stringify(d);
        for (let k = 0; k < 8; k++) {
          const t = inject(kind, d, k / 8);
          if (!t) continue;
          expect(faultsOf(t.document)).toEqual({ [t.fault.nodeId]: CODE[kind] });
          checked++;
        }
        expect(JSON.stringify(d)).toBe(before);
      }
    }
    expect(checked).toBe(9 * 8); // dangling_edge applies to all 3 designs, the other kinds to 2 (not the one-step story): 9 pairs x 8 picks
  });

  it('a kind with no place in the design injects nothing (not applicable)', () => {
    expect(inject('unknown_tool', DESIGNS.story)).toBeUndefined(); // no tool step
    expect(inject('missing_port', DESIGNS.story)).toBeUndefined();
    expect(inject('unbounded_loop', DESIGNS.story)).toBeUndefined(); // one step: no later node
    expect(inject('dangling_edge', DESIGNS.story)!.fault.nodeId).toBe('a');
    expect(inject('dangling_edge', 'a = weather(day=task.request)', 0, 'code')).toBeUndefined();
    expect(inject('dangling_edge', { states: [] }, 0, 'states')).toBeUndefined();
  });

  it('graph notation: the same kinds on `nodes` (+ `edges`); a port fed by a declared edge is left alone', () => {
    const g = { nodes: DESIGNS.both.steps, edges: [] };
    const t = inject('unbounded_loop', g, 0.99, 'graph')!;
    expect(faultsOf(t.document, 'graph')).toEqual({ [t.fault.nodeId]: 'UNBOUNDED_CYCLE' });
    const m = inject('missing_port', g, 0.99, 'graph')!;
    expect([m.fault.nodeId, faultsOf(m.document, 'graph')]).toEqual(['d', { d: 'MISSING_PORT' }]);
    // b's day comes from a declared edge a -> b (port day): missing_port can only take d's port.
    const declared = { nodes: [skill('a', 'day_args', 'task.request'), { id: 'b', tool: 'weather', inputs: {} }], edges: [{ from: 'a', to: 'b', port: 'day' }] };
    expect(faultsOf(declared, 'graph')).toEqual({});
    expect(inject('missing_port', declared, 0, 'graph')).toBeUndefined();
  });
});

describe('design fault specs and the injector', () => {
  it('parses designer=<design kind>@rate; a design kind cannot target a node', () => {
    expect(parseFaultSpec('designer=dangling_edge@0.3')).toEqual({ role: 'designer', kind: 'dangling_edge', rate: 0.3 });
    expect(() => parseFaultSpec('node:design=unknown_tool')).toThrow('bad --inject "node:design=unknown_tool": unknown_tool is a design fault; it targets the design role (e.g. designer=unknown_tool@0.3), not a node');
    expect(() => parseFaultSpec('designer=dangling@1')).toThrow(/unknown kind "dangling" \(kinds: malformed, contract, error, timeout, wrong, dropped; for the design role also dangling_edge, unknown_tool, missing_port, unbounded_loop\)/);
  });

  it('checkFaultSpecs: design kinds only for the design role; execution kinds on the designer stay possible', () => {
    expect(checkFaultSpecs(graph, ['designer=missing_port@0.5', 'designer=malformed@0.2']).map((s) => s.kind)).toEqual(['missing_port', 'malformed']);
    expect(() => checkFaultSpecs(graph, ['designer=error', 'executor=unbounded_loop'])).toThrow(expect.objectContaining({ code: 'DESIGN_FAULT_ROLE', field: 'inject.1', message: 'inject "executor=unbounded_loop": unbounded_loop is a design (wiring) fault; it targets the design role "designer", not "executor"' }));
    const plain = parseWorkflow('name: p\nroles: { s: { kind: executor } }\nnodes:\n  - { id: x, role: s, prompt: go }\n', { tools }).graph;
    expect(() => checkFaultSpecs(plain, ['s=dangling_edge'])).toThrow(expect.objectContaining({ code: 'DESIGN_FAULT_ROLE', message: 'inject "s=dangling_edge": dangling_edge is a design (wiring) fault; the workflow has no design stage (`design:`)' }));
  });

  it('decides deterministically in (seed, spec, task, attempt); a drawn kind with no place is not applicable and the next spec is tried', () => {
    const specs = checkFaultSpecs(graph, ['designer=unknown_tool@1', 'designer=dangling_edge@1']);
    const a = new DesignFaultInjector(specs, 5, tools);
    const ctx = { taskKey: '3', attempt: 1, notation: 'steps' as const, document: DESIGNS.story, stage };
    const d = a.decide(ctx);
    expect(d.notApplicable).toEqual(['unknown_tool']);
    expect(d.tampered!.fault).toEqual({ kind: 'dangling_edge', nodeId: 'a', simulated: true });
    expect(new DesignFaultInjector(specs, 5, tools).decide(ctx)).toEqual(d);
    // Over many tasks, a rate of 0.5 draws about half; the same tasks are drawn twice.
    const half = new DesignFaultInjector(checkFaultSpecs(graph, ['designer=dangling_edge@0.5']), 11, tools);
    const drawn = (inj: DesignFaultInjector) => Array.from({ length: 400 }, (_, i) => (inj.hook({ ...ctx, taskKey: String(i), document: DESIGNS.both }) ? 1 : 0));
    const first = drawn(half);
    expect(drawn(new DesignFaultInjector(half.specs, 11, tools))).toEqual(first);
    expect(first.reduce((s: number, x) => s + x, 0)).toBeGreaterThan(160);
    expect(first.reduce((s: number, x) => s + x, 0)).toBeLessThan(240);
  });
});

describe('the blame report shape', () => {
  it('without a design stage the report is as before: no design kinds, no designCascades', () => {
    const r = scoreBlame([]);
    expect(Object.keys(r.byKind)).toEqual(['malformed', 'contract', 'error', 'timeout', 'wrong', 'dropped']);
    expect('designCascades' in r).toBe(false);
  });
});

// ---- The must-show: blame-eval with wiring faults in designs and execution faults in executor outputs at once.

const recordOf = (events: ReadonlyArray<{ nodeId: string; output?: unknown }>) => events.find((e) => e.nodeId === 'design')!.output as DesignRecord;

describe('blame-eval with SIMULATED wiring faults in designer outputs and execution faults in executor outputs', () => {
  it('precision and recall 1.0 per role and per surfaced kind; cascades behind a bad wire never blamed', async () => {
    const { store, deps, spec } = service();
    const out = await (await startExperiment(spec, deps)).done;
    expect(out.status).toBe('completed');
    const b = out.blame!.report;
    expect(b.runs).toBe(40);
    for (const role of ['designer', 'executor']) expect(b.byRole[role], role).toMatchObject({ precision: 1, recall: 1 });
    const surfacedKinds = ['dangling_edge', 'unknown_tool', 'missing_port', 'unbounded_loop', 'malformed', 'contract'];
    for (const k of surfacedKinds) {
      expect(b.byKind[k]!.injected, k).toBeGreaterThan(0);
      expect(b.byKind[k], k).toMatchObject({ precision: 1, recall: 1, surfaced: b.byKind[k]!.injected });
    }
    expect(b.unseen).toBe(0);
    expect(b.cascadesTotal).toBeGreaterThan(0);
    expect(b.cascadesNotBlamed).toBe(b.cascadesTotal);
    expect(b.designCascades!.total).toBeGreaterThan(0);
    expect(b.designCascades!.notBlamed).toBe(b.designCascades!.total);
    expect(b.natural).toEqual({ roots: 0, byRole: {}, ambiguous: 0, infrastructure: 0 });
    // The story design (one skill step) has no tool step and no later node: those kinds were drawn, not injected.
    expect(b.byKind.unknown_tool!.notApplicable! + b.byKind.missing_port!.notApplicable! + b.byKind.unbounded_loop!.notApplicable!).toBeGreaterThan(0);
    console.log(`[design faults] ${JSON.stringify(Object.fromEntries(Object.entries(b.byKind).filter(([, v]) => v.injected || v.notApplicable)))} roles ${JSON.stringify(b.byRole)} cascades ${b.cascadesNotBlamed}/${b.cascadesTotal} behind bad wires ${b.designCascades!.notBlamed}/${b.designCascades!.total}`);

    // Every stored run against its own ground truth: roots are exactly the injected nodes that failed.
    let both = 0;
    for (const run of store.listRuns(out.experimentId)) {
      const events = store.getRunEvents(run.runId);
      const rec = recordOf(events);
      const expected: Array<[string, string, string]> = [];
      if (rec.fault) expected.push([rec.fault.nodeId, 'wiring', 'designer']);
      for (const e of events) if (e.fault && !e.fault.startsWith('design:') && e.status === 'failed') expected.push([e.nodeId, 'execution', e.nodeId === 'design' ? 'designer' : 'executor']);
      const got = run.credit!.roots.map((r) => [r.nodeId as string, r.failureClass, r.blamed as string]);
      expect(got.sort(), run.runId).toEqual(expected.sort());
      if (rec.fault && expected.length > 1) both++;
      expect(run.correct, run.runId).toBe(expected.length === 0);
    }
    expect(both).toBeGreaterThan(0);
  });

  it('hand-checked run: the expected roots of one run with a wiring fault and an execution fault', async () => {
    const { store, deps, spec } = service();
    const out = await (await startExperiment(spec, deps)).done;
    const run = store.listRuns(out.experimentId).find((r) => r.taskIndex === HAND.task)!;
    const events = store.getRunEvents(run.runId);
    const rec = recordOf(events);
    expect(rec.fault).toEqual(HAND.fault);
    expect(rec.document).toEqual(HAND.document);
    expect(events.map((e) => [e.nodeId, e.status, e.errorCode ?? null, e.fault ?? null])).toEqual(HAND.events);
    expect(run.credit!.roots.map((r) => [r.nodeId, r.failureClass, r.errorCode, r.blamed])).toEqual(HAND.roots);
    expect(run.credit!.cascades.map((c) => [c.nodeId, c.roots])).toEqual(HAND.cascades);
  });

  it('resume injects exactly the faults of the uninterrupted run; replay reproduces every node without a model', async () => {
    const full = service();
    const a = await (await startExperiment(full.spec, full.deps)).done;
    const cut = service();
    const h = await startExperiment(cut.spec, cut.deps, { onEvent: (e: ExperimentEvent) => { if (e.type === 'run' && e.done === 13) h.cancel(); } });
    expect((await h.done).status).toBe('cancelled');
    expect(cut.store.listRuns(h.experimentId).length).toBeLessThan(40);
    const resumed = await (await startExperiment({ kind: 'resume', experimentId: h.experimentId }, cut.deps)).done;
    expect(resumed.status).toBe('completed');
    const faults = (s: typeof full.store, id: string) => s.listRuns(id).map((r) => {
      const events = s.getRunEvents(r.runId);
      return [r.taskIndex, recordOf(events).fault ?? null, events.filter((e) => e.fault).map((e) => `${e.nodeId}:${e.fault}`)];
    });
    expect(faults(cut.store, h.experimentId)).toEqual(faults(full.store, a.experimentId));
    expect(resumed.blame!.report).toEqual(a.blame!.report);

    const exp = full.store.getExperiment(a.experimentId);
    const replay = (designFault: ReturnType<typeof replayDesignFaultsFor>) => replayExperiment({ store: full.store, experimentId: exp.id, graph, provider: new ReplayProvider(full.store.getExperimentCalls(exp.id)), tools, designFault });
    const same = await replay(replayDesignFaultsFor(exp, graph, tools));
    expect([same.runs, same.mismatched, same.modelsLoaded]).toEqual([40, 0, 0]);
    expect(same.matched).toBe(same.nodes);
    // Without the hook the designs come back untampered: the design nodes differ.
    const bare = await replay(undefined);
    expect(bare.mismatches.some((m) => m.nodeId === 'design' && m.what === 'output')).toBe(true);
  });
});

/**
 * Task 23 ("Weather then a story (#23)"), checked by hand. The SIMULATED designer wrote the
 * correct four-step design a -> b -> c -> d; the injector renamed b's tool (weather -> weather_v2,
 * unknown_tool) and, independently, the executor's output at a broke its contract. So:
 * - a fails CONTRACT_VIOLATION (execution): a root blamed on the executor that ran it;
 * - b fails UNKNOWN_TOOL at once (wiring, pre-failed by the validator): a root blamed on the
 *   designer that wired it, although a above it failed too (its own wiring fails it whatever a gave);
 * - c (reads b), d (reads c) and the fixed report (reads the designed answer d) cascade from b:
 *   never blamed.
 */
const HAND = {
  task: 23,
  fault: { kind: 'unknown_tool', nodeId: 'b', simulated: true },
  document: { steps: [skill('a', 'day_args', 'task.request'), { id: 'b', tool: 'weather_v2', inputs: { day: 'a' } }, skill('c', 'kind_args', 'b'), { id: 'd', tool: 'search', inputs: { kind: 'c' } }] },
  events: [
    ['design', 'ok', null, 'design:unknown_tool'],
    ['a', 'failed', 'CONTRACT_VIOLATION', 'contract'],
    ['b', 'failed', 'UNKNOWN_TOOL', null],
    ['c', 'cascade', 'UPSTREAM_FAILED', null],
    ['d', 'cascade', 'UPSTREAM_FAILED', null],
    ['report', 'cascade', 'UPSTREAM_FAILED', null],
  ],
  roots: [['a', 'execution', 'CONTRACT_VIOLATION', 'executor'], ['b', 'wiring', 'UNKNOWN_TOOL', 'designer']],
  cascades: [['c', ['b']], ['d', ['b']], ['report', ['b']]],
};
