/**
 * `flowlab serve-model` and `flowlab probe` with the tiny real model, through the real CLI:
 * - probe says "schema enforced" against serve-model and "schema ignored" against
 *   `serve-model --no-grammar`, and stores both verdicts;
 * - the README's main job runs end to end with every role on the served endpoint;
 * - on the schema-ignoring server a run still ends with contract-checked outputs or typed
 *   failures, never unchecked ones;
 * - the stored runs replay with no model and no server;
 * - the API key (the enforcing server requires one) is in no stored byte.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, storedModels } from '../core/store/index.ts';
import { defaultTools } from '../core/tools/index.ts';
import { jsonSchemaValidator, loadWorkflowFile } from '../core/workflow/index.ts';
import { startModelServer, type ModelServer } from '../host/modelServer.ts';
import { cli } from '../test/cli.ts';
import { haveShared, noteSkip, scratchDir, tinyModel } from '../test/fixtures.ts';

if (!haveShared) noteSkip('serve-model', 'serve-model and probe', tinyModel);
const dir = scratchDir('serve-model');
let enforcing: ModelServer | undefined;
const KEY = `sk-flowlab-test-${process.pid}-${Date.now()}`;
let ignoring: { child: ChildProcess; baseUrl: string } | undefined;

/** Starts `flowlab serve-model ... --no-grammar` and waits for the URL it prints. */
function serveModelCli(args: string[]): Promise<{ child: ChildProcess; baseUrl: string }> {
  const child = spawn(process.execPath, ['bin/flowlab.js', 'serve-model', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    child.stdout!.on('data', (d) => {
      out += d;
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) resolve({ child, baseUrl: line.trim() });
    });
    child.on('exit', (code) => reject(new Error(`serve-model exited ${code}: ${err}`)));
  });
}

