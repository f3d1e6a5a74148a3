/**
 * An API key from the OS keychain, end to end through the real CLI (Linux: a fake `secret-tool`
 * first on PATH): `flowlab run` with every role on a key-protected `serve-model` endpoint whose
 * reference names the keychain entry; the key is sent (the server answers only with it), and it
 * is in no stored byte (the SQLite files) and not in the exported trace (OTLP/JSON with content).
 * A missing entry fails the calls with the message that names the command storing it.
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../core/store/index.ts';
import { startModelServer, type ModelServer } from '../host/modelServer.ts';
import { cli } from '../test/cli.ts';
import { haveShared, noteSkip, scratchDir, tinyModel } from '../test/fixtures.ts';

const linux = process.platform === 'linux';
if (!haveShared) noteSkip('keychain', 'the keychain run', tinyModel);
const dir = scratchDir('keychain-run');
const KEY = `sk-flowlab-keychain-${process.pid}-${Date.now()}`;

describe.skipIf(!haveShared || !linux)('an API key from the keychain reaches the server and nothing stored', () => {
  let server: ModelServer | undefined;
  beforeAll(async () => {
    server = await startModelServer({ models: { stories260K: tinyModel }, threads: 1, keyEnv: 'SERVED_KEY', env: { SERVED_KEY: KEY } });
  }, 120_000);
  afterAll(() => server?.close());

  const env = () => {
    const bin = path.join(dir(), 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(path.join(bin, 'secret-tool'), `#!/bin/sh\n[ "$*" = "lookup service flowlab-test account me" ] && { printf '%s' '${KEY}'; exit 0; }\nexit 1\n`);
    chmodSync(path.join(bin, 'secret-tool'), 0o755);
    const { FLOWLAB_TEST_KEY: _drop, ...rest } = process.env;
    return { ...rest, PATH: `${bin}:${process.env.PATH ?? ''}`, FLOWLAB_PROBES: path.join(dir(), 'probes.json') };
  };
  const db = () => path.join(dir(), 'flowlab.db');
  const ref = (account: string) => `openai:${server!.baseUrl}#stories260K&keychain=flowlab-test/${account}&retries=0`;
  /** Runs the main job on `limit` tasks with the key from `account`'s entry, then `check`s the stored experiment. */
  const runOn = async (account: string, limit: number, check: (store: ReturnType<typeof openStore>, experimentId: string) => void) => {
    const r = await cli(['run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--split', 'test', '--limit', String(limit), '--model', ref(account), '--db', db(), '--json'], env());
    expect(r.code, r.err).toBe(0);
    const { experimentId } = JSON.parse(r.out) as { experimentId: string };
    const store = openStore(db());
    try {
      check(store, experimentId);
    } finally {
      store.close();
    }
    return experimentId;
  };

  it('a run on the endpoint gets its answers with the key, which is stored nowhere', async () => {
    const experimentId = await runOn('me', 2, (store, id) => {
      const calls = store.getExperimentCalls(id);
      expect(calls.length).toBeGreaterThan(0);
      expect(calls.every((c) => c.model === 'stories260K' && c.completionTokens > 0)).toBe(true);
      expect(JSON.stringify(store.getExperiment(id).config)).toContain('keychain=flowlab-test/me');
    });
    const trace = path.join(dir(), 'traces.json');
    const x = await cli(['export', experimentId, '--format', 'otlp-json', '--out', trace, '--with-content', '--db', db()], env());
    expect(x.code, x.err).toBe(0);
    const exported = readdirSync(dir()).filter((f) => f.startsWith('traces')).map((f) => path.join(dir(), f));
    expect(exported.length).toBeGreaterThan(0);
    const files = [...readdirSync(dir()).filter((f) => f.startsWith('flowlab.db')).map((f) => path.join(dir(), f)), ...exported];
    for (const f of files) expect(readFileSync(f).includes(Buffer.from(KEY)), f).toBe(false);
    expect(server!.stats.completed).toBeGreaterThan(0);
  }, 180_000);

  it('a missing entry fails the calls naming the entry and the command that stores it', async () => {
    await runOn('nobody', 1, (store, id) => {
      const failed = store.listRuns(id).flatMap((run) => store.getRunEvents(run.runId)).filter((e) => e.errorCode === 'GENERATION_FAILED');
      expect(failed.length).toBeGreaterThan(0);
      expect(failed[0]!.message).toMatch(/no key in keychain entry service "flowlab-test" account "nobody".*store it with: secret-tool store --label='Flowlab flowlab-test' service 'flowlab-test' account 'nobody'/);
    });
  }, 120_000);
});
