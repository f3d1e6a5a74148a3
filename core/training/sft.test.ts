/**
 * The loop's SFT on its own successful trajectories (warm start, mix, per-role success scores
 * and roles) and the held-out numbers it reports (accuracy per class, the best constant policy,
 * wiring root failures per run): the pure parts with hand-computed values, then the loop with a
 * fake trainer and a fake provider.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GenerateRequest, GenerateResult, ModelProvider } from '../model/provider.ts';
import type { RunRecord } from '../results/index.ts';
import type { ExperimentCall } from '../store/types.ts';
import { openStore } from '../store/index.ts';
import { getDataset, learnDesignClass } from '../tasks/index.ts';
import { defaultTools } from '../tools/index.ts';
import { parseWorkflow } from '../workflow/load.ts';
import { balanced, classAccuracy, constantBaseline, heldoutAccuracy, iterationSteps, minScoreOf, roleSftBatches, stepKind, wiringRootFailures } from './iteration.ts';
import { checkLoopOptions, runTrainLoop, type LoopModels } from './loop.ts';
import type { PolicySample, SftSequence, StepResult, TrainableModel, Trainer } from './port.ts';
import type { SftSchedule } from './types.ts';

const run = (runId: string, score: number, extra: Partial<RunRecord> = {}) => ({ runId, score, correct: score === 1, ...extra }) as unknown as RunRecord;
const call = (runId: string, role: string, p: number[], c: number[]) => ({ runId, role, promptTokenIds: p, completionTokenIds: c, completion: 'x' }) as unknown as ExperimentCall;
const sched = (over: Partial<SftSchedule> = {}): SftSchedule => ({ warmStart: 2, mix: false, steps: 1, lr: 1e-3, minScore: 1, ...over });

describe('the SFT schedule', () => {
  it('warm start: SFT alone for iterations 1..k, then the policy step (with SFT before it when mixed)', () => {
    expect([1, 2, 3].map((k) => iterationSteps(k, sched()))).toEqual([{ sft: true, policy: false }, { sft: true, policy: false }, { sft: false, policy: true }]);
    expect([1, 2].map((k) => iterationSteps(k, sched({ warmStart: 0, mix: true })))).toEqual([{ sft: true, policy: true }, { sft: true, policy: true }]);
    expect(iterationSteps(1, undefined)).toEqual({ sft: false, policy: true });
    // A role outside `roles` takes policy steps only, even in the warm start.
    expect(iterationSteps(1, sched({ roles: ['executor'] }), 'designer')).toEqual({ sft: false, policy: true });
    expect(iterationSteps(1, sched({ roles: ['executor'] }), 'executor')).toEqual({ sft: true, policy: false });
  });

  it('success per role: a number for all, or per role with 1 for the others', () => {
    expect(minScoreOf(0.5, 'x')).toBe(0.5);
    expect(minScoreOf({ designer: 0.5 }, 'designer')).toBe(0.5);
    expect(minScoreOf({ designer: 0.5 }, 'executor')).toBe(1);
  });

  it("a role's SFT batch: its calls from runs at or above its score (and above 0), each distinct sequence once", () => {
    const runs = [run('r1', 1), run('r2', 0.5), run('r3', 0), run('r4', 1)];
    const calls = [
      call('r1', 'd', [1, 2], [3]), call('r1', 'e', [1, 5], [6]),
      call('r2', 'd', [1, 2], [4]), call('r2', 'e', [1, 5], [7]),
      call('r3', 'd', [1, 2], [9]),
      call('r4', 'd', [1, 2], [3]), call('r4', 'e', [1, 5], [8]), // r4's designer call repeats r1's: kept once
    ];
    const batches = roleSftBatches(calls, runs, ['d', 'e'], { d: 0.5 });
    expect(batches.get('d')).toEqual<SftSequence[]>([{ tokens: [1, 2, 3], lossMask: [0, 0, 1] }, { tokens: [1, 2, 4], lossMask: [0, 0, 1] }]);
    expect(batches.get('e')).toEqual<SftSequence[]>([{ tokens: [1, 5, 6], lossMask: [0, 0, 1] }, { tokens: [1, 5, 8], lossMask: [0, 0, 1] }]);
    expect(roleSftBatches(calls, [run('r3', 0)], ['d'], 0.5).get('d')).toEqual([]);
  });

  it('step kinds', () => {
    const s: StepResult = { loss: 1, tokens: 1, ms: 1 };
    expect([stepKind(s, s), stepKind(s, undefined), stepKind(undefined, s), stepKind(undefined, undefined)]).toEqual(['sft+grpo', 'sft', 'grpo', 'none']);
  });

  it('refuses a malformed schedule, naming it', () => {
    const { graph } = parseWorkflow(readFileSync('examples/designer-team.yaml', 'utf8'), { tools: defaultTools() });
    const ok = { roles: ['designer', 'executor'], graph, temperature: 1, trainTasks: getDataset('learn-design').load({ split: 'train', limit: 1 }) };
    expect(() => checkLoopOptions({ ...ok, sft: sched({ minScore: { designer: 0.5 } }) })).not.toThrow();
    expect(() => checkLoopOptions({ ...ok, sft: sched({ warmStart: -1 }) })).toThrow(/warm start must be a whole number of iterations >= 0, got -1/);
    expect(() => checkLoopOptions({ ...ok, sft: sched({ steps: 0 }) })).toThrow(/SFT passes must be a whole number >= 1/);
    expect(() => checkLoopOptions({ ...ok, sft: sched({ lr: 2 }) })).toThrow(/SFT learning rate must be in \(0, 1\), got 2/);
    expect(() => checkLoopOptions({ ...ok, sft: sched({ minScore: 0 }) })).toThrow(/SFT success score must be in \(0, 1\], got 0/);
    expect(() => checkLoopOptions({ ...ok, sft: sched({ minScore: { ghost: 0.5 } }) })).toThrow(/names role "ghost", which is not trained/);
    expect(() => checkLoopOptions({ ...ok, sft: sched({ roles: ['ghost'] }) })).toThrow(expect.objectContaining({ code: 'BAD_SFT', message: expect.stringMatching(/SFT roles name "ghost"/) }));
  });
});

describe('held-out numbers', () => {
  const wiring = (blamed: string, n: number) => ({ roots: Array.from({ length: n }, (_, i) => ({ nodeId: `n${i}`, failureClass: 'wiring', blamed })), cascades: [], byRole: {}, ambiguous: [], infrastructure: [], silent: false });
  const runs = [
    run('r1', 1, { expected: 'weather:today', answer: 'weather:today' }),
    run('r2', 0.5, { expected: 'weather:now', answer: 'weather:today' }),
    run('r3', 0, { expected: 'search:books', answer: 'weather:now', credit: wiring('designer', 2) as never }),
    run('r4', 0, { expected: 'math:add', credit: wiring('designer', 1) as never }),
    run('r5', 0, { expected: 'weather:today', credit: { ...wiring('executor', 1), roots: [{ nodeId: 'x', failureClass: 'execution', blamed: 'designer' }] } as never }),
  ];

  it('accuracy per class: runs, share correct, mean score, share answering with the right class', () => {
    expect(classAccuracy(runs, learnDesignClass)).toEqual({
      math: { runs: 1, accuracy: 0, score: 0, classRight: 0 },
      search: { runs: 1, accuracy: 0, score: 0, classRight: 0 },
      weather: { runs: 3, accuracy: 1 / 3, score: 0.5, classRight: 2 / 3 },
    });
    expect(classAccuracy(runs, undefined)).toBeUndefined();
  });

  it('the best constant policy: the most common expected answer and class, with their shares', () => {
    expect(constantBaseline(runs, learnDesignClass)).toEqual({ answer: 'weather:today', accuracy: 2 / 5, class: 'weather', classAccuracy: 3 / 5 });
    // A tie goes to the first in sorted order.
    expect(constantBaseline([run('a', 0, { expected: 'search:word' }), run('b', 0, { expected: 'math:add' })])).toEqual({ answer: 'math:add', accuracy: 0.5 });
    expect(constantBaseline([])).toEqual({ answer: null, accuracy: 0 });
  });

  it('wiring root failures blamed on a role, per run; and what the loop adds to a held-out result', () => {
    expect(wiringRootFailures(runs, 'designer')).toBe(3 / 5); // 2 + 1 wiring roots over 5 runs; the execution root is not counted
    expect(wiringRootFailures(runs, 'executor')).toBe(0);
    expect(heldoutAccuracy(runs, ['designer', 'executor'], learnDesignClass)).toEqual({
      accuracy: 1 / 5,
      classes: classAccuracy(runs, learnDesignClass),
      classAccuracy: 2 / 5,
      constant: { answer: 'weather:today', accuracy: 2 / 5, class: 'weather', classAccuracy: 3 / 5 },
      // Answers: weather:today, weather:now and no answer twice (r4, r5): 3 distinct (none counted once), = 3 classes: not CONSTANT.
      guard: { runs: 5, labelled: 5, bestConstant: { answer: 'weather:today', accuracy: 2 / 5 }, bestConstantClass: { class: 'weather', accuracy: 3 / 5 }, distinctAnswers: 3, classes: 3, topAnswer: { answer: '(none)', share: 2 / 5 } },
      wiringRootFailures: { designer: 3 / 5, executor: 0 },
    });
  });
});

/** A trainer that records each SFT and policy step and writes a marker file. */
class FakeModel implements TrainableModel {
  readonly parameters = 1;
  readonly log: Array<{ kind: 'sft'; batch: SftSequence[]; lr: number } | { kind: 'policy'; batch: PolicySample[] }> = [];
  constructor(readonly path: string) {}
  async sftStep(batch: readonly SftSequence[], opts: { lr: number }): Promise<StepResult> {
    this.log.push({ kind: 'sft', batch: [...batch], lr: opts.lr });
    return { loss: 0.5, tokens: batch.reduce((s, b) => s + b.lossMask.filter(Boolean).length, 0), ms: 2 };
  }
  async policyStep(batch: readonly PolicySample[]): Promise<StepResult> {
    this.log.push({ kind: 'policy', batch: [...batch] });
    return { loss: -0.1, kl: 0, tokens: batch.length, ms: 2 };
  }
  async greedy(): Promise<number[]> {
    return [];
  }
  async probabilities(): Promise<number[][]> {
    return [];
  }
  async writeGguf(out: string): Promise<void> {
    writeFileSync(out, `fake after ${this.log.length} steps`);
  }
  dispose(): void {}
}

