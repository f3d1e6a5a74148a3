import { describe, expect, it } from 'vitest';
import { asRunId, type NodeId } from '../../ids.ts';
import { runWorkflow } from '../../engine/index.ts';
import { FaultInjector, FAULT_KINDS, type FaultKind, type FaultSpec } from '../../faults/index.ts';
import { ScriptedProvider } from '../../model/scripted.ts';
import { defaultTools } from '../../tools/index.ts';
import { parseWorkflow } from '../../workflow/load.ts';
import { computeCredit } from './computeCredit.ts';
import { mulberry32 } from '../../random.ts';
import { creditGraphOf } from './fromGraph.ts';


const SURFACED: readonly FaultKind[] = ['malformed', 'contract', 'error', 'timeout'];
const SILENT: readonly FaultKind[] = ['wrong', 'dropped'];
const ROLES = ['r0', 'r1', 'r2', 'r3'];

/** A random DAG workflow: agent nodes with a contract {v: number (required), note: string}. */
function randomCase(rand: () => number) {
  const n = 2 + Math.floor(rand() * 14);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const wiringFault = new Set<string>();
  const faults: FaultSpec[] = [];
  const lines = ['name: random', `roles: { ${ROLES.map((r) => `${r}: { kind: executor }`).join(', ')} }`, 'nodes:'];
  for (let i = 0; i < n; i++) {
    const inputs: string[] = [];
    for (let j = 0; j < i; j++) {
      if (rand() < 0.3) inputs.push(rand() < 0.2 ? `p${j}: { from: n${j}, optional: true }` : `p${j}: n${j}`);
    }
    if (i > 0 && rand() < 0.08) {
      // A wiring fault: the node reads a field its source never produces (MISSING_FIELD at run time).
      inputs.push(`bad: n${Math.floor(rand() * i)}.nope`);
      wiringFault.add(`n${i}`);
    }
    lines.push(`  - id: n${i}`, `    role: ${pick(ROLES)}`, `    wired_by: ${pick(ROLES)}`, '    prompt: go');
    if (inputs.length) lines.push(`    inputs: { ${inputs.join(', ')} }`);
    lines.push('    output: { schema: { type: object, properties: { v: { type: number }, note: { type: string } }, required: [v] } }');
    if (rand() < 0.25) faults.push({ node: `n${i}` as NodeId, kind: pick(FAULT_KINDS), rate: 1 });
  }
  lines.push(`answer: n${n - 1}`);
  return { yaml: lines.join('\n'), wiringFault, faults };
}

describe('credit property: 1,000 random DAGs with injected faults, run through the real engine', () => {
  it('blame precision and recall are 1.0 on surfaced faults; silent faults are never blamed', async () => {
    const rand = mulberry32(20261129);
    const tools = defaultTools();
    let surfacedInjected = 0;
    let silentInjected = 0;
    let wiringRoots = 0;
    let truePositives = 0;
    let blamed = 0;
    let silentRuns = 0;
    for (let c = 0; c < 1000; c++) {
      const { yaml, wiringFault, faults } = randomCase(rand);
      const { graph } = parseWorkflow(yaml, { tools });
      const injector = new FaultInjector(faults, c);
      const provider = injector.wrapProvider(new ScriptedProvider(() => '{"v": 1, "note": "fine"}'));
      const out = await runWorkflow(graph, { runId: asRunId(`p${c}`), taskKey: String(c), taskInput: {}, seed: c, provider, tools });
      const correct = rand() < 0.5;
      const credit = computeCredit(creditGraphOf(graph), out.events, { correct });

      const nodeOf = new Map(graph.nodes.map((nd) => [nd.id as string, nd]));
      const expected = new Map<string, string>(); // node -> role that must be blamed
      for (const f of injector.injected()) {
        if (SURFACED.includes(f.kind)) { expected.set(f.nodeId, nodeOf.get(f.nodeId)!.role!); surfacedInjected++; } else silentInjected++;
      }
      for (const e of out.events) {
        if (wiringFault.has(e.nodeId) && e.status === 'failed' && e.failureClass === 'wiring') { expected.set(e.nodeId, nodeOf.get(e.nodeId)!.wiredBy); wiringRoots++; }
      }
      const got = new Map(credit.roots.map((r) => [r.nodeId as string, r.blamed as string]));
      blamed += got.size;
      for (const [node, role] of got) if (expected.get(node) === role) truePositives++;
      expect(got, yaml).toEqual(expected);
      for (const f of injector.injected()) if (SILENT.includes(f.kind)) expect(got.has(f.nodeId)).toBe(false);
      if (expected.size === 0) {
        expect(credit.roots).toEqual([]);
        expect(credit.silent).toBe(!correct);
        if (!correct) silentRuns++;
      }
    }
    const precision = truePositives / blamed;
    const recall = truePositives / (surfacedInjected + wiringRoots);
    console.log(`[credit property] surfaced injected ${surfacedInjected}, wiring roots ${wiringRoots}, silent injected ${silentInjected}, blamed ${blamed}, precision ${precision}, recall ${recall}, silent runs ${silentRuns}`);
    expect(precision).toBe(1);
    expect(recall).toBe(1);
    expect(surfacedInjected).toBeGreaterThan(500);
    expect(silentInjected).toBeGreaterThan(200);
    expect(wiringRoots).toBeGreaterThan(50);
  });
});
