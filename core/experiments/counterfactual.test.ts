import { describe, expect, it } from 'vitest';
import { ReplayProvider } from '../../models/replay/index.ts';
import * as designed from './designedBlameEval.fixture.ts';
import { ScriptedProvider } from '../model/scripted.ts';
import { getDataset } from '../tasks/registry.ts';
import { defaultTools } from '../tools/index.ts';
import { parseWorkflow } from '../workflow/index.ts';
import { counterfactualBlame, scoreCounterfactual, type CounterfactualRun } from './counterfactual.ts';
import type { ForkDeps } from './fork.ts';
import { nodeOracle } from './oracle.ts';
import { evaluationsOf, stepwiseRows } from './counterfactualExport.ts';
import { startExperiment } from './service.ts';
import { formatCounterfactual } from '../../cli/formatCounterfactual.ts';

describe('scoreCounterfactual (pure, figures by hand)', () => {
  const t = (nodeId: string, role: string, flipped: boolean | null, over: Partial<CounterfactualRun['trials'][number]> = {}) => ({ nodeId, attempt: 1, role, blamed: false, answerNode: false, flipped, ...over });
  const runs: CounterfactualRun[] = [
    // A solver root whose fix flips the run: structure and counterfactual agree.
    { runId: 'e/0', taskIndex: 0, silent: false, roots: [{ nodeId: 'solve', role: 'solver', failureClass: 'execution', at: 'solve' }], injected: [], trials: [t('solve', 'solver', true, { blamed: true })], cause: { nodeId: 'solve', role: 'solver', answerNode: false } },
    // A solver root whose fix does not flip it, but the planner's does: structure missed it.
    { runId: 'e/1', taskIndex: 1, silent: false, roots: [{ nodeId: 'solve', role: 'solver', failureClass: 'execution', at: 'solve' }], injected: [], trials: [t('plan', 'planner', true), t('solve', 'solver', false, { blamed: true })], cause: { nodeId: 'plan', role: 'planner', answerNode: false } },
    // A silent run located at the planner; a silent run only the answer node's oracle flips; a silent run nothing flips.
    { runId: 'e/2', taskIndex: 2, silent: true, roots: [], injected: [], trials: [t('plan', 'planner', true), t('answer', 'answerer', true, { answerNode: true })], cause: { nodeId: 'plan', role: 'planner', answerNode: false } },
    { runId: 'e/3', taskIndex: 3, silent: true, roots: [], injected: [], trials: [t('plan', 'planner', false), t('answer', 'answerer', true, { answerNode: true })], cause: { nodeId: 'answer', role: 'answerer', answerNode: true } },
    { runId: 'e/4', taskIndex: 4, silent: true, roots: [], injected: [{ nodeId: 'plan', attempt: 1, kind: 'wrong' }], trials: [t('plan', 'planner', false, { injected: 'wrong' }), t('x', 'planner', null, { why: 'no oracle' })] },
  ];
  const r = scoreCounterfactual(runs, { experimentId: 'e', intervene: 'each-node', with: 'oracle' });
  it('causal precision per role and class, what structure missed, silent runs located, agreement, injected flips', () => {
    expect(r.byRoleClass['solver/execution']).toEqual({ runs: 2, tried: 2, flipped: 1, rate: 0.5, otherFlipped: 1 });
    expect(r.silent).toEqual({ runs: 3, located: 1, fraction: 1 / 3, answerOnly: 1, byRole: { planner: 1 } });
    expect(r.agreement).toEqual({ solver: { solver: 1, planner: 1 }, '(silent)': { planner: 1, '(answer node)': 1, '(none)': 1 } });
    expect(r.agreementRate).toBe(2 / 5); // e/0 (solver = solver) and e/4 (silent, nothing flips)
    expect(r.injected).toEqual({ tried: 1, flipped: 0, rate: 0, latent: 0, natural: 0, byRole: { planner: { tried: 1, flipped: 0, rate: 0 } } });
    expect([r.forks, r.untried]).toEqual([8, 1]);
  });

  it('exports evaluation results per forked node run and TRL stepwise rows (the flipping step labelled false)', () => {
    expect(evaluationsOf(runs[1]!)).toEqual([
      { nodeId: 'plan', attempt: 1, name: 'flowlab.counterfactual', score: 1, label: 'causal', explanation: 'fix at plan#1 flips the run to success' },
      { nodeId: 'solve', attempt: 1, name: 'flowlab.counterfactual', score: 0, label: 'not_causal', explanation: 'fix at solve#1 leaves the run wrong (structurally blamed)' },
    ]);
    const ev = (nodeId: string, seq: number, output: unknown, status = 'ok') => ({ nodeId, attempt: 1, seq, output, status }) as never;
    const rows = stepwiseRows(r, () => [ev('plan', 0, 'add'), ev('solve', 1, undefined, 'failed'), ev('answer', 2, { answer: 6 })], (id) => `task of ${id}`);
    // e/4 has no flipping fix: left out.
    expect(rows.map((x) => x.runId)).toEqual(['e/0', 'e/1', 'e/2', 'e/3']);
    expect(rows[1]).toEqual({ prompt: 'task of e/1', completions: ['plan: add', 'solve: (failed: failed)', 'answer: {"answer":6}'], labels: [false, true, true], runId: 'e/1' });
    expect(rows[3]!.labels).toEqual([true, true, false]);
  });
});

