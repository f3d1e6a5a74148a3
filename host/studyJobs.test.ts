/**
 * Study jobs through the lab API and host without a model (the SIMULATED scripted provider of
 * core/mass/rsi.fixture.ts): a request mapped onto the plan `flowlab study` resolves (the same
 * study id, `--model` / `--threads` applied), a pasted plan anchored in examples/studies, a bad
 * plan refused with its location, a workflow outside a confining lab's folders refused, and a
 * 1-cell study and its dry run started, their progress pushed and the cells stored.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiError, isLabEvent, type StudyJobEvent } from '../core/api/index.ts';
import { scripted } from '../core/mass/rsi.fixture.ts';
import { fakeModelFile, labHostOptions, labPerTest, rejectionOf, relab, REPO_ROOT, type LabTest } from '../test/fixtures.ts';
import { loadPlan } from '../cli/commands/study.ts';
import { createLabHost } from './index.ts';
import { cellCompleted, studyPlanSource, PASTED_PLAN_NAME } from './studyJobs.ts';

const PLANS = path.join(REPO_ROOT, 'examples', 'studies');
let model: string;
/** While set, every model call waits for it (a study held mid-cell). */
let gate: Promise<void> | null = null;

const tinyPlan = (file: string, limit = 2) => `name: tiny
baseline: single
conditions:
  - { id: single, kind: single-agent, workflow: single-agent.yaml }
zones:
  - { id: id, kind: in-distribution, dataset: learn-design, split: heldout, limit: ${limit} }
seeds: [0]
models:
  - { id: m, model: ${file}, threads: 2 }
`;

/** A lab over the test's folder whose provider waits for `gate`; `confine`: no model folders beyond its own. */
function labOf(h: LabTest, confine: boolean) {
  return createLabHost({
    ...labHostOptions(h),
    createProvider: async (cfg) => {
      const inner = scripted(cfg.models['default'] ?? '');
      return { name: inner.name, modelsLoaded: () => 0, dispose: () => inner.dispose(), generate: async (r) => (await gate, inner.generate(r)) };
    },
    llamaBinary: () => ({ ok: true }) as never,
    ...(confine && { modelRoots: { folders: [] } }),
  });
}

const t = labPerTest('lab-study', (h) => {
  model = fakeModelFile(h.dir);
  gate = null;
  return labOf(h, false);
});

const study = (id: string) => t.events.filter((e): e is StudyJobEvent => (e.type === 'studyJob' || e.type === 'studyProgress') && e.studyId === id);
const statuses = (id: string) => study(id).flatMap((e) => (e.type === 'studyJob' ? [e.status] : []));

