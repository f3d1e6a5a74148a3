/**
 * Studies: plan validation with located errors, cells and ids, the table's statistics on
 * hand-computed data, the dry run's arithmetic, CSV and HTML, and a resumed study that runs
 * nothing twice (scripted provider, toy dataset, in-memory store).
 */
import { describe, expect, it } from 'vitest';
import { openStore } from '../store/index.ts';
import { studyCells, studyIdOf, trainingUnits } from './cells.ts';
import { estimateStudy, formatSeconds, type StudySpeeds } from './estimate.ts';
import { studyReportHtml } from './html.ts';
import { parseStudyPlan, StudyError } from './plan.ts';
import { inContext, runStudy } from './run.ts';
import { TOY_PLAN, toyStudy } from './study.fixture.ts';
import { accuracyText, buildStudyTable, deltaText, guardText, noveltyText, studyTableCsv, studyTimingCsv, type StudyRun } from './table.ts';

const PLAN = TOY_PLAN;

function issuesOf(text: string) {
  try {
    parseStudyPlan(text, 'plan.yaml');
  } catch (err) {
    expect(err).toBeInstanceOf(StudyError);
    expect((err as StudyError).code).toBe('BAD_PLAN');
    return (err as StudyError).issues;
  }
  throw new Error('the plan was accepted');
}

describe('study plans', () => {
  it('fills defaults', () => {
    const p = parseStudyPlan(PLAN);
    expect(p.seeds).toEqual([0]);
    expect(p.bootstrap).toEqual({ resamples: 10_000, seed: 0 });
    expect(p.zones[1]).toMatchObject({ offset: 4, optional: false });
  });

  it('locates schema errors by line, column and path', () => {
    const bad = PLAN.replace('limit: 2, offset: 4', 'limit: -2, offset: 4').replace('threads: 1', 'threads: 1, gpu: yes');
    expect(issuesOf(bad)).toEqual([
      { path: 'zones[1].limit', message: 'must be at least 1', line: 8, column: 71 },
      { path: 'models[0]', message: 'unknown field(s): gpu', line: 10, column: 5 },
    ]);
    expect(issuesOf(PLAN.replace('kind: out-of-domain', 'kind: elsewhere'))[0]).toMatchObject({ path: 'zones[1].kind', line: 8 });
    expect(issuesOf('name: a\nname: b\n')[0]).toMatchObject({ path: '', line: 2, message: expect.stringMatching(/unique/) });
  });

  it('checks the cross-field rules', () => {
    expect(issuesOf(PLAN.replace('baseline: base', 'baseline: nope'))).toEqual([{ path: 'baseline', message: 'names "nope", which is not a condition (conditions: base, better)', line: 2, column: 11 }]);
    expect(issuesOf(PLAN.replace('id: better', 'id: base')).map((i) => i.path)).toEqual(['conditions[1].id']);
    const rl = PLAN.replace('kind: workflow, workflow: b.yaml', 'kind: co-evolution, workflow: b.yaml, train: { roles: [p], iterations: 2 }');
    expect(issuesOf(rl).map((i) => `${i.path}: ${i.message}`)).toEqual(['conditions[1].train.roles: co-evolution trains at least two roles', 'train: condition "better" trains, so the plan needs "train: {dataset, split}"']);
    expect(issuesOf(PLAN.replace('kind: workflow, workflow: b.yaml', 'kind: laptop-rl, workflow: b.yaml')).map((i) => i.path)).toEqual(['conditions[1].train']);
  });

  it('expands cells and training units with ids derived from the study id', () => {
    const p = parseStudyPlan(PLAN.replace('baseline: base', 'baseline: base\nseeds: [1, 2]\ntrain: { dataset: toy }').replace('kind: workflow, workflow: b.yaml', 'kind: laptop-rl, workflow: b.yaml, train: { roles: [s], iterations: 3 }'));
    const id = studyIdOf(p);
    expect(id).toMatch(/^st-toy-[0-9a-f]{8}$/);
    expect(studyIdOf(p)).toBe(id);
    expect(studyIdOf(p, 'other model')).not.toBe(id);
    const cells = studyCells(p, id);
    expect(cells.map((c) => c.key)).toEqual(['base/id/s1/m', 'base/far/s1/m', 'better/id/s1/m', 'better/far/s1/m', 'base/id/s2/m', 'base/far/s2/m', 'better/id/s2/m', 'better/far/s2/m']);
    expect(cells[2]).toMatchObject({ experimentId: `${id}.better.id.s1.m`, unitKey: 'better/s1/m' });
    expect(trainingUnits(p).map((u) => u.key)).toEqual(['better/s1/m', 'better/s2/m']);
    expect(studyCells(p, id, new Set(['far']))).toHaveLength(4);
  });
});