/** The hand-wired learn-design team with answers fixed by the seed: picker right for seed % 2 = 0, executor's argument the request's for seed % 3 ≠ 0. */
class FakeProvider implements ModelProvider {
  readonly name = 'fake';
  constructor(readonly models: LoopModels) {}
  async generate(req: GenerateRequest): Promise<GenerateResult> {
    const request = req.prompt;
    const wanted = /today|tomorrow|now\?/.test(request) ? 'weather' : /plus|times|minus|Add|Multiply|Subtract/.test(request) ? 'math' : 'search';
    let text: string;
    if (req.role === 'picker') text = JSON.stringify(req.seed % 2 === 0 ? wanted : wanted === 'math' ? 'search' : 'math');
    else {
      const options: Record<string, string[]> = { Day: ['today', 'tomorrow', 'now'], Kind: ['story', 'word', 'books', 'facts'], Operation: ['add', 'multiply', 'subtract'] };
      const [, port] = /\n(Day|Kind|Operation):/.exec(request)!;
      const cue = options[port!]!.find((o) => new RegExp(o, 'i').test(request.replace('Operation', ''))) ?? options[port!]![0]!;
      text = JSON.stringify(req.seed % 3 !== 0 ? cue : options[port!]!.find((o) => o !== cue)!);
    }
    return { text, tokens: { prompt: 3, completion: 2 }, ms: 1, seed: req.seed, model: 'fake', promptTokenIds: [1, req.role === 'picker' ? 11 : 22, req.seed % 97], completionTokenIds: [Array.from(text).reduce((s, c) => s + c.charCodeAt(0), 0) % 500, 2] };
  }
  modelsLoaded() {
    return 1;
  }
  async dispose() {}
}