describe('startStudy: the request mapped onto the plan flowlab study resolves', () => {
  it('gives a shipped plan the same study id, models and threads as the CLI, --model and --threads included', () => {
    const viaLab = t.lab.runner.studies.resolve({ planName: 'laptop.yaml', model, threads: 2 });
    const viaCli = loadPlan(path.join(PLANS, 'laptop.yaml'), { model, threads: 2 });
    expect(viaLab.studyId).toBe(viaCli.studyId);
    expect(viaLab.plan.models.map((m) => [m.model, m.threads])).toEqual([[model, 2]]);
    expect(viaLab.plan.conditions.map((c) => c.workflow)).toEqual(viaCli.plan.conditions.map((c) => c.workflow));
    expect(t.lab.runner.studies.resolve({ planName: 'laptop.yaml' }).studyId).toBe(loadPlan(path.join(PLANS, 'laptop.yaml'), {}).studyId);
  });

  it('anchors a pasted plan in examples/studies and reads a shipped one by name', () => {
    expect(studyPlanSource({ planText: 'name: x\n' }, PLANS)).toEqual({ text: 'name: x\n', file: path.join(PLANS, PASTED_PLAN_NAME), field: 'planText' });
    expect(studyPlanSource({ planName: 'laptop.yaml' }, PLANS).text).toBe(readFileSync(path.join(PLANS, 'laptop.yaml'), 'utf8'));
    const pasted = t.lab.runner.studies.resolve({ planText: tinyPlan(model) });
    expect(pasted.workflows['single']!.file).toBe(path.join(PLANS, 'single-agent.yaml'));
  });

  it('counts a cell as done only with all its runs (a budget-stopped cell counted: 4 / 15 beside the summary\'s 3/15)', () => {
    const cell = (phase: 'finished' | 'skipped' | 'run', done: number) => ({ type: 'cell' as const, cell: 'c', experimentId: 'e', phase, done, total: 4 });
    expect(cellCompleted(cell('finished', 4))).toBe(true);
    expect(cellCompleted(cell('skipped', 4))).toBe(true);
    expect(cellCompleted(cell('finished', 3))).toBe(false);
    expect(cellCompleted(cell('run', 4))).toBe(false);
  });

  it('lists the shipped plans, and not the workflows beside them (they were listed as plans)', async () => {
    const plans = await t.api.listStudyPlans();
    expect(plans.map((p) => p.name)).toEqual(['gsm8k-mbpp.yaml', 'laptop.yaml']);
    expect(plans.find((p) => p.name === 'laptop.yaml')!.text).toMatch(/^name: laptop$/m);
  });

  it('refuses a bad plan with its location, an unknown plan, both or neither plan field', async () => {
    const bad = await rejectionOf(ApiError, t.api.startStudy({ planText: tinyPlan(model).replace('split: heldout', 'split: nope') }));
    expect([bad.code, bad.field]).toEqual(['BAD_REQUEST', 'planText']);
    expect(bad.message).toMatch(/pasted-plan\.yaml:6:\d+.*learn-design has no split "nope"/s);
    const missing = await rejectionOf(ApiError, t.api.startStudy({ planName: 'nope.yaml' }));
    expect([missing.code, missing.field]).toEqual(['NOT_FOUND', 'planName']);
    const both = await rejectionOf(ApiError, t.api.startStudy({ planName: 'laptop.yaml', planText: 'name: x\n' }));
    expect([both.code, both.field]).toEqual(['BAD_REQUEST', 'planName']);
    expect(both.message).toMatch(/exactly one of planName/);
    const neither = await rejectionOf(ApiError, t.api.startStudy({ dryRun: true }));
    expect(neither.code).toBe('BAD_REQUEST');
    const path_ = await rejectionOf(ApiError, t.api.startStudy({ planName: '../learn-design-fixed.yaml' }));
    expect([path_.code, path_.field]).toEqual(['BAD_REQUEST', 'planName']);
    expect(t.events).toEqual([]);
  });

  it('a confining lab refuses a plan model outside its folders and a workflow outside examples and workflows', async () => {
    await t.lab.dispose();
    relab(t, labOf(t, true));
    const outside = await rejectionOf(ApiError, t.api.startStudy({ planText: tinyPlan('/elsewhere/m.gguf') }));
    expect([outside.code, outside.field]).toEqual(['FORBIDDEN', 'planText']);
    const wf = path.join(t.dir, 'mine.yaml');
    writeFileSync(wf, readFileSync(path.join(PLANS, 'single-agent.yaml')));
    const wfOut = await rejectionOf(ApiError, t.api.startStudy({ planText: tinyPlan(model).replace('workflow: single-agent.yaml', `workflow: ${wf}`) }));
    expect([wfOut.code, wfOut.field]).toEqual(['FORBIDDEN', 'planText']);
    expect(wfOut.message).toMatch(/conditions\[0\]\.workflow: .*mine\.yaml is outside/);
  });
});

