import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ReplayProvider } from '../../models/replay/index.ts';
import { scratchDir } from '../../test/fixtures.ts';
import { parseMassDesign } from '../mass/design.ts';
import { FIRST_DESIGNS, massChecks, massFamily } from '../mass/family.ts';
import { oracleTeam } from '../mass/learnDesign.fixture.ts';
import { runMass } from '../mass/run.ts';
import { openStore, type Store } from '../store/index.ts';
import { createLearnDesignDataset } from '../tasks/learnDesign.ts';
import { defaultTools } from '../tools/index.ts';
import { parseWorkflow } from '../workflow/index.ts';
import { replayExperiment } from './replay.ts';
import { storedWorkflowOptions } from './storedWorkflow.ts';

const dir = scratchDir('stored-mass-');
const open: Store[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

describe('a stored MASS step parses and replays with its family\'s own checks', () => {
  it('a learn-design step naming tool_fits_request (a learn-design check, not a MASS_CHECKS one) replays with no model', async () => {
    const family = massFamily('learn-design');
    const parsed = parseMassDesign(FIRST_DESIGNS['learn-design'], { checks: family.checks.names() });
    if (!parsed.ok) throw new Error(parsed.issues[0]!.message);
    const design = { ...parsed.design, agents: parsed.design.agents.map((a) => (a.agent_id === 'picker' ? { ...a, contract: { ...a.contract, checks: ['tool_fits_request'] } } : a)) };
    const task = createLearnDesignDataset().load({ split: 'train', limit: 1 })[0]!;
    const store = openStore(path.join(dir(), 'f.db'));
    open.push(store);
    const models = { models: { default: '/m/sim.gguf' }, roleModels: {}, gpu: false as const };
    // SIMULATED perfect team (a scripted model): it answers right, so the check passes.
    const ws = await runMass(design, task, { provider: oracleTeam(), family, store, tools: defaultTools(), config: { models } }, { experimentId: 'ld-step', version: 1 });
    expect(ws.grade.score).toBe(1);
    const exp = store.getExperiment('ld-step');
    expect(exp.workflowYaml).toContain('tool_fits_request');
    // The MASS checks alone do not know the family's check: the stored text would not parse.
    expect(() => parseWorkflow(exp.workflowYaml, { tools: defaultTools(), checks: massChecks() })).toThrow(/tool_fits_request/);
    const opts = storedWorkflowOptions(exp.config, defaultTools());
    const { graph } = parseWorkflow(exp.workflowYaml, opts);
    const report = await replayExperiment({ store, experimentId: exp.id, graph, provider: new ReplayProvider(store.getExperimentCalls(exp.id)), tools: opts.tools, checks: opts.checks });
    expect(report).toMatchObject({ runs: 1, mismatched: 0, modelsLoaded: 0 });
  });
});
