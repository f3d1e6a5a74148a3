import { copyFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openStore, storedModels } from '../core/store/index.ts';
import { cli } from '../test/cli.ts';
import { noteSkip, tempDir, tinyModel } from '../test/fixtures.ts';

const haveModel = existsSync(tinyModel);
if (!haveModel) noteSkip('trainLoop.model.test', 'the train-loop tests', tinyModel);
const tmp = () => tempDir('train-loop');

describe.skipIf(!haveModel)('flowlab train-loop / train / versions / run --role-version (stories260K, real trainer)', () => {
  let dir: string;
  let db: string;
  let loop: {
    loopId: string;
    iterations: Array<{ iteration: number; experimentId: string; score: number; seconds: Record<string, number>; roles: Record<string, { reward: number; kl: number | null; versionId: string; path: string; rungs: Record<string, number> }> }>;
    heldout: { before: { score: number; samples: number }; after: { score: number; samples: number } };
    versions: Record<string, string[]>;
  };
  beforeAll(async () => {
    dir = tmp();
    db = path.join(dir, 'lab.db');
    const r = await cli(['train-loop', 'examples/learn-word.yaml', '--dataset', 'learn-word', '--model', tinyModel, '--iterations', '3', '--group', '4', '--limit', '2', '--heldout', '2', '--heldout-samples', '2', '--db', db, '--json']);
    expect(r.code, r.err).toBe(0);
    loop = JSON.parse(r.out);
  }, 120_000);

  it('a smoke loop: per-iteration metrics, versions written and recorded with lineage, held-out before/after', () => {
    expect(loop.iterations.map((m) => m.iteration)).toEqual([1, 2, 3]);
    const writer = loop.iterations.map((m) => m.roles.writer!);
    expect(writer.every((w) => typeof w.reward === 'number' && Object.keys(w.rungs).length === 5)).toBe(true);
    expect(loop.iterations.every((m) => m.seconds.sampling! > 0 && m.seconds.training! > 0 && m.seconds.writeReload! >= 0)).toBe(true);
    expect(loop.heldout.before.samples).toBe(4);
    expect(loop.heldout.after.samples).toBe(4);
    const store = openStore(db);
    try {
      const versions = store.weights.list({ role: 'writer' });
      expect(versions.map((v) => v.id)).toEqual(loop.versions.writer);
      expect(versions.map((v) => v.parentId)).toEqual([undefined, versions[0]!.id, versions[1]!.id]);
      expect(versions.every((v) => existsSync(v.path) && v.basePath === tinyModel)).toBe(true);
      expect(versions[2]!.path).toBe(path.join(dir, 'flowlab-versions', loop.loopId, 'writer', 'iter-003.gguf'));
      // Each iteration is a stored rollouts experiment whose calls carry the sampled token ids.
      const calls = store.getExperimentCalls(loop.iterations[0]!.experimentId);
      expect(calls).toHaveLength(2 * 4);
      expect(calls.every((c) => c.promptTokenIds![0] === 1 && c.completionTokenIds!.length > 0 && c.params.topK === 0 && c.params.topP === 1)).toBe(true);
      // Iteration 2 sampled from iteration 1's version.
      expect(store.getExperimentCalls(loop.iterations[1]!.experimentId).every((c) => c.model === 'iter-001.gguf')).toBe(true);
    } finally {
      store.close();
    }
  });

  it('flowlab versions lists them and a version\'s lineage', async () => {
    const list = await cli(['versions', '--db', db, '--json']);
    expect(list.code, list.err).toBe(0);
    expect(JSON.parse(list.out).map((v: { id: string }) => v.id)).toEqual(loop.versions.writer);
    const last = loop.versions.writer![2]!;
    const lineage = await cli(['versions', '--db', db, '--lineage', last]);
    expect(lineage.code, lineage.err).toBe(0);
    expect(lineage.out).toContain(`Lineage of ${last}`);
    for (const id of loop.versions.writer!) expect(lineage.out).toContain(id);
  });

  it('flowlab run --role-version gives the role the version\'s file', async () => {
    const last = loop.versions.writer![2]!;
    const r = await cli(['run', 'examples/learn-word.yaml', '--dataset', 'learn-word', '--split', 'heldout', '--limit', '2', '--role-version', `writer=${last}`, '--db', db, '--json']);
    expect(r.code, r.err).toBe(0);
    const store = openStore(db);
    try {
      const exp = store.getExperiment(JSON.parse(r.out).experimentId);
      const config = { models: storedModels(exp)!, roleVersions: exp.config?.roleVersions ?? [] };
      expect(config.models.models[config.models.roleModels.writer!]).toBe(store.weights.get(last).path);
      expect(config.roleVersions).toEqual([`writer=${last}`]);
      expect(store.getExperimentCalls(exp.id).every((c) => c.model === 'iter-003.gguf')).toBe(true);
    } finally {
      store.close();
    }
    const clash = await cli(['run', 'examples/learn-word.yaml', '--dataset', 'learn-word', '--role-version', `writer=${last}`, '--role-model', `writer=${tinyModel}`, '--db', db]);
    expect(clash.code).toBe(2);
    expect(clash.err).toContain('has both --role-model and --role-version');
  });

  it('flowlab train: one offline grpo step set and one sft step set from a stored iteration, recorded as child versions', async () => {
    const from = loop.iterations[2]!.experimentId;
    const parent = loop.versions.writer![1]!; // iteration 3 sampled from iteration 2's version
    const grpo = await cli(['train', '--mode', 'grpo', '--role', 'writer', '--from', from, '--db', db, '--json']);
    expect(grpo.code, grpo.err).toBe(0);
    const g = JSON.parse(grpo.out);
    expect(g).toMatchObject({ mode: 'grpo', role: 'writer', from, parentId: parent, sequences: 8, steps: 1 });
    expect(existsSync(g.out)).toBe(true);

    // SFT learns from the correct runs only: with none in this short iteration, the command refuses clearly.
    const sft = await cli(['train', '--mode', 'sft', '--role', 'writer', '--from', from, '--version', loop.versions.writer![2]!, '--steps', '2', '--db', db, '--json']);
    const store = openStore(db);
    try {
      const correct = store.listRuns(from).filter((r) => r.correct).length;
      if (correct > 0) {
        expect(sft.code, sft.err).toBe(0);
        const s = JSON.parse(sft.out);
        expect(s).toMatchObject({ mode: 'sft', parentId: loop.versions.writer![2], sequences: correct, steps: 2 });
        expect(store.weights.get(s.versionId).hyper).toMatchObject({ mode: 'sft', steps: 2 });
      } else {
        expect(sft.code).toBe(1);
        expect(sft.err).toContain('no SFT data');
      }
      expect(store.weights.get(g.versionId)).toMatchObject({ role: 'writer', parentId: parent, experimentId: from, hyper: { mode: 'grpo', temperature: 1 } });
    } finally {
      store.close();
    }
  });

  it('bad arguments are usage errors', async () => {
    const ghost = await cli(['train-loop', 'examples/learn-word.yaml', '--dataset', 'learn-word', '--model', tinyModel, '--roles', 'ghost', '--db', db]);
    expect(ghost.code).toBe(2);
    expect(ghost.err).toContain('--roles names "ghost"');
    const cold = await cli(['train-loop', 'examples/learn-word.yaml', '--dataset', 'learn-word', '--model', tinyModel, '--temperature', '0', '--db', db]);
    expect(cold.code).toBe(2);
    const mode = await cli(['train', '--mode', 'dpo', '--role', 'writer', '--from', 'x', '--db', db]);
    expect(mode.code).toBe(2);
    expect(mode.err).toContain('--mode must be sft or grpo');
  });
});