describe('startStudy: a 1-cell study from the lab (SIMULATED provider)', () => {
  it('runs the cell, pushes its progress, stores the study and refuses a second start while it runs', async () => {
    const { studyId } = await t.api.startStudy({ planText: tinyPlan(model), threads: 1 });
    const busy = await rejectionOf(ApiError, t.api.startStudy({ planText: tinyPlan(model), threads: 1 }));
    expect(busy.code).toBe('BUSY');
    await t.lab.runner.studies.settled(studyId);
    expect(statuses(studyId)).toEqual(['running', 'completed']);
    expect(study(studyId).every((e) => isLabEvent(e))).toBe(true);
    const last = study(studyId).filter((e) => e.type === 'studyProgress' && e.total !== undefined).at(-1);
    expect(last).toMatchObject({ done: 1, total: 1 });
    const detail = t.api.getStudy({ studyId });
    expect(detail.summary).toMatchObject({ cells: 1, cellsDone: 1, runsDone: 2, runsPlanned: 2 });
    expect(readFileSync(path.join(t.dir, 'flowlab-studies', studyId, 'table.csv'), 'utf8')).toMatch(/single/);
    // The same request again resumes: nothing left to run.
    const again = await t.api.startStudy({ planText: tinyPlan(model), threads: 1 });
    expect(again.studyId).toBe(studyId);
    await t.lab.runner.studies.settled(studyId);
    expect(statuses(studyId)).toEqual(['running', 'completed', 'running', 'completed']);
  });

  it('a dry run closes with the estimate of what is left and runs no cell', async () => {
    const { studyId } = await t.api.startStudy({ planText: tinyPlan(model), dryRun: true, calibrationTasks: 1 });
    await t.lab.runner.studies.settled(studyId);
    const closing = study(studyId).at(-1)!;
    expect(closing).toMatchObject({ type: 'studyJob', status: 'completed', dryRun: true, estimate: { cells: 1, units: 0, runs: 2 } });
    expect(closing.type === 'studyJob' && closing.estimate!.seconds).toBeGreaterThan(0);
    expect(t.api.getStudy({ studyId }).summary).toMatchObject({ cellsDone: 0, runsDone: 0 });
    expect(t.api.getStudy({ studyId }).estimate).toMatchObject({ runs: 2 });
  });

  it('a dry run says each calibration run as it is stored (the window showed only "calibrating…" for over 90 s)', async () => {
    const { studyId } = await t.api.startStudy({ planText: tinyPlan(model), dryRun: true, calibrationTasks: 2 });
    await t.lab.runner.studies.settled(studyId);
    const lines = study(studyId).flatMap((e) => (e.type === 'studyProgress' ? [e.line.replace(/after \d+\.\d s$/, 'after S s')] : []));
    expect(lines.slice(0, 3)).toEqual([
      'calibrating single on m: 2 tasks of learn-design/heldout',
      'calibrating single on m: run 1 of 2 done after S s',
      'calibrating single on m: run 2 of 2 done after S s',
    ]);
    expect(lines.at(-1)).toMatch(/^Dry run: 1 cells and 0 train loops left, 2 runs/);
  });

  it('cancels a running study at its next step; the same request resumes it to the end', async () => {
    let release!: () => void;
    gate = new Promise((r) => (release = r));
    const { studyId } = await t.api.startStudy({ planText: tinyPlan(model), threads: 1 });
    await expect.poll(() => statuses(studyId)).toEqual(['running']);
    const cancelled = t.api.cancelStudy({ studyId });
    release();
    await expect(cancelled).resolves.toEqual({ cancelled: true });
    expect(statuses(studyId)).toEqual(['running', 'cancelled']);
    await expect(t.api.cancelStudy({ studyId })).resolves.toEqual({ cancelled: false });
    expect(t.api.getStudy({ studyId }).summary.runsDone).toBeLessThan(2);
    gate = null;
    await t.api.startStudy({ planText: tinyPlan(model), threads: 1 });
    await t.lab.runner.studies.settled(studyId);
    expect(statuses(studyId)).toEqual(['running', 'cancelled', 'running', 'completed']);
    expect(t.api.getStudy({ studyId }).summary).toMatchObject({ cellsDone: 1, runsDone: 2 });
  });
});