const run = (taskId: string, correct: boolean, seed = 0, tokens = 10, ms = 500): StudyRun => ({ taskId, seed, score: correct ? 1 : 0, correct, promptTokens: tokens - 2, completionTokens: 2, startedAt: 0, endedAt: ms });

describe('the study table', () => {
  const plan = parseStudyPlan(PLAN);
  const cells = studyCells(plan, 'st');
  it('gives accuracy with a percentile bootstrap interval and the paired delta against the baseline', () => {
    const runs: Record<string, StudyRun[]> = {
      'base/id/s0/m': [run('t0', false), run('t1', false), run('t2', true), run('t3', false)],
      'better/id/s0/m': [run('t0', true), run('t1', true), run('t2', true), run('t3', true, 0, 20, 1500)],
      'base/far/s0/m': [run('t4', true), run('t5', true)],
      'better/far/s0/m': [run('t4', true), run('t5', true)],
    };
    const t = buildStudyTable(plan, 'st', cells, (c) => runs[c.key] ?? []);
    const e = (c: string, z: string) => t.entries.find((x) => x.condition === c && x.zone === z)!;
    // base/id: 1 of 4 correct. With n = 4, a resampled mean is k/4 with k ~ Binomial(4, 1/4):
    // P(k = 0) = 0.316 > 0.025, so the 2.5% quantile is 0; P(k <= 2) = 0.949 < 0.975 <= P(k <= 3), so the 97.5% quantile is 0.75.
    expect(e('base', 'id').accuracy).toMatchObject({ mean: 0.25, low: 0, high: 0.75 });
    // every run right: every resample is 1.
    expect(e('better', 'id').accuracy).toMatchObject({ mean: 1, low: 1, high: 1 });
    // paired differences 1, 1, 0, 1: delta 0.75; sign test 3 positive, 0 negative, 1 tie: p = 2 * (1/2)^3 = 0.25.
    expect(e('better', 'id').delta).toMatchObject({ pairs: 4, delta: 0.75, signTest: { positive: 3, negative: 0, ties: 1, p: 0.25 } });
    // resampled mean differences are k/4 with k ~ Binomial(4, 3/4): 2.5% quantile 0.25 (P(k <= 0) = 0.004, P(k <= 1) = 0.051), 97.5% quantile 1.
    expect(e('better', 'id').delta!.ci).toMatchObject({ low: 0.25, high: 1 });
    expect(e('better', 'far').delta).toMatchObject({ pairs: 2, delta: 0, signTest: { ties: 2, p: 1 } });
    expect(e('base', 'id').delta).toBeUndefined();
    expect(e('better', 'id')).toMatchObject({ tokensPerTask: 12.5, secondsPerTask: 0.75, runs: 4, planned: 4 });
    expect(accuracyText(e('base', 'id'))).toBe('25.0 [0.0, 75.0]');
    expect(deltaText(e('better', 'id').delta)).toBe('+75.0 [+25.0, +100.0] p=0.250 (both constant)');
    const csv = studyTableCsv(t).split('\n');
    expect(csv[0]).toBe('study,model,condition,condition_kind,zone,zone_kind,dataset,split,runs,planned,accuracy,ci_low,ci_high,score,best_constant,best_constant_answer,distinct_answers,classes,constant,constant_answer,constant_share,delta,delta_guard,delta_ci_low,delta_ci_high,sign_positive,sign_negative,sign_ties,p_sign,pairs,tokens_per_task,experiments,in_template_runs,in_template_accuracy,in_template_constant,new_wording_runs,new_wording_accuracy,new_wording_constant');
    // These runs carry no answer or label: one answer value "(none)" over 4 runs is CONSTANT at share 1, and so is the baseline: both constant.
    expect(csv[3]).toBe('st,m,better,workflow,id,in-distribution,toy,test,4,4,1,1,1,1,,,1,,CONSTANT,(none),1,0.75,both constant,0.25,1,3,0,1,0.25,4,12.5,st.better.id.s0.m,,,,,,');
    // Wall-clock seconds live apart, so table.csv is a function of the inputs alone.
    expect(studyTimingCsv(t).split('\n').slice(0, 1)).toEqual(['study,model,condition,zone,seconds_per_task']);
    expect(studyTimingCsv(t).split('\n')[3]).toBe('st,m,better,id,0.75');
    const html = studyReportHtml(t, ['estimate 10 s']);
    expect(html).toContain('<svg');
    expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
    expect(html).toContain('+75.0 [+25.0, +100.0] p=0.250 (both constant)');
  });

  it('carries the best constant policy and the distinct answers of every entry, and marks constant cells and deltas between constants', () => {
    const ans = (taskId: string, answer: string, expected: string): StudyRun => ({ ...run(taskId, answer === expected), answer, expected });
    // Labels of zone id: a, a, a, b (best constant: a, 3/4). base answers a to everything: CONSTANT, accuracy 3/4 = the best constant.
    // better answers a, b, a, b: 2 distinct answers = 2 classes (labels repeat: 2 distinct <= 4/2), not constant; right on t0, t2, t3.
    const runs: Record<string, StudyRun[]> = {
      'base/id/s0/m': [ans('t0', 'a', 'a'), ans('t1', 'a', 'a'), ans('t2', 'a', 'a'), ans('t3', 'a', 'b')],
      'better/id/s0/m': [ans('t0', 'a', 'a'), ans('t1', 'b', 'a'), ans('t2', 'a', 'a'), ans('t3', 'b', 'b')],
    };
    const t = buildStudyTable(plan, 'st', cells, (c) => runs[c.key] ?? []);
    const e = (c: string) => t.entries.find((x) => x.condition === c && x.zone === 'id')!;
    expect(e('base').guard).toMatchObject({ bestConstant: { answer: 'a', accuracy: 0.75 }, distinctAnswers: 1, classes: 2, constant: { reason: 'one-answer', answer: 'a', share: 1 } });
    expect(e('better').guard).toMatchObject({ bestConstant: { answer: 'a', accuracy: 0.75 }, distinctAnswers: 2, classes: 2 });
    expect(e('better').guard.constant).toBeUndefined();
    expect(guardText(e('base'))).toBe('const 75.0 · 1 ans · CONSTANT "a" 100.0%');
    expect(guardText(e('better'))).toBe('const 75.0 · 2 ans');
    // paired differences 0, -1, 0, +1: delta 0; one side (the baseline) is constant.
    expect(e('better').delta).toMatchObject({ pairs: 4, delta: 0, guard: 'one constant' });
    expect(studyTableCsv(t).split('\n')[1]).toContain(',0.75,a,1,2,CONSTANT,a,1,');
    expect(studyReportHtml(t)).toContain('<td class="constant">75.0');
  });

  it('splits a zone\'s accuracy into in-template and new-wording in the CSV and the HTML report when its split has both', () => {
    const ans = (taskId: string, answer: string, expected: string): StudyRun => ({ ...run(taskId, answer === expected), answer, expected });
    // Zone id: t0, t1 reuse training templates (in-template), t2, t3 are new wordings; zone far has no novelty.
    const noveltyOf = (z: { id: string }) => (z.id === 'id' ? (taskId: string) => (taskId === 't2' || taskId === 't3' ? 'new-wording' : 'in-template') : undefined);
    const runs: Record<string, StudyRun[]> = {
      // base answers a to everything: in-template t0 a/a, t1 a/a -> 2/2, CONSTANT; new-wording t2 a/a, t3 a/b -> 1/2, CONSTANT.
      'base/id/s0/m': [ans('t0', 'a', 'a'), ans('t1', 'a', 'a'), ans('t2', 'a', 'a'), ans('t3', 'a', 'b')],
      // better: in-template t0 a/a right, t1 b/a wrong -> 1/2; new-wording t2 a/a, t3 b/b -> 2/2; two answers in each part, not constant.
      'better/id/s0/m': [ans('t0', 'a', 'a'), ans('t1', 'b', 'a'), ans('t2', 'a', 'a'), ans('t3', 'b', 'b')],
      'base/far/s0/m': [ans('t4', 'x', 'x'), ans('t5', 'y', 'y')],
    };
    const t = buildStudyTable(plan, 'st', cells, (c) => runs[c.key] ?? [], {}, undefined, noveltyOf);
    const e = (c: string, z = 'id') => t.entries.find((x) => x.condition === c && x.zone === z)!;
    expect(e('better').novelty).toMatchObject({ 'in-template': { runs: 2, accuracy: 0.5 }, 'new-wording': { runs: 2, accuracy: 1 } });
    expect(noveltyText(e('better'))).toBe('in-template 50.0 (2) · new-wording 100.0 (2)');
    expect(noveltyText(e('base'))).toBe('in-template 100.0 (2) CONSTANT · new-wording 50.0 (2) CONSTANT');
    expect(noveltyText(e('base', 'far'))).toBeUndefined();
    const csv = studyTableCsv(t).split('\n');
    // Rows in plan order: base/id, base/far, better/id, better/far (no run). Far has no novelty: empty columns.
    expect(csv[1]!.endsWith(',st.base.id.s0.m,2,1,CONSTANT,2,0.5,CONSTANT')).toBe(true);
    expect(csv[2]!.endsWith(',st.base.far.s0.m,,,,,,')).toBe(true);
    expect(csv[3]!.endsWith(',st.better.id.s0.m,2,0.5,,2,1,')).toBe(true);
    const html = studyReportHtml(t);
    expect(html).toContain('<small class="novelty">in-template 50.0 (2) · new-wording 100.0 (2)</small>');
    expect(html).toContain('<small class="novelty">in-template 100.0 (2) CONSTANT · new-wording 50.0 (2) CONSTANT</small>');
    expect(html.match(/class="novelty"/g)).toHaveLength(2);
  });

  it('pairs runs by seed and task and is the same for the same bootstrap seed', () => {
    const runs = (c: { key: string }) => (c.key.startsWith('base/id') ? [run('t0', false, 1), run('t0', true, 2)] : c.key.startsWith('better/id') ? [run('t0', true, 2), run('t0', true, 1)] : []);
    const t = buildStudyTable(plan, 'st', cells, runs);
    const d = t.entries.find((x) => x.condition === 'better' && x.zone === 'id')!.delta!;
    expect(d).toMatchObject({ pairs: 2, delta: 0.5, signTest: { positive: 1, ties: 1 } });
    expect(buildStudyTable(plan, 'st', cells, runs)).toEqual(t);
  });
});

