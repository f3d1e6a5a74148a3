import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../core/store/index.ts';
import { cli } from '../test/cli.ts';
import { haveShared, killAfterRuns, noteSkip, tempDir, tinyModel as model } from '../test/fixtures.ts';

if (!haveShared) noteSkip('cli.model.test', 'the model-dependent CLI tests', `${model} or the GSM8K data`);
const tmp = () => tempDir('cli');
/** How long a test waits for a child CLI to store what it kills it after (a model to load, on a loaded 2-core machine). */
const KILL_WAIT_MS = 180_000;

describe.skipIf(!haveShared)('flowlab run / replay / resume with the real tiny model', () => {
  it('runs gsm8k-team on real tasks, stores every node event and call, and replays them identically without a model', async () => {
    const dir = tmp();
    const db = path.join(dir, 'run.db');
    const run = await cli(['run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--limit', '3', '--model', model, '--db', db, '--json']);
    expect(run.code, run.err).toBe(0);
    const report = JSON.parse(run.out);
    expect(report.runs).toBe(3);
    expect(report.promptTokens).toBeGreaterThan(0);
    const store = openStore(db);
    const exp = store.getExperiment(report.experimentId);
    expect(exp.status).toBe('completed');
    const runs = store.listRuns(exp.id);
    expect(runs.map((r) => r.taskIndex)).toEqual([0, 1, 2]);
    const events = runs.flatMap((r) => store.getRunEvents(r.runId));
    expect(new Set(events.filter((e) => e.attempt === 1).map((e) => e.nodeId))).toEqual(new Set(['plan', 'solve', 'calculate', 'verify', 'answer']));
    const calls = events.flatMap((e) => e.calls);
    expect(calls.length).toBeGreaterThanOrEqual(6);
    expect(calls.every((c) => c.model === 'stories260K.gguf' && c.promptTokens > 0)).toBe(true);
    // The solver decodes under the JSON-schema grammar: its completions always parse.
    for (const c of calls.filter((c) => c.jsonSchema && c.stopReason !== 'maxTokens')) expect(() => JSON.parse(c.completion)).not.toThrow();
    store.close();

    const replay = await cli(['replay', report.experimentId, '--db', db, '--json']);
    expect(replay.code, replay.err).toBe(0);
    const r = JSON.parse(replay.out);
    expect(r).toMatchObject({ experimentId: report.experimentId, nodes: events.length, matched: events.length, mismatched: 0, modelsLoaded: 0 });
    expect(r.wallSeconds).toBeLessThan(report.wallSeconds);
  });

  it('SIGKILL in the middle of a 10-task experiment, then resume: exactly 10 runs, none duplicated, none lost', async () => {
    const dir = tmp();
    const db = path.join(dir, 'kill.db');
    const child = spawn(process.execPath, ['bin/flowlab.js', 'run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--limit', '10', '--model', model, '--db', db], { stdio: 'ignore' });
    // Some (not all) runs stored, then kill -9 (test/fixtures.ts killAfterRuns).
    const stored = await killAfterRuns(child, db, 3, KILL_WAIT_MS);
    expect(stored).toBeGreaterThanOrEqual(3);

    const store = openStore(db); // opening marks the dead process's experiment interrupted
    const exp = store.listExperiments()[0]!;
    expect(exp.status).toBe('interrupted');
    const before = store.listRuns(exp.id);
    expect(before.length).toBeLessThan(10);
    store.close();

    const resumed = await cli(['resume', exp.id, '--db', db, '--json']);
    expect(resumed.code, resumed.err).toBe(0);
    expect(JSON.parse(resumed.out)).toMatchObject({ runs: 10, tasksPlanned: 10, status: 'completed' });

    const after = openStore(db);
    const runs = after.listRuns(exp.id);
    expect(runs).toHaveLength(10);
    expect(runs.map((r) => r.taskIndex)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const b of before) expect(runs.find((r) => r.runId === b.runId)).toEqual(b);
    expect(after.getExperiment(exp.id).status).toBe('completed');
    after.close();
  }, 300_000);

  it('blame-eval with two injected roles prints the table; surfaced kinds have recall 1.0; show marks roots and cascades', async () => {
    const dir = tmp();
    const db = path.join(dir, 'blame.db');
    const args = ['blame-eval', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--limit', '4', '--runs', '12', '--model', model, '--db', db, '--inject', 'planner=error@0.4', '--inject', 'solver=timeout@0.6'];
    const json = await cli([...args, '--json']);
    expect(json.code, json.err).toBe(0);
    const b = JSON.parse(json.out);
    expect(b.simulated).toBe(true);
    expect(b.runs).toBe(12);
    expect(b.byRole.planner.injected).toBeGreaterThan(0);
    expect(b.byRole.planner).toMatchObject({ precision: 1, recall: 1 });
    expect(b.byKind.error).toMatchObject({ precision: 1, recall: 1 });
    if (b.byKind.timeout.injected) expect(b.byKind.timeout).toMatchObject({ precision: 1, recall: 1 });
    expect(b.cascadesNotBlamed).toBe(b.cascadesTotal);
    expect(b.cascadesTotal).toBeGreaterThan(0);

    const table = await cli(args.map((a) => (a === db ? path.join(dir, 'blame2.db') : a)));
    expect(table.code, table.err).toBe(0);
    expect(table.out).toContain('SIMULATED faults (planner=error@0.4, solver=timeout@0.6)');
    expect(table.out).toMatch(/planner\s+│ 1\.00\s+│ 1\.00/);
    expect(table.out).toContain('Natural failures');

    const store = openStore(db);
    const run = store.listRuns(b.experimentId).find((r) => r.credit!.roots.length > 0)!;
    store.close();
    const show = await cli(['show', run.runId, '--db', db]);
    expect(show.code, show.err).toBe(0);
    expect(show.out).toContain('ROOT FAILURE');
    expect(show.out).toContain('CASCADE of');
    expect(show.out).toContain('Reward ladder');
    expect(show.out).toMatch(/planner\s+│/);
  });
});