/** The hand-wired learn-design team on a fresh store with the fake trainer and provider: what a loop test needs. */
function fakeTeamLoop(prefix: string) {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  const store = openStore(path.join(dir, 'loop.db'));
  const yaml = readFileSync('examples/learn-design-fixed.yaml', 'utf8');
  const { graph } = parseWorkflow(yaml, { tools: defaultTools() });
  const ds = getDataset('learn-design');
  const models: FakeModel[] = [];
  const trainer: Trainer = { load: async (file) => { const m = new FakeModel(file); models.push(m); return m; } };
  const base = {
    store, graph, workflow: { yaml }, dataset: { name: ds.name, grader: ds.grader, classOf: ds.classOf! },
    trainTasks: ds.load({ split: 'train', limit: 6 }), tools: defaultTools(), trainer,
    makeProvider: async (m: LoopModels) => new FakeProvider(m),
    models: { models: { default: path.join(dir, 'base.gguf') }, roleModels: { picker: 'default', executor: 'default' } },
  };
  return { dir, store, models, ds, base };
}

describe('the loop with an SFT warm start (fake trainer, fake provider)', () => {
  it('iterations 1..k step each SFT role on its successful calls; later iterations take policy steps; versions say which', async () => {
    const { dir, store, models, ds, base } = fakeTeamLoop('flowlab-sft-');
    try {
      const report = await runTrainLoop({
        ...base, heldoutTasks: ds.load({ split: 'heldout', limit: 6 }),
        roles: ['picker', 'executor'], group: 4, iterations: 3, tasksPerIteration: 2, lr: 3e-4, kl: 0.02, temperature: 1,
        heldoutSamples: 2, heldoutTemperature: 1, seed: 3, versionsDir: path.join(dir, 'v'),
        sft: { warmStart: 2, mix: false, steps: 2, lr: 1e-3, minScore: { picker: 0.5 } },
      });
      const [picker, executor] = models as [FakeModel, FakeModel];
      expect(picker.log.map((s) => s.kind)).toEqual(['sft', 'sft', 'sft', 'sft', 'policy']); // 2 passes x 2 warm-start iterations, then GRPO
      expect(report.iterations.map((m) => m.roles.picker!.step)).toEqual(['sft', 'sft', 'grpo']);
      for (const [k, m] of report.iterations.slice(0, 2).entries()) {
        const runs = store.listRuns(m.experimentId);
        const calls = store.getExperimentCalls(m.experimentId);
        // The picker learns from runs scoring >= 0.5 (its tool right), the executor from correct runs only; each distinct
        // sequence, balanced over the task classes (each class's repeated up to the largest class's count).
        for (const [role, model, min] of [['picker', picker, 0.5], ['executor', executor, 1]] as const) {
          const kept = new Set(runs.filter((r) => r.score >= min && r.score > 0).map((r) => r.runId as string));
          const expected = new Set(calls.filter((c) => c.role === role && kept.has(c.runId)).map((c) => [...c.promptTokenIds!, ...c.completionTokenIds!].join(',')));
          const steps = model.log.filter((s) => s.kind === 'sft').slice(2 * k, 2 * k + 2);
          const seen = steps[0] ? steps[0].batch.map((b) => (b as SftSequence).tokens.join(',')) : [];
          expect(new Set(seen), `${role} iteration ${k + 1}`).toEqual(expected);
          const perClass = new Map<string, Set<string>>();
          for (const c of calls.filter((c) => c.role === role && kept.has(c.runId))) {
            const cls = ds.classOf!({ expected: runs.find((r) => r.runId === c.runId)!.expected ?? "" });
            perClass.set(cls, (perClass.get(cls) ?? new Set()).add([...c.promptTokenIds!, ...c.completionTokenIds!].join(',')));
          }
          const most = Math.max(0, ...[...perClass.values()].map((s) => s.size));
          expect(report.iterations[k]!.roles[role]!.sftSequences).toBe(perClass.size > 1 ? most * perClass.size : expected.size);
          if (steps[0]) expect(steps[0]).toMatchObject({ kind: 'sft', lr: 1e-3 });
        }
      }
      // The fake answers give both roles successes to learn from: picker right in about half the runs, both right in about a third.
      expect(report.iterations.slice(0, 2).map((m) => [m.roles.picker!.sftSequences! > 0, m.roles.executor!.sftSequences! > 0])).toEqual([[true, true], [true, true]]);
      const versions = store.weights.list({ role: 'picker' });
      expect(versions.map((v) => v.hyper.mode)).toEqual(['sft', 'sft', 'grpo']);
      expect(versions[0]!.hyper.sft).toEqual({ warmStart: 2, mix: false, steps: 2, lr: 1e-3, minScore: { picker: 0.5 } });
      expect(versions[0]!.metrics).toMatchObject({ loss: null, sftSequences: report.iterations[0]!.roles.picker!.sftSequences, sftLoss: 0.5 });
      // Held-out: accuracy, per class, the best constant policy on the same runs.
      const after = report.heldout!.after;
      const runs = store.listRuns(after.experimentId);
      expect(after.accuracy).toBe(runs.filter((r) => r.correct).length / runs.length);
      expect(Object.keys(after.classes!)).toEqual(['math', 'search', 'weather']);
      expect(after.constant).toEqual(constantBaseline(runs, learnDesignClass));
      expect(after.wiringRootFailures).toEqual({ picker: 0, executor: 0 });
      expect(report.iterations[0]!.classes!.weather!.runs).toBeGreaterThan(0);
      // What the split tests: held-out tasks 0..5, 2 samples each; task 3 is new-wording (index mod 4 = 3): 2 runs, the other 10 in-template.
      expect(Object.keys(after.novelty!)).toEqual(['in-template', 'new-wording']);
      expect([after.novelty!['in-template']!.runs, after.novelty!['new-wording']!.runs]).toEqual([10, 2]);
      const t3 = runs.filter((r) => r.taskId.startsWith('learn-design/heldout/3'));
      expect(t3).toHaveLength(2);
      expect(after.novelty!['new-wording']!.accuracy).toBe(t3.filter((r) => r.correct).length / 2);
    } finally {
      store.close();
    }
  });

  it('a replay pool (sft.pool): each iteration SFTs on up to n distinct successes per class from every iteration so far, newest first', async () => {
    const { dir, store, models, ds, base } = fakeTeamLoop('flowlab-sft-pool-');
    try {
      const report = await runTrainLoop({
        ...base, heldoutTasks: [],
        roles: ['picker', 'executor'], group: 4, iterations: 3, tasksPerIteration: 2, lr: 3e-4, kl: 0.02, temperature: 1,
        heldoutSamples: 1, heldoutTemperature: 1, seed: 3, versionsDir: path.join(dir, 'v'),
        sft: { warmStart: 0, mix: true, steps: 1, lr: 1e-3, minScore: { picker: 0.5 }, roles: ['picker'], pool: 2 },
      });
      const picker = models[0]!;
      const sftBatches = picker.log.filter((s) => s.kind === 'sft').map((s) => (s.batch as SftSequence[]).map((b) => b.tokens.join(',')));
      expect(sftBatches).toHaveLength(3);
      // Iteration k's pool: the picker's distinct successful sequences of iterations k..1 (newest first), at most 2 per class, balanced.
      const its = report.iterations.map((m) => ({ runs: store.listRuns(m.experimentId), calls: store.getExperimentCalls(m.experimentId) }));
      for (let k = 1; k <= 3; k++) {
        const byClass = new Map<string, string[]>();
        for (const it of its.slice(0, k).reverse()) {
          for (const c of it.calls.filter((c) => c.role === 'picker')) {
            const r = it.runs.find((x) => x.runId === c.runId)!;
            if (!(r.score >= 0.5)) continue;
            const key = [...c.promptTokenIds!, ...c.completionTokenIds!].join(',');
            const cls = ds.classOf!({ expected: r.expected ?? '' });
            const have = byClass.get(cls) ?? [];
            if (have.length < 2 && !have.includes(key)) byClass.set(cls, [...have, key]);
          }
        }
        expect(new Set(sftBatches[k - 1]), `iteration ${k}`).toEqual(new Set([...byClass.values()].flat()));
        expect(sftBatches[k - 1]!.length).toBe(byClass.size > 1 ? Math.max(...[...byClass.values()].map((v) => v.length)) * byClass.size : [...byClass.values()][0]?.length ?? 0);
      }
      // Later iterations pool more classes than the first alone (the first iteration's 2 tasks are 2 classes).
      expect(new Set(sftBatches[2]).size).toBeGreaterThan(new Set(sftBatches[0]).size);
      expect(store.weights.list({ role: 'picker' })[0]!.hyper.sft).toMatchObject({ pool: 2 });
    } finally {
      store.close();
    }
  });

  it('a per-class cap keeps the first n distinct successes of each class', () => {
    const runs = [run('a1', 1, { expected: 'weather:today' } as Partial<RunRecord>), run('a2', 1, { expected: 'weather:now' } as Partial<RunRecord>), run('b1', 1, { expected: 'math:add' } as Partial<RunRecord>)];
    const calls = [call('a1', 'd', [1], [2]), call('a2', 'd', [1], [3]), call('b1', 'd', [1], [4])];
    const cls = (id: string) => learnDesignClass({ expected: runs.find((r) => r.runId === id)!.expected ?? '' });
    expect(roleSftBatches(calls, runs, ['d'], 1, undefined, cls, 1).get('d')!.map((q) => q.tokens)).toEqual([[1, 2], [1, 4]]);
    expect(roleSftBatches(calls, runs, ['d'], 1, undefined, cls).get('d')!.map((q) => q.tokens)).toEqual([[1, 2], [1, 3], [1, 4], [1, 4]]);
  });

  it('balanced: each group repeated in turn up to the largest group', () => {
    expect(balanced(new Map([['a', [1, 2, 3]], ['b', [4]], ['c', [5, 6]]]))).toEqual([1, 2, 3, 4, 4, 4, 5, 6, 5]);
    expect(balanced(new Map([['only', [1, 2]]]))).toEqual([1, 2]);
    expect(balanced(new Map())).toEqual([]);
  });
});