describe('the dry run arithmetic', () => {
  it('adds load and per-run seconds per cell, iterations per train loop, and skips what is done', () => {
    const p = parseStudyPlan(PLAN.replace('baseline: base', 'baseline: base\ntrain: { dataset: toy }').replace('kind: workflow, workflow: b.yaml', 'kind: laptop-rl, workflow: b.yaml, train: { roles: [s], iterations: 3, limit: 2, group: 4 }'));
    const cells = studyCells(p, 'st');
    const speeds: StudySpeeds = {
      runs: { 'base/m': { secondsPerRun: 0.5, callsPerRun: 2, tokensPerRun: 40, loadSeconds: 1 }, 'better/m': { secondsPerRun: 0.25, callsPerRun: 1, tokensPerRun: 20, loadSeconds: 2 } },
      training: { 'better/m': { secondsPerIteration: 10, callsPerIteration: 8, tokensPerIteration: 160, overheadSeconds: 5 } },
      calibrationSeconds: 3,
    };
    const e = estimateStudy(cells, trainingUnits(p), speeds);
    // base: (1 + 4 * 0.5) + (1 + 2 * 0.5) = 5 s; better: (2 + 4 * 0.25) + (2 + 2 * 0.25) = 5.5 s; train: 5 + 3 * 10 = 35 s.
    expect(e.cells.map((c) => c.seconds)).toEqual([3, 2, 3, 2.5]);
    expect(e.units).toEqual([{ key: 'better/s0/m', runs: 24, calls: 24, tokens: 480, seconds: 35 }]);
    expect(e.total).toEqual({ cells: 4, units: 1, runs: 12 + 24, calls: 8 + 4 + 4 + 2 + 24, tokens: 160 + 80 + 80 + 40 + 480, seconds: 45.5 });
    expect(estimateStudy(cells, trainingUnits(p), { ...speeds, startSeconds: 4 }).total.seconds).toBe(49.5);
    const resumed = estimateStudy(cells, trainingUnits(p), speeds, { pendingRuns: (c) => (c.key === 'base/id/s0/m' ? 0 : c.key === 'base/far/s0/m' ? 1 : c.zone.limit), unitDone: () => true });
    expect(resumed.total).toMatchObject({ cells: 3, units: 0, seconds: 0 + 1.5 + 3 + 2.5 });
    expect(estimateStudy(cells, trainingUnits(p), { ...speeds, startSeconds: 4 }, { pendingRuns: () => 0, unitDone: () => true }).total.seconds).toBe(0);
    expect(() => estimateStudy(cells, [], { ...speeds, runs: {} })).toThrow(/no measured speed for base\/m/);
    expect(formatSeconds(65.4)).toBe('1 m 05 s');
  });
});

