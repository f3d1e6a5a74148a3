/**
 * `flowlab tune` stores the best setting per model file and machine, and a later command without
 * --threads / --batch runs with it, its calls recording the source (`tuned`; `flag` when given).
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../core/store/index.ts';
import { writeGgufWithMetadata } from '../models/llama/ggufFixture.ts';
import { CHATML } from '../models/llama/templates.fixture.ts';
import { tunedSettings } from '../models/tuned.ts';
import { cli } from '../test/cli.ts';
import { haveShared, tempDir, tinyModel } from '../test/fixtures.ts';

describe.skipIf(!haveShared)('flowlab tune', () => {
  it('measures 1 thread x two batch sizes, stores the best; run then uses it (tuned) unless --threads and --batch say otherwise (flag)', async () => {
    const dir = tempDir('tune');
    const model = path.join(dir, 'chatml.gguf');
    await writeGgufWithMetadata(tinyModel, model, { 'tokenizer.chat_template': CHATML });
    const env = { ...process.env, FLOWLAB_DEV: '1', FLOWLAB_TUNE_FILE: path.join(dir, 'tuned.json') };
    const tune = await cli(['tune', '--model', model, '--threads-list', '1', '--batches', '64,512', '--repeats', '1', '--json'], env);
    expect(tune.code, tune.err).toBe(0);
    const report = JSON.parse(tune.out) as { points: { threads: number; batchSize: number; tokensPerSecond: number }[]; best: { threads: number; batchSize: number }; default: { threads: number; batchSize: number } };
    expect(report.points.map((p) => [p.threads, p.batchSize])).toEqual([[1, 64], [1, 512]]);
    expect(report.points.every((p) => p.tokensPerSecond > 0)).toBe(true);
    expect(report.default).toMatchObject({ threads: 1, batchSize: 512 });
    expect(tunedSettings(model, env.FLOWLAB_TUNE_FILE)).toMatchObject({ threads: report.best.threads, batchSize: report.best.batchSize });

    const sources = async (extra: string[]) => {
      const db = path.join(dir, `run${extra.length}.db`);
      const run = await cli(['run', 'examples/gsm8k-single.yaml', '--dataset', 'gsm8k', '--limit', '1', '--model', model, '--db', db, '--json', ...extra], env);
      expect(run.code, run.err).toBe(0);
      const store = openStore(db);
      try {
        return store.getExperimentCalls(JSON.parse(run.out).experimentId).map((c) => c.applied);
      } finally {
        store.close();
      }
    };
    const tuned = await sources([]);
    expect(tuned[0]).toMatchObject({ threads: report.best.threads, batchSize: report.best.batchSize, source: { threads: 'tuned', batchSize: 'tuned' } });
    const flagged = await sources(['--threads', '1', '--batch', '128']);
    expect(flagged[0]).toMatchObject({ threads: 1, batchSize: 128, source: { threads: 'flag', batchSize: 'flag' } });
  });
});
