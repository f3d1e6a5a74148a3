/**
 * `flowlab job resume <kind> <id>` for the kinds that resume through `flowlab resume` (run,
 * blame-eval, rollouts, train-loop: the registry's `resumeVia`), as the lab's `resumeJob` routes
 * them to `resumeRun`: an experiment killed mid-run is finished by `job resume run`, with exactly
 * its missing tasks, none duplicated. Against a loopback OpenAI-compatible server
 * (bench/latencyServer.mjs, SIMULATED: its answers are a function of the prompt), no model file.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../core/store/index.ts';
import { startLatencyServer, type LatencyServer } from '../bench/latencyServer.mjs';
import { cli } from '../test/cli.ts';
import { killAfterRuns, tempDir } from '../test/fixtures.ts';

const TASKS = 12;

describe('flowlab job resume run', () => {
  let server: LatencyServer;
  const dir = tempDir('job-resume');
  const dataDir = path.join(dir, 'data');
  beforeAll(async () => {
    server = await startLatencyServer({ latencyMs: 150 });
    mkdirSync(path.join(dataDir, 'gsm8k'), { recursive: true });
    const lines = Array.from({ length: TASKS }, (_, i) => JSON.stringify({ question: `What is ${i + 3} + ${2 * i + 1}?`, answer: `work\n#### ${3 * i + 4}` }));
    writeFileSync(path.join(dataDir, 'gsm8k/test.jsonl'), lines.join('\n') + '\n');
  });
  afterAll(() => server.close());

  it('finishes an experiment killed mid-run: every task once, the stored runs kept', async () => {
    const db = path.join(dir, 'kill.db');
    const ref = `openai:${server.baseUrl}#latency`;
    const child = spawn(process.execPath, ['bin/flowlab.js', 'run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--limit', String(TASKS), '--model', ref, '--db', db, '--data-dir', dataDir], { stdio: 'ignore' });
    const stored = await killAfterRuns(child, db, 2, 120_000);
    expect(stored).toBeGreaterThanOrEqual(2);

    const store = openStore(db); // marks the dead process's experiment interrupted
    const exp = store.listExperiments()[0]!;
    const before = store.listRuns(exp.id);
    expect(exp.status).toBe('interrupted');
    expect(before.length).toBeLessThan(TASKS);
    store.close();

    // Before the fix: `kind: job kind "run" is not resumed through the job table`, exit 2.
    const resumed = await cli(['job', 'resume', 'run', exp.id, '--db', db]);
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.err).toContain(`Resuming ${exp.id}: ${TASKS - before.length} task(s) left.`);

    const after = openStore(db);
    const runs = after.listRuns(exp.id);
    expect(runs.map((r) => r.taskIndex)).toEqual(Array.from({ length: TASKS }, (_, i) => i));
    for (const b of before) expect(runs.find((r) => r.runId === b.runId)).toEqual(b);
    expect(after.getExperiment(exp.id).status).toBe('completed');
    after.close();
  }, 180_000);

  it('a kind with no resume at all is still refused with its field', async () => {
    const r = await cli(['job', 'resume', 'download', 'x', '--db', path.join(dir, 'none.db')]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('kind: job kind "download" cannot be resumed');
    // A refused job leaves no new database behind (it left an empty store).
    expect(existsSync(path.join(dir, 'none.db'))).toBe(false);
    const start = await cli(['job', 'start', 'evolve', '--spec', '{"dataset":"learn-design","model":"/nowhere.gguf"}', '--db', path.join(dir, 'refused.db')]);
    expect(start.code).toBe(2);
    expect(start.err).toContain('kind: job kind "evolve" is not started through startJob');
    expect(existsSync(path.join(dir, 'refused.db'))).toBe(false);
  });
});
