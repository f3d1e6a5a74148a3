/**
 * A machine without node-llama-cpp's platform binary package (simulated by the binary check's
 * injectable resolver): the lab still opens, lists its models marked unavailable with the
 * package, the folders searched and the fix, and answers UNAVAILABLE (not INTERNAL) to the
 * calls that would load a model. The runtime's own start failure gets the same explanation.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../core/api/index.ts';
import { ScriptedProvider } from '../core/model/index.ts';
import { explainLlamaStartFailure, llamaBinaryPackage, llamaBinaryStatus } from '../models/llama/binary.ts';
import { labPerTest, writeGsm8kTasks } from '../test/fixtures.ts';
import { createLabHost } from './index.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const SINGLE = readFileSync(path.join(ROOT, 'examples/gsm8k-single.yaml'), 'utf8');
const pkg = llamaBinaryPackage()!;
const missing = () => llamaBinaryStatus({ resolve: () => undefined });

const t = labPerTest('llama-binary', (h) => {
  writeGsm8kTasks(path.join(h.dir, 'data'));
  mkdirSync(path.join(h.dir, 'models'));
  writeFileSync(path.join(h.dir, 'models', 'tiny.gguf'), 'GGUF');
  return createLabHost({
    store: h.store, dbFile: path.join(h.dir, 'lab.db'), modelDir: path.join(h.dir, 'models'), examplesDir: path.join(ROOT, 'examples'),
    dataDir: path.join(h.dir, 'data'), emit: (e) => h.events.push(e),
    createProvider: async () => new ScriptedProvider(() => '{"answer": 4}'),
    checkModel: async () => {},
    readHeader: async () => ({ architecture: 'llama', fileType: 'F32', hasChatTemplate: false }),
    llamaBinary: missing,
  });
});

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(() => new Error('expected a rejection'), (e: unknown) => e);
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('the llama.cpp binary package is missing', () => {
  it('the status names the package, the folders searched and the command that installs it', () => {
    const s = missing();
    expect(s.ok).toBe(false);
    expect(s.package).toBe(pkg);
    expect(s.searched[0]).toMatch(new RegExp(`node_modules[\\\\/]${pkg.replace('/', '[\\\\/]')}$`));
    expect(s.fix).toMatch(new RegExp(`^npm install --no-save ${pkg}@\\d+\\.\\d+\\.\\d+$`));
    expect(s.message).toContain(pkg);
    expect(s.message).toContain(s.searched[0]);
    expect(s.message).toContain(s.fix);
    expect(llamaBinaryStatus().ok).toBe(true); // this machine has it
  });

  it('models are listed, marked unavailable; testModel and startRun answer UNAVAILABLE with the message', async () => {
    const [entry] = await t.api.listModels();
    expect(entry).toMatchObject({ fileName: 'tiny.gguf', info: { architecture: 'llama' } });
    expect(entry!.unavailable).toContain(`${pkg} (node-llama-cpp's prebuilt binary for this machine) is not installed`);
    const test = await rejection(t.api.testModel({ path: path.join(t.dir, 'models', 'tiny.gguf'), prompt: 'Hi' }));
    expect(test.code).toBe('UNAVAILABLE');
    const start = await rejection(t.api.startRun({ workflowText: SINGLE, dataset: 'gsm8k', split: 'test', limit: 1, seed: 1, models: { default: path.join(t.dir, 'models', 'tiny.gguf') } }));
    expect(start.code).toBe('UNAVAILABLE');
    expect(start.message).toContain('npm install --no-save');
  });

  it("getLlama's NoBinaryFoundError becomes the named-path message; a binary that is there but does not load gets the reinstall command", () => {
    const noBinary = Object.assign(new Error('NoBinaryFoundError'), { name: 'NoBinaryFoundError' });
    expect(explainLlamaStartFailure(noBinary, missing())).toMatch(new RegExp(`^The llama.cpp binary package ${pkg} .*searched .*node_modules.*npm install --no-save .*\\(node-llama-cpp said: NoBinaryFoundError: NoBinaryFoundError\\)$`));
    const badElf = new Error('libllama.so: invalid ELF header');
    const text = explainLlamaStartFailure(badElf, llamaBinaryStatus());
    expect(text).toContain(`(${pkg}) did not load: libllama.so: invalid ELF header`);
    expect(text).toContain('npm install --no-save --force');
  });
});