describe('runStudy', () => {
  it('runs every cell once; a study stopped by its budget resumes without duplicating a run', async () => {
    const store = openStore(':memory:');
    const { plan, deps, id, calls } = toyStudy(store);
    // A budget of 1 token: the first run spends more, so the study stops after it.
    const first = await runStudy(plan, id, deps, { budgetTokens: 1 });
    expect(first.status).toBe('stopped');
    expect(first.message).toMatch(/token budget reached/);
    expect(store.studies.get(id).status).toBe('stopped');
    expect(calls()).toBe(1);
    const second = await runStudy(plan, id, deps);
    expect(second.status).toBe('completed');
    const cellIds = studyCells(plan, id).map((c) => c.experimentId);
    expect(cellIds.map((e) => store.listRuns(e).length)).toEqual([4, 2, 4, 2]);
    expect(calls()).toBe(12);
    expect(new Set(cellIds.flatMap((e) => store.listRuns(e).map((r) => r.taskId))).size).toBe(6);
    const e = (c: string, z: string) => second.table.entries.find((x) => x.condition === c && x.zone === z)!;
    expect(e('base', 'id').accuracy.mean).toBe(0.5);
    expect(e('better', 'id').delta).toMatchObject({ pairs: 4, delta: 0.5, signTest: { positive: 2, negative: 0, ties: 2 } });
    // A third invocation has nothing left: no model call, same table.
    const third = await runStudy(plan, id, deps);
    expect(calls()).toBe(12);
    expect(third.table).toEqual(second.table);
    expect(store.studies.get(id).state.wallSeconds).toHaveLength(3);
    expect(store.getExperiment(cellIds[0]!).config).toMatchObject({ source: `study ${id}` });
    store.close();
  });

  it('stops on a minute budget between runs', async () => {
    const store = openStore(':memory:');
    const { plan, deps, id, calls } = toyStudy(store);
    let t = 0;
    const out = await runStudy(plan, id, deps, { budgetMinutes: 1, now: () => (t += 20_000) });
    expect(out.status).toBe('stopped');
    expect(out.message).toMatch(/time budget reached/);
    expect(calls()).toBeLessThan(12);
    store.close();
  });
});

