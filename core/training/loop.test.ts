import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GenerateRequest, GenerateResult, ModelProvider } from '../model/provider.ts';
import { openStore } from '../store/index.ts';
import { getDataset } from '../tasks/index.ts';
import { defaultTools } from '../tools/index.ts';
import { parseWorkflow } from '../workflow/load.ts';
import { runTrainLoop, trainRef, type LoopModels } from './loop.ts';
import type { PolicyOptions, PolicySample, StepResult, TrainableModel, Trainer } from './port.ts';
import { policySamples, sftSequences } from './samples.ts';

const WORKSHOP = readFileSync('examples/workshop-learn.yaml', 'utf8');
const tmp = () => mkdtempSync(path.join(tmpdir(), 'flowlab-loop-'));

/** A trainer that trains nothing: it records each policy step and writes a small marker file. */
class FakeModel implements TrainableModel {
  readonly parameters = 1;
  readonly steps: Array<{ batch: PolicySample[]; opts: PolicyOptions }> = [];
  readonly written: string[] = [];
  disposed = false;
  constructor(readonly path: string) {}
  async sftStep(): Promise<StepResult> {
    throw new Error('not used');
  }
  async policyStep(batch: readonly PolicySample[], opts: PolicyOptions): Promise<StepResult> {
    this.steps.push({ batch: [...batch], opts });
    return { loss: -0.1 * this.steps.length, kl: 0.01 * (this.steps.length - 1), tokens: batch.reduce((s, b) => s + b.completionTokens.length, 0), ms: 5 };
  }
  async greedy(): Promise<number[]> {
    return [];
  }
  async probabilities(): Promise<number[][]> {
    return [];
  }
  async writeGguf(out: string): Promise<void> {
    writeFileSync(out, `fake weights of ${this.path} after ${this.steps.length} steps`);
    this.written.push(out);
  }
  dispose(): void {
    this.disposed = true;
  }
}
class FakeTrainer implements Trainer {
  readonly loaded: FakeModel[] = [];
  async load(file: string): Promise<FakeModel> {
    const m = new FakeModel(file);
    this.loaded.push(m);
    return m;
  }
}

/**
 * A provider whose answers depend on the seed (so groups have reward spread) and which records
 * token ids: prompt ids encode the role (planner 11, solver 22), completion ids the text length.
 */
class FakeProvider implements ModelProvider {
  readonly name = 'fake';
  disposed = false;
  readonly requests: GenerateRequest[] = [];
  constructor(readonly models: LoopModels) {}
  async generate(req: GenerateRequest): Promise<GenerateResult> {
    this.requests.push(req);
    if (!this.models.models[req.model]) throw new Error(`unknown ref ${req.model}`);
    const planner = req.role === 'planner';
    const text = planner ? (req.seed % 3 === 0 ? 'Tim was happy.' : 'Tim went home.') : ['"search"', '"weather"', '"calculator"'][req.seed % 3]!;
    const res: GenerateResult = { text, tokens: { prompt: 3, completion: text.length }, ms: 1, seed: req.seed, model: path.basename(this.models.models[req.model]!) };
    if (req.recordTokens) {
      res.promptTokenIds = [1, planner ? 11 : 22, req.seed % 500];
      res.completionTokenIds = Array.from(text, (c) => c.charCodeAt(0));
    }
    return res;
  }
  modelsLoaded() {
    return 1;
  }
  async dispose() {
    this.disposed = true;
  }
}

