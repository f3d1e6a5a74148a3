import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { labelClassOf } from '../../core/guards/index.ts';
import { StudyError, buildStudyTable, studyCells, studyTableCsv, trainingUnits } from '../../core/studies/index.ts';
import { getDataset } from '../../core/tasks/index.ts';
import { main } from '../main.ts';
import { formatStudyTable, loadPlan, planPath } from './study.ts';

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

describe('flowlab study: the table marks constant policies', () => {
  it('the laptop plan: a best-constant column per zone, every constant cell marked, deltas between constants named', () => {
    const laptop = loadPlan('examples/studies/laptop.yaml', {});
    const cells = studyCells(laptop.plan, laptop.studyId);
    const tasks = (dataset: string, split: string) => getDataset(dataset).load({ split, limit: 48 });
    // What each condition answers: the untrained workflow "math:multiply" to every task, the RL picker "search:facts"
    // (the issue's fresh runs), the single agent the right answer (varied: not constant); the rest did not run.
    const answer: Record<string, ((expected: string) => string) | undefined> = { workflow: () => 'math:multiply', 'rl-picker': () => 'search:facts', single: (e) => e };
    const t = buildStudyTable(laptop.plan, laptop.studyId, cells, (c) => {
      const a = answer[c.condition.id];
      return a ? tasks(c.zone.dataset, c.zone.split).map((task) => ({ taskId: task.id, seed: 0, answer: a(task.expected), expected: task.expected, correct: a(task.expected) === task.expected, score: a(task.expected) === task.expected ? 1 : 0, promptTokens: 1, completionTokens: 1, startedAt: 0, endedAt: 1000 })) : [];
    }, {}, labelClassOf, (z) => (z.dataset === 'learn-design' ? (id: string) => (Number(id.split('/').pop()) % 4 === 3 ? 'new-wording' : 'in-template') : undefined));
    const text = formatStudyTable(t);
    // learn-design heldout 0..47: 12 new-wording tasks (index mod 4 = 3), 36 in-template; the single agent is right on all.
    expect(text).toContain('in-distribution (learn-design/heldout) by what is new, accuracy % (runs): single in-template 100.0 (36), new-wording 100.0 (12); workflow in-template');
    // learn-design heldout 0..47: math:multiply is the label of 10 tasks, the most common (weather:now 8, search:facts 7, ...):
    // best constant 10/48 = 20.8%; the workflow's constant answer scores exactly that, the picker's search:facts 7/48 = 14.6%.
    // learn-design-ood test 0..47: weather:tomorrow 8/48 = 16.7%; learn-errand test 0..47: search:story 9/48 = 18.8%.
    expect(text).toContain('best const % · answers');
    expect(text).toMatch(/workflow \(untrained\)[\s│]+20\.8 \[10\.4, 33\.3\] CONSTANT[\s│]+20\.8 · 1[\s│]+\(baseline\)/);
    expect(text).toMatch(/single agent, no tools[\s│]+100\.0 \[100\.0, 100\.0\][\s│]+20\.8 · 10[\s│]+\+79\.2 \[[-+\d.]+, [-+\d.]+\] p=[\d.e-]+ \(one constant\)/);
    // Paired with the workflow on id: the picker is right on the 7 search:facts tasks, the workflow on the 10 math:multiply ones: (7 - 10)/48 = -6.3 points.
    expect(text).toMatch(/workflow \+ laptop RL \(picker\)[\s│]+14\.6 \[[\d.]+, [\d.]+\] CONSTANT[\s│]+20\.8 · 1[\s│]+-6\.3 \[[-+\d.]+, [-+\d.]+\] p=[\d.]+ \(both constant\)/);
    expect(text).toContain('16.7 · 1');
    expect(text).toContain('18.8 · 1');
    expect(text).toContain(`Constant cells (answers collapsed to one value or to fewer than the zone's classes; their accuracy is a constant policy's):
  workflow/id: CONSTANT "math:multiply" 100.0% of 48 runs
  workflow/ood: CONSTANT "math:multiply" 100.0% of 48 runs
  workflow/domain: CONSTANT "math:multiply" 100.0% of 48 runs
  rl-picker/id: CONSTANT "search:facts" 100.0% of 48 runs`);
    expect(text.match(/CONSTANT "/g)).toHaveLength(6);
    expect(studyTableCsv(t).split('\n').filter((l) => l.includes(',CONSTANT,'))).toHaveLength(6);
  });
});
