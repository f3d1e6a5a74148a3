/**
 * `flowlab verify`, `flowlab repeat` and the reproducibility record with the real tiny model
 * (stories260K): a rollout group re-run into a scratch database is identical; an edited stored
 * completion is named as the first difference (exit 1); a sample of tasks repeats at 1.00.
 */
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../core/store/index.ts';
import { cli } from '../test/cli.ts';
import { haveShared, noteSkip, tempDir, tinyModel as model } from '../test/fixtures.ts';
import Database from 'better-sqlite3';

if (!haveShared) noteSkip('verify.model.test', 'flowlab verify and repeat on rollouts', model);

describe.skipIf(!haveShared)('flowlab verify / repeat with stories260K', () => {
  let db = '';
  let id = '';
  beforeAll(async () => {
    db = path.join(tempDir('cli-verify-model'), 'verify.db');
    const r = await cli(['rollouts', 'examples/workshop-learn.yaml', '--dataset', 'learn-team', '--split', 'train', '--limit', '2', '--group', '4', '--temperature', '1', '--record-tokens', '--seed', '3', '--threads', '1', '--model', model, '--db', db, '--json']);
    expect(r.code, r.err).toBe(0);
    id = JSON.parse(r.out).experimentId as string;
  }, 300_000);

  it('records a fingerprint and an output digest; verify re-runs it and prints identical (exit 0)', async () => {
    const store = openStore(db);
    const rec = store.repro.find(id)!;
    store.close();
    expect(rec).toMatchObject({ kind: 'experiment', repeatability: 'exact', fingerprint: { seed: 3, decode: { batching: 'isolated', threads: 1 } } });
    expect(rec.outputDigest).toMatch(/^[0-9a-f]{64}$/);
    const r = await cli(['verify', id, '--db', db]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(`flowlab verify ${id}: identical (8/8 runs identical; repeatability: exact)`);
    expect(r.out).toContain(`stored ${rec.outputDigest!.slice(0, 16)}`);
  }, 300_000);

  it('an edited stored completion is the first difference, named by task and node (exit 1)', async () => {
    const raw = new Database(db);
    const call = raw.prepare(`SELECT c.id, c.completion FROM model_calls c JOIN runs r ON r.id = c.run_id WHERE r.task_index = 2 AND c.node_id = 'story'`).get() as { id: number; completion: string };
    raw.prepare('UPDATE model_calls SET completion = ? WHERE id = ?').run(`${call.completion}!`, call.id);
    raw.close();
    const r = await cli(['verify', id, '--db', db]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('DIFFERENT (7/8 runs identical');
    expect(r.out).toContain('first difference: task 2, node story (attempt 1): sampled text (call 0 completion)');
  }, 300_000);

  it('repeat re-runs a seeded sample of tasks and reports the fraction identical', async () => {
    const r = await cli(['repeat', id, '--db', db, '--tasks', '3', '--seed', '1', '--json']);
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out) as { tasks: number[]; identical: number; fraction: number };
    expect(out.tasks).toHaveLength(3);
    // Task 2's stored completion was edited above: it repeats only if the sample left it out.
    expect(out.fraction).toBe(out.tasks.includes(2) ? 2 / 3 : 1);
  }, 300_000);
});
