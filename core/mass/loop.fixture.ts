/**
 * A scripted MASS loop for tests (SIMULATED: no model; the scripts below stand in for the team,
 * the self-judge and the optimizer). Run as a script (`node --import tsx core/mass/loop.fixture.ts
 * <db> [delayMs]`) it evolves into that store file, so a test can SIGKILL it mid-loop.
 *
 * The judge prefers the side whose evidence shows the higher preference mark `P<n>` (the
 * baseline shows none: 0). The optimizer proposes v(k+1) with mark PREF[k+1] while it has marks
 * left, then a design calling an agent (reviewer) it does not define (rejected by the validator).
 */
import { ScriptedProvider } from '../model/scripted.ts';
import { openStore } from '../store/index.ts';
import { createLearnDataset } from '../tasks/learn.ts';
import { parseMassDesign } from './design.ts';
import { massFamily } from './family.ts';
import { evolve, type EvolveSpec } from './inner.ts';
import type { MassDesign } from './types.ts';

/** Preference mark of version k: v0 beats the baseline; v1 beats it but loses arbitration; v2 wins both; v3 loses to the baseline. */
export const PREF = [2, 1, 5, -1];

export const family = massFamily('learn-tool');
export const catalogue = { checks: family.checks.names() };
export const tasks = createLearnDataset('learn-tool', ['tool']).load({ split: 'train', limit: 1 });

export function designWith(mark: number): MassDesign {
  const r = parseMassDesign({ agents: [{ agent_id: 'picker', role: `Picker P${mark}`, instruction: 'Name the tool.', contract: { fields: ['tool'], artefacts: [], checks: ['names_a_tool'] } }], hops: ['picker'] }, catalogue);
  if (!r.ok) throw new Error(r.issues[0]!.message);
  return r.design;
}

export function spec(evolutionId: string, iterations = 6, rule: EvolveSpec['rule'] = 'baseline'): EvolveSpec {
  return { evolutionId, family, tasks, firstDesign: designWith(PREF[0]!), iterations, rule, seed: 7, catalogue };
}

const mark = (s: string) => Number(/P(-?\d+)/.exec(s)?.[1] ?? 0);

/** The scripted team, judge and optimizer; `delayMs` slows every call (so a kill lands mid-loop). */
export function scripted(delayMs = 0): ScriptedProvider {
  return new ScriptedProvider(async (r) => {
    if (delayMs) await new Promise((res) => setTimeout(res, delayMs));
    const node = r.key.nodeId;
    if (node === 'judge') {
      const a = mark(/\nA: (.*)/.exec(r.prompt)?.[1] ?? '');
      const b = mark(/\nB: (.*)/.exec(r.prompt)?.[1] ?? '');
      return JSON.stringify(a === b ? { winner: 'tie', rationale: 'Both are the same.' } : { winner: a > b ? 'A' : 'B', rationale: `${a > b ? 'B' : 'A'} is weak: its pick is not checked.` });
    }
    if (node === 'optimizer') {
      const from = Number(/design v(\d+) ->/.exec(r.prompt)![1]);
      const next = PREF[from + 1];
      const design = next === undefined
        ? { agents: [{ agent_id: 'picker', role: 'Picker', instruction: 'Name it.', contract: { fields: ['tool'], artefacts: [], checks: [] } }], hops: [{ agent_id: 'reviewer', reads: [] }] }
        : { agents: [{ agent_id: 'picker', role: `Picker P${next}`, instruction: 'Name the tool.', contract: { fields: ['tool'], artefacts: [], checks: ['names_a_tool'] } }], hops: [{ agent_id: 'picker', reads: [] }] };
      return JSON.stringify({ improved_multi_agent_design: design, changes_from_previous: 'new mark', why_it_should_improve: 'marks', evidence_used: 'history', expected_impact: 'wins', verification_checks: 'judge' });
    }
    if (node === 'orchestrator') return r.jsonSchema ? '{"delegate":"no","ask":""}' : 'call the picker';
    if (node.startsWith('h')) return JSON.stringify({ tool: `search P${mark(r.system ?? '')}` });
    return '"search"';
  });
}

if (process.argv[1]?.endsWith('loop.fixture.ts')) {
  const store = openStore(process.argv[2]!);
  await evolve(spec('evo-kill'), { store, provider: scripted(Number(process.argv[3] ?? 0)), tools: (await import('../tools/index.ts')).defaultTools() });
  store.close();
}
