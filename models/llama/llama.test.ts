/** The node-llama-cpp adapter without a model: file checks, refs, dispose and abort before any work. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LlamaProvider, readGgufInfo } from './index.ts';
import { expectModelError, req, STORIES } from './testing.ts';

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'flowlab-llama-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('file checks and refs (no model needed)', () => {
  it('missing file: MODEL_NOT_FOUND naming the path, from readGgufInfo and from generate', async () => {
    const missing = path.join(tmp, 'nope.gguf');
    await expectModelError(readGgufInfo(missing), 'MODEL_NOT_FOUND', `Model file not found: ${missing}`);
    const p = new LlamaProvider({ models: { default: { path: missing } } });
    const e = await expectModelError(p.generate(req()), 'MODEL_NOT_FOUND', missing);
    expect(e.where).toBe(missing);
    expect(p.modelsLoaded()).toBe(0);
    await p.dispose();
  });

  it('a directory: MODEL_INVALID saying so', async () => {
    await expectModelError(readGgufInfo(tmp), 'MODEL_INVALID', tmp, 'directory');
    const p = new LlamaProvider({ models: { default: { path: tmp } } });
    await expectModelError(p.load(), 'MODEL_INVALID', tmp, 'directory');
    await p.dispose();
  });

  it('random bytes and an empty file: MODEL_INVALID naming the file and the missing magic', async () => {
    const junk = path.join(tmp, 'junk.gguf');
    await writeFile(junk, Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) & 255)));
    await expectModelError(readGgufInfo(junk), 'MODEL_INVALID', junk, 'Not a GGUF file', 'GGUF');
    const empty = path.join(tmp, 'empty.gguf');
    await writeFile(empty, Buffer.alloc(0));
    await expectModelError(readGgufInfo(empty), 'MODEL_INVALID', empty, 'empty file');
    const p = new LlamaProvider({ models: { default: { path: junk } } });
    await expectModelError(p.generate(req()), 'MODEL_INVALID', junk);
    await p.dispose();
  });

  it('unknown ref: MODEL_UNKNOWN_REF listing the known refs', async () => {
    const p = new LlamaProvider({ models: { default: { path: STORIES } } });
    const e = await expectModelError(p.generate(req({ model: 'critic' })), 'MODEL_UNKNOWN_REF', '"critic"', '"default"');
    expect(e.where).toBe('critic');
    await expectModelError(p.load('critic'), 'MODEL_UNKNOWN_REF');
    await p.dispose();
  });

  it('use after dispose throws', async () => {
    const p = new LlamaProvider({ models: { default: { path: STORIES } } });
    await p.dispose();
    await expectModelError(p.generate(req()), 'GENERATION_FAILED', 'disposed');
    await expectModelError(p.load(), 'GENERATION_FAILED', 'disposed');
  });

  it('an already aborted signal: ABORTED before any work', async () => {
    const p = new LlamaProvider({ models: { default: { path: STORIES } } });
    await expectModelError(p.generate(req({ signal: AbortSignal.abort() })), 'ABORTED');
    expect(p.modelsLoaded()).toBe(0);
    await p.dispose();
  });
});
