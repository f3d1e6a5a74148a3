/**
 * The CLI and the lab build a new experiment's spec with one schema (core/jobs/experimentSpec.ts):
 * the lab's `startRun` refuses a field its kind does not use, naming it (before the fix the lab
 * silently ignored `runs` without `inject` and `group` without `kind: rollouts`), and the spec it
 * records is the one `buildExperimentSpec` makes from the same input the CLI hands in.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiError, type StartRunRequest } from '../core/api/index.ts';
import { ExperimentSpecError } from '../core/experiments/index.ts';
import { buildExperimentSpec, type ExperimentInput } from '../core/jobs/index.ts';
import { ScriptedProvider } from '../core/model/index.ts';
import { defaultTools } from '../core/tools/index.ts';
import { parseWorkflow } from '../core/workflow/index.ts';
import { labPerTest, REPO_ROOT, rejectionOf, thrownBy, writeGsm8kTasks } from '../test/fixtures.ts';
import { createLabHost } from './index.ts';

const SINGLE = readFileSync(path.join(REPO_ROOT, 'examples/gsm8k-single.yaml'), 'utf8');

const t = labPerTest('spec', (h) => {
  writeGsm8kTasks(path.join(h.dir, 'data'));
  mkdirSync(path.join(h.dir, 'models'));
  writeFileSync(path.join(h.dir, 'models', 'tiny.gguf'), 'GGUF tiny');
  return createLabHost({
    store: h.store, dbFile: path.join(h.dir, 'lab.db'), modelDir: path.join(h.dir, 'models'), examplesDir: path.join(REPO_ROOT, 'examples'), dataDir: path.join(h.dir, 'data'),
    emit: (e) => h.events.push(e),
    createProvider: async () => new ScriptedProvider(async (req) => (req.jsonSchema ? '{"answer": 4}' : 'think')),
    checkModel: async () => {},
  });
});

const run = (over: Partial<StartRunRequest> = {}): StartRunRequest => ({ workflowText: SINGLE, dataset: 'gsm8k', split: 'test', limit: 2, seed: 1, models: { default: path.join(t.dir, 'models/tiny.gguf') }, ...over });

describe('the lab refuses a field its kind does not use', () => {
  it.each<[string, Partial<StartRunRequest>, string, string]>([
    ['runs without inject', { runs: 4 }, 'runs', 'startRun: runs is not used by a run: it is for a blame evaluation (SIMULATED faults, `inject`)'],
    ['group without kind rollouts', { group: 4 }, 'group', 'startRun: group is not used by a run: it is for rollouts (`kind: rollouts`)'],
    ['temperature on a blame evaluation', { inject: ['solver=wrong@1'], temperature: 0.5 }, 'temperature', 'startRun: temperature is not used by a blame evaluation (SIMULATED faults, `inject`): it is for rollouts (`kind: rollouts`)'],
    ['inject with kind rollouts', { kind: 'rollouts', group: 2, inject: ['solver=wrong@1'] }, 'inject', 'startRun: inject (SIMULATED faults) is for a blame evaluation; rollouts do not take it'],
  ])('%s: BAD_REQUEST naming the field, nothing recorded', async (_what, over, field, message) => {
    const err = await rejectionOf(ApiError, t.api.startRun(run(over)));
    expect([err.code, err.method, err.field, err.message]).toEqual(['BAD_REQUEST', 'startRun', field, message]);
    expect(t.store.listExperiments()).toEqual([]);
    expect(t.events).toEqual([]);
  });

  it('a blame evaluation with runs, and rollouts with their defaults, still start', async () => {
    const blame = await t.api.startRun(run({ inject: ['solver=wrong@1'], runs: 3 }));
    await t.lab.runner.settled(blame.experimentId);
    expect(t.store.listTasks(blame.experimentId)).toHaveLength(3);
    const roll = await t.api.startRun(run({ kind: 'rollouts', group: 2, limit: 1 }));
    await t.lab.runner.settled(roll.experimentId);
    expect(t.store.getExperiment(roll.experimentId).config?.rollouts).toEqual({ group: 2, temperature: 0.8, mode: 'multi-agent', learningRoles: ['solver'] });
  });
});

describe('buildExperimentSpec, the one schema both faces call', () => {
  const { graph } = parseWorkflow(SINGLE, { tools: defaultTools() });
  const models = { models: { default: '/m/tiny.gguf' }, roleModels: {}, gpu: false as const };
  const base = { workflow: { graph, text: SINGLE }, dataset: 'gsm8k', split: 'test', limit: 2, seed: 1, models };

  it('fills the rollouts defaults `flowlab rollouts` documents and drops fields given as undefined', () => {
    const spec = buildExperimentSpec({ kind: 'rollouts', ...base, group: 4, mode: undefined });
    expect(spec).toMatchObject({ kind: 'rollouts', group: 4, temperature: 0.8, mode: 'multi-agent' });
    expect(buildExperimentSpec({ kind: 'run', ...base, cards: undefined })).toEqual({ kind: 'run', ...base });
  });

  it.each<[string, ExperimentInput, string, string, string]>([
    ['an unknown kind', { kind: 'train' as 'run', ...base }, 'BAD_SPEC', 'kind', 'unknown experiment kind "train" (kinds: run, blame-eval, rollouts)'],
    ['a field no kind takes', { kind: 'run', ...base, colour: 'red' }, 'UNUSED_FIELD', 'colour', 'colour is not used by a run: no experiment kind takes it'],
    ['a blame evaluation without faults', { kind: 'blame-eval', ...base, inject: [] }, 'BAD_SPEC', 'inject', 'inject: must name at least one fault'],
    ['a group past 64', { kind: 'rollouts', ...base, group: 65 }, 'BAD_SPEC', 'group', 'group: Too big: expected number to be <=64'],
    ['a model config without roleModels', { kind: 'run', ...base, models: { models: {}, gpu: false } }, 'BAD_SPEC', 'models.roleModels', 'models.roleModels: Invalid input: expected record, received undefined'],
  ])('%s is an ExperimentSpecError naming the field', (_what, input, code, field, message) => {
    const err = thrownBy(ExperimentSpecError, () => buildExperimentSpec(input));
    expect([err.code, err.field, err.message]).toEqual([code, field, message]);
  });
});