describe('nodeOracle', () => {
  it('knows the learn-design design, the skill argument and the answer; gsm8k expressions and answers', () => {
    const tools = defaultTools();
    const wf = parseWorkflow(require('node:fs').readFileSync('examples/designer-team.yaml', 'utf8'), { tools }).graph;
    const design = wf.nodes.find((n) => n.id === 'design')!;
    expect(nodeOracle({ dataset: 'learn-design', expected: 'weather:tomorrow', node: design, graph: wf })).toBe('{"steps":[{"id":"a","skill":"day_arg","role":"executor","inputs":{"request":"task.request"}}]}');
    expect(nodeOracle({ dataset: 'learn-design', expected: 'math:add', node: wf.nodes.find((n) => n.id === 'call')!, graph: wf })).toBe('math:add');
    const team = parseWorkflow(require('node:fs').readFileSync('examples/gsm8k-team.yaml', 'utf8'), { tools }).graph;
    const node = (id: string) => team.nodes.find((n) => n.id === id)!;
    expect(nodeOracle({ dataset: 'gsm8k', expected: '18', node: node('solve'), graph: team })).toBe('{"expression":"18"}');
    expect(nodeOracle({ dataset: 'gsm8k', expected: '1,200', node: node('answer'), graph: team })).toBe('{"answer":1200}');
    expect(nodeOracle({ dataset: 'gsm8k', expected: '18', node: node('plan'), graph: team })).toBeUndefined();
    expect(getDataset('learn-design').name).toBe('learn-design');
  });
});

describe('counterfactualBlame on a blame evaluation with SIMULATED faults in two roles (designer, executor)', () => {
  it('removing the injected fault flips 100% of the single-fault runs', async () => {
    const { store, deps, spec } = designed.designedBlameEval();
    const handle = await startExperiment(spec, deps);
    const outcome = await handle.done;
    expect(outcome.status).toBe('completed');
    const forkDeps: ForkDeps = { store, tools: designed.tools as ForkDeps['tools'], models: deps.models, datasets: deps.datasets, replay: (calls, o) => new ReplayProvider(calls, o) };
    const report = await counterfactualBlame({ experimentId: outcome.experimentId, intervene: { kind: 'blamed' }, with: { kind: 'oracle' } }, forkDeps);
    const failed = store.listRuns(outcome.experimentId).filter((r) => !r.correct).length;
    expect(report.runs).toBe(failed);
    expect(report.injected.tried).toBeGreaterThan(5);
    expect(report.injected.rate).toBe(1);
    expect(Object.keys(report.injected.byRole).sort()).toEqual(['designer', 'executor']);
    for (const c of Object.values(report.injected.byRole)) expect(c.rate).toBe(1);
    // Faults planned below a failed node show up once the fork gets past it: those runs are not single-fault runs.
    expect(report.injected.latent).toBeGreaterThan(0);
    // A design fault's blame is fixed at the design node, where the fault was put.
    expect(report.byRoleClass['designer/wiring']?.tried).toBe(report.byRoleClass['designer/wiring']?.runs);
    expect(report.verdicts.filter((v) => v.trials.some((t) => t.injected && t.faultsAfter === 0 && !t.flipped))).toEqual([]);
    console.log(formatCounterfactual(report, { simulated: true }));
    console.log(`[counterfactual] ${report.runs} failed runs, ${report.forks} forks; single-fault runs flipped ${report.injected.flipped}/${report.injected.tried} (latent second fault: ${report.injected.latent}); by role ${JSON.stringify(report.injected.byRole)}; agreement ${JSON.stringify(report.agreement)}`);
    store.close();
  }, 60_000);
});