/**
 * The toy train loop (docs/laptop-rl.md): on the toy reward (the continuation says "happy"), held-out mean
 * reward goes from below 0.1 to above 0.6 within 20 iterations (time per iteration printed, goal under 2 s) for the
 * 260K model, with the KL to the starting weights reported. Measured alone on the 2-core machine:
 * 0.016 -> 0.977 in 20 iterations, 0.75 s per iteration (docs/laptop-rl.md).
 */
describe.skipIf(!haveModel)('must-show: train-loop on the toy reward', () => {
  it('raises held-out reward from < 0.1 to > 0.6 within 20 iterations (seconds per iteration printed)', async () => {
    const dir = tmp();
    const model = path.join(dir, 'stories260K.gguf');
    copyFileSync(tinyModel, model);
    const r = await cli(['train-loop', 'examples/learn-word.yaml', '--dataset', 'learn-word', '--model', model, '--iterations', '20', '--heldout', '32', '--heldout-samples', '4', '--db', path.join(dir, 'must.db'), '--json']);
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out) as typeof loopShape;
    const secs = out.iterations.map((m) => m.seconds.total);
    const mean = secs.reduce((a, b) => a + b, 0) / secs.length;
    const kl = out.iterations.map((m) => m.roles.writer!.kl ?? 0);
    console.log(`[must-show] held-out ${out.heldout.before.score} -> ${out.heldout.after.score} (${out.heldout.after.samples} samples); ${mean.toFixed(2)} s/iteration; KL ${kl[kl.length - 1]}; rewards ${out.iterations.map((m) => m.score).join(' ')}`);
    expect(out.heldout.before.score).toBeLessThan(0.1);
    expect(out.heldout.after.score).toBeGreaterThan(0.6);
    // Speed is printed above, not asserted: seconds per iteration depend on the machine and its
    // load (goal < 2 s on a 2-core laptop); `npm run bench` prints the train loop's time and memory.
    expect(kl.every((x) => Number.isFinite(x) && x >= 0)).toBe(true);
  }, 240_000);
});

const loopShape = {} as {
  iterations: Array<{ score: number; seconds: { total: number }; roles: Record<string, { kl: number | null }> }>;
  heldout: { before: { score: number; samples: number }; after: { score: number; samples: number } };
};