describe.skipIf(!haveShared)('serve-model + probe + the main job on the served endpoint', () => {
  const env = () => ({ ...process.env, FLOWLAB_PROBES: path.join(dir(), 'probes.json'), FLOWLAB_TEST_KEY: KEY });
  // The enforcing server wants a key; the references name its variable, never the key.
  const served = () => `openai:${enforcing!.baseUrl}#stories260K&key=FLOWLAB_TEST_KEY`;
  const db = () => path.join(dir(), 'flowlab.db');
  const experiments: string[] = [];

  beforeAll(async () => {
    [enforcing, ignoring] = await Promise.all([
      startModelServer({ models: { stories260K: tinyModel }, threads: 1, keyEnv: 'FLOWLAB_TEST_KEY', env: { FLOWLAB_TEST_KEY: KEY } }),
      serveModelCli([tinyModel, '--port', '0', '--threads', '1', '--no-grammar']),
    ]);
  }, 120_000);
  afterAll(async () => {
    await enforcing?.close();
    ignoring?.child.kill('SIGTERM');
  });

  it('probe: "schema enforced" against serve-model, "schema ignored" against serve-model --no-grammar; both stored', async () => {
    const a = await cli(['probe', served()], env());
    expect(a.code, a.err).toBe(0);
    expect(a.out).toMatch(/schema {2}schema enforced/);
    expect(a.out).toMatch(/seed {4}same seed, same text/);
    expect(a.out).toMatch(/usage {3}usage matches text/);
    const b = await cli(['probe', `openai:${ignoring!.baseUrl}#stories260K`], env());
    expect(b.code, b.err).toBe(0);
    expect(b.out).toMatch(/schema {2}schema ignored/);
    expect(b.out).toMatch(/0\/2 replies valid under the probe schema/);
    const stored = JSON.parse(readFileSync(path.join(dir(), 'probes.json'), 'utf8')) as Record<string, { schema: string }>;
    expect(stored[`${enforcing!.baseUrl}#stories260K`]!.schema).toBe('enforced');
    expect(stored[`${ignoring!.baseUrl}#stories260K`]!.schema).toBe('ignored');
  }, 120_000);

  it("the README's main job runs end to end with every role on the served endpoint", async () => {
    const r = await cli(['run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--split', 'test', '--limit', '10', '--model', served(), '--db', db(), '--json'], env());
    expect(r.code, r.err).toBe(0);
    const report = JSON.parse(r.out) as { experimentId: string; runs: number; status: string };
    expect([report.runs, report.status]).toEqual([10, 'completed']);
    experiments.push(report.experimentId);
    const store = openStore(db());
    try {
      const calls = store.getExperimentCalls(report.experimentId);
      expect(calls.length).toBeGreaterThanOrEqual(10);
      // Every role is on the endpoint, and every call went to the server: the model is its served id, not the local file name.
      const cfg = storedModels(store.getExperiment(report.experimentId))!;
      expect(cfg.roleModels).toEqual({ planner: 'default', solver: 'default', verifier: 'default', answerer: 'default' });
      expect(cfg.models).toEqual({ default: served() });
      expect(new Set(calls.map((c) => c.model))).toEqual(new Set(['stories260K']));
      expect(calls.every((c) => c.promptTokens > 0 && c.completionTokens > 0)).toBe(true);
    } finally {
      store.close();
    }
  }, 180_000);

  it('against the schema-ignoring server a run ends with contract-checked outputs or typed failures', async () => {
    const r = await cli(['run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--split', 'test', '--limit', '3', '--model', `openai:${ignoring!.baseUrl}#stories260K`, '--db', db(), '--json'], env());
    expect(r.code, r.err).toBe(0);
    const report = JSON.parse(r.out) as { experimentId: string; runs: number };
    expect(report.runs).toBe(3);
    experiments.push(report.experimentId);
    const graph = loadWorkflowFile(path.resolve('examples/gsm8k-team.yaml'), { tools: defaultTools() }).graph;
    const store = openStore(db());
    try {
      // Every node with a schema (solve) that ran (not a cascade) either holds an output valid under it, or failed with the engine's typed contract codes.
      let schemaNodes = 0;
      for (const run of store.listRuns(report.experimentId)) {
        for (const e of store.getRunEvents(run.runId)) {
          const schema = graph.nodes.find((n) => n.id === e.nodeId)?.contract?.schema;
          if (e.status !== 'ok') expect(e.errorCode, `${e.nodeId} ${e.status}`).toMatch(/^[A-Z_]+$/);
          if (!schema) continue;
          if (e.errorCode === 'UPSTREAM_FAILED') continue;
          schemaNodes++;
          if (e.status === 'ok') expect(jsonSchemaValidator.validate(schema, e.output), `${e.nodeId}: ${JSON.stringify(e.output)}`).toBe(true);
          else expect(['UNPARSABLE_OUTPUT', 'CONTRACT_VIOLATION']).toContain(e.errorCode);
        }
      }
      expect(schemaNodes).toBeGreaterThan(0);
    } finally {
      store.close();
    }
  }, 180_000);

  it('the API key is in no stored byte: not in the database, not in the probe verdicts', () => {
    const files = readdirSync(dir()).filter((f) => f.startsWith('flowlab.db'));
    expect(files).toContain('flowlab.db');
    for (const f of files) expect(readFileSync(path.join(dir(), f)).includes(Buffer.from(KEY)), f).toBe(false);
    expect(readFileSync(path.join(dir(), 'probes.json'), 'utf8')).not.toContain(KEY);
  });

  it('the stored runs replay with no model and no server', async () => {
    await enforcing!.close();
    ignoring!.child.kill('SIGTERM');
    expect(experiments).toHaveLength(2);
    for (const id of experiments) {
      const r = await cli(['replay', id, '--db', db()], env());
      expect(r.code, r.err).toBe(0);
      expect(r.out).toMatch(/models loaded: 0/);
      expect(r.out).toMatch(/(\d+) \/ \1 identical, 0 mismatched/);
    }
  }, 120_000);
});