describe('the train loop (fake trainer, fake provider)', () => {
  it('steps each role on its own calls with its own advantages, writes versions with lineage, reloads with the new files', async () => {
    const dir = tmp();
    const store = openStore(path.join(dir, 'loop.db'));
    const { graph } = parseWorkflow(WORKSHOP, { tools: defaultTools() });
    const ds = getDataset('learn-team');
    const trainer = new FakeTrainer();
    const providers: FakeProvider[] = [];
    const base = path.join(dir, 'base.gguf');
    const report = await runTrainLoop({
      store, graph, workflow: { yaml: WORKSHOP }, dataset: { name: ds.name, grader: ds.grader },
      trainTasks: ds.load({ split: 'train', limit: 6 }), heldoutTasks: ds.load({ split: 'heldout', limit: 2 }),
      tools: defaultTools(), trainer,
      makeProvider: async (m) => {
        const p = new FakeProvider(m);
        providers.push(p);
        return p;
      },
      models: { models: { default: base }, roleModels: { planner: 'default', solver: 'default' } },
      roles: ['planner', 'solver'], group: 4, iterations: 3, tasksPerIteration: 2, lr: 3e-4, kl: 0.02, temperature: 1,
      heldoutSamples: 2, heldoutTemperature: 1, seed: 7, versionsDir: path.join(dir, 'versions'),
    });
    try {
      // Each role trains its own model, loaded once from the base file.
      expect(trainer.loaded.map((m) => m.path)).toEqual([base, base]);
      const [plannerModel, solverModel] = trainer.loaded as [FakeModel, FakeModel];
      expect(plannerModel.steps).toHaveLength(3);
      expect(solverModel.steps).toHaveLength(3);

      for (const [role, model, marker] of [['planner', plannerModel, 11], ['solver', solverModel, 22]] as const) {
        model.steps.forEach((step, i) => {
          const it = report.iterations[i]!;
          expect(step.opts).toMatchObject({ lr: 3e-4, kl: 0.02, temperature: 1 });
          // Only the role's own calls: their prompt ids carry the role's marker.
          expect(step.batch.length).toBe(2 * 4);
          expect(step.batch.every((s) => s.promptTokens[1] === marker)).toBe(true);
          // The advantages are the role's stored ladder advantages of the iteration's runs, in run order.
          const adv = store.improve.advantagesOf(it.experimentId).filter((a) => a.role === role && a.mode === 'ladder');
          expect(step.batch.map((s) => s.advantage)).toEqual(adv.map((a) => a.advantage));
          // The sampled ids are what the provider returned for the role's calls.
          const calls = store.getExperimentCalls(it.experimentId).filter((c) => c.role === role);
          expect(step.batch.map((s) => s.completionTokens)).toEqual(calls.map((c) => c.completionTokenIds));
        });
      }
      // The planner's group rewards vary (happy or not), so some of its advantages are non-zero.
      expect(plannerModel.steps.some((s) => s.batch.some((b) => b.advantage !== 0))).toBe(true);

      // Versions: one per role per iteration, each the child of the previous, written where recorded.
      for (const role of ['planner', 'solver']) {
        const versions = store.weights.list({ role });
        expect(versions.map((v) => v.id)).toEqual(report.versions[role]);
        expect(versions.map((v) => v.iteration)).toEqual([1, 2, 3]);
        expect(versions[0]!.parentId).toBeUndefined();
        expect(versions[1]!.parentId).toBe(versions[0]!.id);
        expect(versions[2]!.parentId).toBe(versions[1]!.id);
        expect(versions.every((v) => v.basePath === base)).toBe(true);
        expect(versions.map((v) => v.experimentId)).toEqual(report.iterations.map((m) => m.experimentId));
        expect(versions[2]!.hyper).toMatchObject({ lr: 3e-4, kl: 0.02, temperature: 1, group: 4, mode: 'grpo' });
        expect(versions[2]!.metrics).toMatchObject({ samples: 8, rungs: { format: expect.any(Number), credit: expect.any(Number) }, seconds: { sampling: expect.any(Number), training: expect.any(Number), write: expect.any(Number) } });
        expect(readFileSync(versions[2]!.path, 'utf8')).toContain('after 3 steps');
        expect(store.weights.lineage(versions[2]!.id).map((v) => v.id)).toEqual([versions[2]!.id, versions[1]!.id, versions[0]!.id]);
        expect(report.finalModels[role]).toBe(versions[2]!.path);
      }

      // Reload: a new provider after every iteration, each role's ref naming its newest file.
      expect(providers).toHaveLength(4);
      expect(providers.slice(0, 3).every((p) => p.disposed)).toBe(true);
      expect(providers[0]!.models.models).toEqual({ default: base, [trainRef('planner')]: base, [trainRef('solver')]: base });
      for (let k = 1; k <= 3; k++) {
        const m = providers[k]!.models;
        expect(m.roleModels).toMatchObject({ planner: trainRef('planner'), solver: trainRef('solver') });
        expect(m.models[trainRef('planner')]).toBe(store.weights.list({ role: 'planner' })[k - 1]!.path);
        expect(m.models[trainRef('solver')]).toBe(store.weights.list({ role: 'solver' })[k - 1]!.path);
      }
      // Calls of iteration k went to the files written by iteration k - 1 (on-policy), with tokens recorded.
      const secondIter = providers[1]!.requests.filter((r) => r.recordTokens);
      expect(secondIter.length).toBe(2 * 4 * 2);
      expect(new Set(secondIter.map((r) => r.model))).toEqual(new Set([trainRef('planner'), trainRef('solver')]));
      expect(secondIter.every((r) => r.params.temperature === 1 && r.params.topK === 0 && r.params.topP === 1 && r.params.minP === 0)).toBe(true);

      // Held-out before and after: same tasks and seeds (paired), not recorded for training.
      const { before, after } = report.heldout!;
      expect(before.samples).toBe(4);
      expect(after.samples).toBe(4);
      const seedsOf = (id: string) => store.listRuns(id).map((r) => [r.taskId, r.seed]);
      expect(seedsOf(after.experimentId)).toEqual(seedsOf(before.experimentId));
      expect(store.getExperimentCalls(before.experimentId).every((c) => c.promptTokenIds === undefined)).toBe(true);

      // Metrics: per role reward, rungs, KL from the step, seconds split.
      const it3 = report.iterations[2]!;
      expect(it3.roles.planner).toMatchObject({ samples: 8, kl: 0.02, loss: expect.closeTo(-0.3, 9) });
      expect(Object.keys(it3.roles.solver!.rungs)).toEqual(['format', 'validity', 'completion', 'correctness', 'credit']);
      expect(it3.seconds.total).toBeGreaterThanOrEqual(it3.seconds.sampling);
      expect(trainer.loaded.every((m) => m.disposed)).toBe(true);
      expect(providers[3]!.disposed).toBe(true);
    } finally {
      store.close();
    }
  });

  it('trains only the roles asked for; a role started from a version continues its lineage', async () => {
    const dir = tmp();
    const store = openStore(path.join(dir, 'loop.db'));
    const { graph } = parseWorkflow(WORKSHOP, { tools: defaultTools() });
    const ds = getDataset('learn-team');
    const start = path.join(dir, 'start.gguf');
    writeFileSync(start, 'x');
    const parent = store.weights.save({ role: 'solver', basePath: path.join(dir, 'orig.gguf'), path: start, hyper: {}, metrics: {} });
    const trainer = new FakeTrainer();
    const report = await runTrainLoop({
      store, graph, workflow: { yaml: WORKSHOP }, dataset: { name: ds.name, grader: ds.grader },
      trainTasks: ds.load({ split: 'train', limit: 2 }), heldoutTasks: [], tools: defaultTools(), trainer,
      makeProvider: async (m) => new FakeProvider(m),
      models: { models: { default: path.join(dir, 'base.gguf') }, roleModels: { planner: 'default', solver: 'default' } },
      roles: ['solver'], startVersions: { solver: parent }, group: 2, iterations: 1, tasksPerIteration: 2, lr: 1e-4, kl: 0, temperature: 0.7,
      heldoutSamples: 1, heldoutTemperature: 0, seed: 1, versionsDir: path.join(dir, 'v'),
    });
    try {
      expect(trainer.loaded.map((m) => m.path)).toEqual([start]);
      expect(report.heldout).toBeUndefined();
      const v = store.weights.get(report.versions.solver![0]!);
      expect(v).toMatchObject({ parentId: parent.id, basePath: path.join(dir, 'orig.gguf'), iteration: 1 });
      expect(store.weights.list({ role: 'planner' })).toEqual([]);
    } finally {
      store.close();
    }
  });

  it('refuses a role the workflow lacks and a zero temperature', async () => {
    const store = openStore(':memory:');
    const { graph } = parseWorkflow(WORKSHOP, { tools: defaultTools() });
    const ds = getDataset('learn-team');
    const common = {
      store, graph, workflow: { yaml: WORKSHOP }, dataset: { name: ds.name, grader: ds.grader }, trainTasks: ds.load({ split: 'train', limit: 1 }), heldoutTasks: [],
      tools: defaultTools(), trainer: new FakeTrainer(), makeProvider: async (m: LoopModels) => new FakeProvider(m),
      models: { models: { default: 'b.gguf' }, roleModels: {} }, group: 2, iterations: 1, tasksPerIteration: 1, lr: 1e-4, kl: 0,
      heldoutSamples: 1, heldoutTemperature: 0, seed: 1, versionsDir: tmp(),
    };
    await expect(runTrainLoop({ ...common, roles: ['ghost'], temperature: 1 })).rejects.toThrow(/no role "ghost"/);
    await expect(runTrainLoop({ ...common, roles: ['solver'], temperature: 0 })).rejects.toThrow(/temperature > 0/);
    store.close();
  });
});