describe('extension points', () => {
  it('a hint-cards condition runs its workflow with the library cards it names (recorded with each cell)', async () => {
    const store = openStore(':memory:');
    const { plan: base, deps } = toyStudy(store);
    store.improve.saveCard({ id: 'card-1', role: 's', title: 'Add one', appliesWhen: 'always', advice: 'The answer is the number plus one.', sourceRuns: [], teacher: 'scripted (simulated)', shots: 1, onlySuccesses: true, simulated: true, createdAt: 1 });
    const plan = parseStudyPlan(TOY_PLAN.replace('kind: workflow, workflow: b.yaml', 'kind: hint-cards, workflow: b.yaml, cards: [card-1], cardBudget: 64'));
    expect(plan.conditions[1]).toMatchObject({ kind: 'hint-cards', cards: ['card-1'], cardBudget: 64 });
    const id = studyIdOf(plan);
    expect(id).not.toBe(studyIdOf(base));
    store.studies.create({ id, name: plan.name, plan });
    const out = await runStudy(plan, id, deps);
    expect(out.status).toBe('completed');
    expect(store.getExperiment(`${id}.better.id.s0.m`).config).toMatchObject({ cards: { ids: ['card-1'], budgetTokens: 64 } });
    expect(store.getExperiment(`${id}.base.id.s0.m`).config).not.toHaveProperty('cards');
    store.close();
  });
});

describe('inContext', () => {
  it('prefixes a runtime error with where it happened and keeps a Flowlab error as it is', () => {
    const wasm = new Error('memory access out of bounds');
    const e = inContext('train loop rl/s0/m', wasm) as Error;
    expect(e.message).toBe('train loop rl/s0/m: memory access out of bounds');
    expect(e.cause).toBe(wasm);
    const own = new StudyError('BAD_PLAN', 'bad');
    expect(inContext('x', own)).toBe(own);
  });
});
