import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { StudyError, studyCells, trainingUnits } from '../../core/studies/index.ts';
import { getDataset } from '../../core/tasks/index.ts';
import { main } from '../main.ts';
import { loadPlan, planPath } from './study.ts';

const capture = () => {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { stdout: (s: string) => void out.push(s), stderr: (s: string) => void err.push(s), isTTY: false }, out, err };
};

describe('flowlab study: plans', () => {
  it('loads the example plans: workflows, models and zones resolved, missing optional zones skipped', () => {
    const laptop = loadPlan('examples/studies/laptop.yaml', {});
    expect(laptop.plan.conditions.map((c) => c.kind)).toEqual(['single-agent', 'single-agent-tools', 'workflow', 'laptop-rl', 'co-evolution']);
    expect(laptop.plan.models[0]!.model).toBe(path.join(process.env.FLOWLAB_SHARED ? path.resolve(process.env.FLOWLAB_SHARED) : path.resolve('../shared'), 'models/stories260K.gguf'));
    expect(studyCells(laptop.plan, laptop.studyId)).toHaveLength(15);
    expect(trainingUnits(laptop.plan).map((u) => u.key)).toEqual(['rl-picker/s0/stories260K', 'coevolution/s0/stories260K']);
    expect(laptop.skipZones.size).toBe(0);
    const user = loadPlan('examples/studies/gsm8k-mbpp.yaml', { model: '/models/mine.gguf', threads: 2 });
    expect(user.plan.models[0]).toMatchObject({ model: '/models/mine.gguf', threads: 2 });
    expect(user.studyId).not.toBe(loadPlan('examples/studies/gsm8k-mbpp.yaml', {}).studyId);
    // On a build without the DataWright composer or MBPP those zones are skipped, not errors.
    const known = (name: string) => {
      try {
        return Boolean(getDataset(name));
      } catch {
        return false;
      }
    };
    for (const z of user.plan.zones) {
      expect(user.skipZones.has(z.id), z.id).toBe(!known(z.dataset));
      expect(user.notes.some((n) => n.startsWith(`zone ${z.id} skipped: dataset "${z.dataset}" is not in this build`)), z.id).toBe(!known(z.dataset));
    }
    expect(user.skipZones.has('id')).toBe(false);
    // An endpoint is a model, not a path: kept as written from --model and from the plan (it was resolved to <cwd>/openai:http:/...).
    const endpoint = 'openai:http://127.0.0.1:8080/v1#oracle';
    expect(loadPlan('examples/studies/gsm8k-mbpp.yaml', { model: endpoint }).plan.models[0]!.model).toBe(endpoint);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'study-endpoint-'));
    const planFile = path.join(dir, 'plan.yaml');
    writeFileSync(planFile, `name: e\nbaseline: w\nconditions:\n  - { id: w, kind: workflow, workflow: ${path.resolve('examples/learn-design-fixed.yaml')} }\nzones:\n  - { id: a, kind: in-distribution, dataset: learn-design, split: heldout, limit: 2 }\nmodels:\n  - { id: m, model: '${endpoint}' }\n`);
    expect(loadPlan(planFile, {}).plan.models[0]!.model).toBe(endpoint);
    expect(planPath('~/m.gguf', '/p')).toBe(path.join(os.homedir(), 'm.gguf'));
    expect(planPath('m.gguf', '/p')).toBe('/p/m.gguf');
  });

  it('locates unknown datasets, bad splits and untrainable roles in the plan file, and exits 1', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'study-plan-'));
    const file = path.join(dir, 'plan.yaml');
    const wf = path.resolve('examples/learn-design-fixed.yaml');
    writeFileSync(file, `name: bad
baseline: w
train: { dataset: learn-design }
conditions:
  - { id: w, kind: workflow, workflow: ${wf} }
  - { id: rl, kind: laptop-rl, workflow: ${wf}, train: { roles: [nobody], iterations: 1 } }
zones:
  - { id: a, kind: in-distribution, dataset: nope, split: test, limit: 3 }
  - { id: b, kind: out-of-domain, dataset: learn-errand, split: train, limit: 3 }
models:
  - { id: m, model: /m.gguf }
`);
    let err: unknown;
    try {
      loadPlan(file, {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StudyError);
    expect((err as StudyError).issues.map((i) => [i.path, i.line])).toEqual([['zones[0].dataset', 8], ['zones[1].split', 9], ['conditions[1].train.roles', 6]]);
    expect((err as StudyError).issues[1]!.message).toBe('learn-errand has no split "train" (splits: test)');
    const c = capture();
    expect(await main(['study', file, '--db', ':memory:'], c.io)).toBe(1);
    expect(c.err.join('')).toMatch(/plan\.yaml:8:\d+ at zones\[0\]\.dataset: unknown dataset "nope"/);
  });
});
