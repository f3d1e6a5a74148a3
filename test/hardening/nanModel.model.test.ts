/**
 * A GGUF with a valid header and NaN weights, written by Flowlab's own GGUF writer from the
 * tiny model: the CLI refuses it with MODEL_INVALID naming the file (no uncaught rejection, no
 * experiment left `running`, exit 1), and through the browser host (`flowlab serve`'s
 * `startServe`, over HTTP) addModel, testModel and startRun each give a typed error naming the
 * file while the server keeps answering.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../core/store/index.ts';
import { startServe } from '../../cli/commands/serve.ts';
import { writeNonFiniteGguf } from '../../models/llama/ggufFixture.ts';
import { cli } from '../cli.ts';
import { haveShared, noteSkip, scratchDir, tinyModel, writeGsm8kTasks } from '../fixtures.ts';

const dir = scratchDir('nan');
if (!haveShared) noteSkip('hardening', 'the NaN-weights model checks', tinyModel);

describe.skipIf(!haveShared)('a NaN-weights GGUF', () => {
  it('flowlab run: MODEL_INVALID naming the file, exit 1, nothing left running', async () => {
    const nan = path.join(dir(), 'nan-weights.gguf');
    await writeNonFiniteGguf(tinyModel, nan);
    const db = path.join(dir(), 'cli.db');
    const r = await cli(['run', 'examples/gsm8k-single.yaml', '--dataset', 'gsm8k', '--limit', '1', '--model', nan, '--threads', '1', '--db', db]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`flowlab run: Model file ${nan} has a non-finite weight (NaN) in tensor "token_embd.weight" at element 0: it cannot generate [MODEL_INVALID]`);
    expect(r.err).not.toMatch(/triggerUncaughtException|Failed to accept token|Node\.js v/);
    const store = openStore(db, { mustExist: true });
    try {
      expect(store.listExperiments().filter((e) => e.status === 'running')).toEqual([]);
    } finally {
      store.close();
    }
  });

  it('the browser host: addModel, testModel and startRun are typed errors naming the file; the host still answers', async () => {
    const models = path.join(dir(), 'models');
    mkdirSync(models, { recursive: true });
    const nan = path.join(models, 'nan-weights.gguf');
    await writeNonFiniteGguf(tinyModel, nan);
    copyFileSync(tinyModel, path.join(models, 'stories260K.gguf'));
    writeGsm8kTasks(path.join(dir(), 'data'));
    const serve = await startServe({ port: 0, host: '127.0.0.1', db: path.join(dir(), 'lab.db'), models, dataDir: path.join(dir(), 'data'), renderer: path.join(dir(), 'no-renderer') });
    const { server } = serve;
    const post = async (method: string, body: unknown) => {
      const res = await fetch(`http://127.0.0.1:${server.port}/api/${method}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-flowlab-token': server.token }, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as { error?: { code: string; field?: string; message: string } } & Record<string, unknown> };
    };
    try {
      const why = `Model file ${nan} has a non-finite weight (NaN) in tensor "token_embd.weight" at element 0`;
      const added = await post('addModel', { path: nan });
      expect([added.status, added.body.error?.code, added.body.error?.field]).toEqual([400, 'BAD_REQUEST', 'path']);
      expect(added.body.error?.message).toContain(why);
      const tested = await post('testModel', { path: nan, prompt: 'Once upon a time', maxTokens: 4 });
      expect([tested.status, tested.body.error?.code, tested.body.error?.field]).toEqual([400, 'BAD_REQUEST', 'path']);
      expect(tested.body.error?.message).toContain(why);
      const started = await post('startRun', { workflowText: 'name: one\nroles:\n  solver: { kind: executor, instructions: Solve. }\nsteps:\n  - id: solve\n    role: solver\n    prompt: "Q: {{task.question}}"\n    output: { schema: { type: object, properties: { answer: { type: number } }, required: [answer] } }\nanswer: solve.answer\n', dataset: 'gsm8k', split: 'test', limit: 1, seed: 1, threads: 1, models: { default: nan } });
      expect([started.status, started.body.error?.code, started.body.error?.field]).toEqual([400, 'BAD_REQUEST', 'models.default']);
      expect(started.body.error?.message).toContain(why);
      // Still answering, and the good model still generates.
      const list = await post('listModels', {});
      expect(list.status).toBe(200);
      const good = await post('testModel', { path: path.join(models, 'stories260K.gguf'), prompt: 'Once upon a time', maxTokens: 4 });
      expect(good.status).toBe(200);
      expect(typeof (good.body.result as { text?: unknown }).text).toBe('string');
      expect(serve.store.listExperiments().filter((e) => e.status === 'running')).toEqual([]);
    } finally {
      await serve.stop();
    }
  });
});