describe('training samples from stored calls', () => {
  const call = (runId: string, role: string, p: number[] | undefined, c: number[] | undefined, error?: string) =>
    ({ runId, role, promptTokenIds: p, completionTokenIds: c, error }) as unknown as Parameters<typeof policySamples>[0][number];
  const calls = [call('r1', 'a', [1, 5], [7, 8]), call('r1', 'b', [1, 6], [9]), call('r2', 'a', [1, 5], [3]), call('r3', 'a', undefined, undefined), call('r4', 'a', [1], [2], 'TIMEOUT'), call('r5', 'a', [1], [])];

  it('policy samples: the role\'s calls with recorded ids and an advantage; every call of a run shares it', () => {
    expect(policySamples(calls, 'a', (id) => ({ r1: 0.5, r2: -0.5, r3: 1, r4: 1, r5: 1 })[id])).toEqual([
      { promptTokens: [1, 5], completionTokens: [7, 8], advantage: 0.5 },
      { promptTokens: [1, 5], completionTokens: [3], advantage: -0.5 },
    ]);
    expect(policySamples(calls, 'a', (id) => (id === 'r2' ? 1 : undefined))).toHaveLength(1);
  });

  it('SFT sequences: prompt + completion with the loss on completion tokens only', () => {
    expect(sftSequences(calls, 'a', (id) => id === 'r1')).toEqual([{ tokens: [1, 5, 7, 8], lossMask: [0, 0, 1, 1] }]);
  });
});
