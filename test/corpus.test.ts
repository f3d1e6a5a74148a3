/**
 * The standing corpus of malformed inputs (test/corpus/): every entry must get a clear, typed
 * error with its code naming its file or field and place, without a crash, a hang (each under
 * LIMIT_MS) or a changed database row. API entries go over HTTP to `flowlab serve`'s server
 * (the browser host), which must still answer afterwards; the `spawn: true` CLI entries also run
 * as child processes. Prints `corpus: tried N, clear errors N, crashes 0, hangs 0, rows changed 0`.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe } from '../cli/commands/serve.ts';
import { ScriptedProvider } from '../core/model/index.ts';
import { startModelServer } from '../host/modelServer.ts';
import { writeNonFiniteGguf } from '../models/llama/ggufFixture.ts';
import { cli } from './cli.ts';
import { CORPUS, runEntry, seedDatabase, spawnEntry, type Outcome, type Served } from './corpus/index.ts';
import type { CliEntry, Ctx } from './corpus/types.ts';
import { haveShared, noteSkip, tempDir, tinyModel, writeGsm8kTasks } from './fixtures.ts';

if (!haveShared) noteSkip('corpus', 'the entries that need the tiny model', tinyModel);
/** Entries that need the shared tiny model (GGUFs made from it; API calls on its NaN copy or on it). */
const needsModel = (e: (typeof CORPUS)[number]) => (e.via === 'gguf' && e.needsModel) || (e.via === 'api' && /nan|tiny/.test(JSON.stringify(e.payload ?? '')));
const entries = CORPUS.filter((e) => haveShared || !needsModel(e));

const root = tempDir('corpus');
const outcomes: Outcome[] = [];
let served: Served;
let stopServe: () => Promise<void>;
let n = 0;
const ctxFor = (): Ctx => {
  const dir = path.join(root, `e${n++}`);
  mkdirSync(dir, { recursive: true });
  const db = path.join(dir, 'seeded.db');
  seedDatabase(db);
  return { dir, db, model: tinyModel };
};

beforeAll(async () => {
  const lab = path.join(root, 'lab');
  const models = path.join(lab, 'models');
  mkdirSync(models, { recursive: true });
  writeFileSync(path.join(models, 'text.gguf'), 'not a model\n');
  if (haveShared) {
    copyFileSync(tinyModel, path.join(models, 'tiny.gguf'));
    writeFileSync(path.join(models, 'cut.gguf'), readFileSync(tinyModel).subarray(0, 4096));
    await writeNonFiniteGguf(tinyModel, path.join(models, 'nan.gguf'));
  } else writeFileSync(path.join(models, 'cut.gguf'), Buffer.from('GGUF\x03\x00\x00\x00'));
  writeGsm8kTasks(path.join(lab, 'data'));
  const serve = await startServe({ port: 0, host: '127.0.0.1', db: path.join(lab, 'lab.db'), models, dataDir: path.join(lab, 'data'), renderer: path.join(lab, 'no-renderer') });
  // serve-model's server with a SIMULATED provider: every model entry must be refused before generation.
  const modelServer = await startModelServer({ models: { tiny: path.join(models, 'tiny.gguf') }, provider: new ScriptedProvider(() => 'SIMULATED') });
  served = { port: serve.server.port, token: serve.server.token, dir: lab, modelPort: modelServer.port };
  stopServe = async () => {
    await modelServer.close();
    await serve.stop();
    expect(modelServer.stats.completed).toBe(0);
  };
});

afterAll(async () => {
  await stopServe?.();
  const count = (f: (o: Outcome) => boolean) => outcomes.filter(f).length;
  console.log(`corpus: tried ${outcomes.length}, clear errors ${count((o) => o.clear)}, crashes ${count((o) => o.crashed)}, hangs ${count((o) => o.hung)}, rows changed ${count((o) => o.rowsChanged)}`);
});

describe('the corpus of malformed inputs', () => {
  it('has at least 330 entries, each id once', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(330);
    expect(new Set(CORPUS.map((e) => e.id)).size).toBe(CORPUS.length);
  });

  for (const entry of entries) {
    it(entry.id, async () => {
      const o = await runEntry(entry, ctxFor(), served);
      outcomes.push(o);
      expect(o.problems).toEqual([]);
    });
  }

  it('the CLI as a child process: the representative entries exit with a status, not a signal', async () => {
    const spawned = entries.filter((e): e is CliEntry => e.via === 'cli' && e.spawn === true);
    expect(spawned.length).toBeGreaterThanOrEqual(5);
    const results = await Promise.all(spawned.map((e) => spawnEntry(e, ctxFor(), cli)));
    outcomes.push(...results);
    expect(results.filter((o) => o.problems.length).map((o) => [o.id, o.problems])).toEqual([]);
  });

  it('the host still answers after every API entry', async () => {
    const res = await fetch(`http://127.0.0.1:${served.port}/api/listExperiments`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-flowlab-token': served.token }, body: '{}' });
    expect(res.status).toBe(200);
  });

  it('0 crashes, 0 hangs, 0 rows changed, every error clear', () => {
    expect(outcomes.length).toBeGreaterThanOrEqual(entries.length);
    expect(outcomes.filter((o) => o.crashed || o.hung || o.rowsChanged || !o.clear).map((o) => o.id)).toEqual([]);
  });
});
