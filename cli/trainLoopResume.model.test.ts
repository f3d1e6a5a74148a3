import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../core/store/index.ts';
import { loopDebris } from '../core/training/index.ts';
import { cli } from '../test/cli.ts';
import { noteSkip, tempDir, tinyModel } from '../test/fixtures.ts';

const haveModel = existsSync(tinyModel);
if (!haveModel) noteSkip('trainLoopResume.model.test', 'the train-loop resume test', tinyModel);

/**
 * End to end on stories260K with the real trainer: `flowlab train-loop` SIGKILLed while the real
 * GGUF writer has iteration 2's temp file on disk (FLOWLAB_TEST_KILL_AT, core/killPoint.ts), then
 * `flowlab resume <loop-id>` finishes it.
 */
describe.skipIf(!haveModel)('flowlab resume <loop-id> (stories260K, real trainer)', () => {
  it('cleans the temp file, reuses the stored held-out and rollouts, and ends at the planned iteration with an unbroken lineage', async () => {
    const dir = tempDir('train-loop-resume');
    const db = path.join(dir, 'lab.db');
    const args = ['train-loop', 'examples/learn-word.yaml', '--dataset', 'learn-word', '--model', tinyModel, '--iterations', '3', '--group', '4', '--limit', '2', '--heldout', '2', '--heldout-samples', '1', '--threads', '1', '--db', db, '--json'];
    const killed = await cli(args, { ...process.env, FLOWLAB_TEST_KILL_AT: 'gguf-temp-written@2' });
    expect(killed.code).toBeNull(); // killed by SIGKILL
    let store = openStore(db);
    const [loop] = store.trainLoops.list();
    expect([loop!.status, loop!.done, loop!.iterations]).toEqual(['interrupted', 1, 3]);
    const roleDir = path.join(loop!.versionsDir, loop!.id, 'writer');
    expect(readdirSync(roleDir).filter((f) => f.endsWith('.tmp'))).toHaveLength(1);
    const before = store.trainLoops.experimentsOf(loop!.id);
    store.close();

    const r = await cli(['resume', loop!.id, '--db', db, '--json']);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain(`Resuming train loop ${loop!.id}: 1 of 3 iterations done (interrupted).`);
    const report = JSON.parse(r.out) as { loopId: string; iterations: Array<{ iteration: number; experimentId: string }>; versions: { writer: string[] }; heldout: { before: { experimentId: string } } };
    expect(report.loopId).toBe(loop!.id);
    expect(report.iterations.map((m) => m.iteration)).toEqual([1, 2, 3]);

    store = openStore(db);
    try {
      const exps = store.trainLoops.experimentsOf(loop!.id);
      // The held-out before and iterations 1-2's rollouts are those stored before the kill.
      expect(exps.slice(0, before.length).map((e) => e.id)).toEqual(before.map((e) => e.id));
      expect(exps.map((e) => e.phase ?? `it${e.iteration}`)).toEqual(['heldout-before', 'it1', 'it2', 'it3', 'heldout-after']);
      expect(report.heldout.before.experimentId).toBe(exps[0]!.id);
      const versions = store.weights.list({ role: 'writer' });
      expect(versions.map((v) => v.id)).toEqual(report.versions.writer);
      expect(versions.map((v) => v.iteration)).toEqual([1, 2, 3]);
      expect(versions.map((v) => v.parentId)).toEqual([undefined, versions[0]!.id, versions[1]!.id]);
      expect(store.trainLoops.get(loop!.id)).toMatchObject({ status: 'completed', done: 3 });
      expect(loopDebris(loop!.versionsDir, loop!.id, new Set(versions.map((v) => v.path)))).toEqual({ temps: [], unrecorded: [] });
    } finally {
      store.close();
    }
  }, 240_000);
});
