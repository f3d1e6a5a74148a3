import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../core/store/index.ts';
import { cli } from '../test/cli.ts';
import { haveShared, noteSkip, tempDir, tinyModel as model } from '../test/fixtures.ts';

if (!haveShared) noteSkip('fork.model.test', 'flowlab fork on the main job', `${model} or the GSM8K data`);

let db = '';
let parentId = '';

/** The parent run and every event of it, as stored (to check a fork leaves it unchanged). */
function stored(runId: string): string {
  const store = openStore(db);
  try {
    return JSON.stringify({ run: store.getRun(runId), events: store.getRunEvents(runId) });
  } finally {
    store.close();
  }
}

describe.skipIf(!haveShared)('flowlab fork on the recorded main job (gsm8k-team, stories260K, one thread)', () => {
  beforeAll(async () => {
    db = path.join(tempDir('cli-fork-model'), 'fork.db');
    const r = await cli(['run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--split', 'test', '--limit', '1', '--model', model, '--threads', '1', '--db', db, '--json']);
    expect(r.code, r.err).toBe(0);
    parentId = `${JSON.parse(r.out).experimentId as string}/0`;
  }, 120_000);

  it('forks at the solver with a replaced output: 0 model calls upstream, the rest live, linked; diff names solve; its replay loads no model', async () => {
    const before = stored(parentId);
    const f = await cli(['fork', parentId, '--node', 'solve', '--output', '{"expression":"16 - 3 - 4"}', '--threads', '1', '--db', db, '--json']);
    expect(f.code, f.err).toBe(0);
    const fork = JSON.parse(f.out);
    // The planner's one call came from the recording; no live call at or above the fork node but the intervention's own.
    expect(fork.calls.recorded).toEqual({ plan: 1 });
    expect(fork.calls.intervened).toBe(1);
    expect(Object.keys(fork.calls.live)).not.toContain('plan');
    expect(fork.calls.liveTotal).toBeGreaterThan(0); // the verifier (and whatever it sends back) ran on the model
    expect(fork.modelsLoaded).toBe(1);
    expect(fork.parentRunId).toBe(parentId);
    const store = openStore(db);
    try {
      expect(store.forks.linkOf(fork.runId)).toMatchObject({ parentRunId: parentId, nodeId: 'solve', attempt: 1, intervention: { kind: 'output', output: '{"expression":"16 - 3 - 4"}' } });
      const solve = store.getRunEvents(fork.runId).find((e) => e.nodeId === 'solve' && e.attempt === 1)!;
      expect(solve.output).toEqual({ expression: '16 - 3 - 4' });
      expect(store.getRunEvents(fork.runId).find((e) => e.nodeId === 'calculate' && e.attempt === 1)?.output).toMatchObject({ value: 9 });
    } finally {
      store.close();
    }
    expect(stored(parentId)).toBe(before);

    const d = await cli(['diff', parentId, fork.runId, '--db', db, '--json']);
    expect(d.code, d.err).toBe(0);
    expect(JSON.parse(d.out).diff.first).toMatchObject({ nodeId: 'solve', attempt: 1 });

    const r = await cli(['replay', fork.experimentId, '--db', db, '--json']);
    expect(r.code, r.out + r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ runs: 1, mismatched: 0, modelsLoaded: 0 });
  }, 120_000);

  it('counterfactual on the main job: the solver is blamed, fixing it with the oracle expression is tried and does not save the run (the tiny model fails below)', async () => {
    const exp = parentId.split('/')[0]!;
    const r = await cli(['counterfactual', exp, '--with', 'oracle', '--threads', '1', '--db', db, '--json']);
    expect(r.code, r.err).toBe(0);
    const report = JSON.parse(r.out);
    expect(report.runs).toBe(1);
    expect(report.verdicts[0].trials[0]).toMatchObject({ nodeId: 'solve', attempt: 1, blamed: true, intervention: 'output', flipped: false });
    expect(report.byRoleClass['solver/execution']).toMatchObject({ runs: 1, tried: 1, flipped: 0, rate: 0 });
    const bad = await cli(['counterfactual', exp, '--with', 'magic', '--db', db]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--with "magic": expected oracle, teacher=<model> or output=@<file>/);
    const badOn = await cli(['counterfactual', exp, '--with', 'oracle', '--intervene', 'some', '--db', db]);
    expect(badOn.code).toBe(1);
    expect(badOn.err).toMatch(/--intervene "some": expected blamed, each-node or role:<role>.*\[BAD_INTERVENTION\]/);
  }, 120_000);

  it('bad input: unknown node, a node that never ran, no intervention, a contract-breaking output; the parent unchanged', async () => {
    const before = stored(parentId);
    const unknown = await cli(['fork', parentId, '--node', 'solver', '--seed', '1', '--db', db]);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/no node "solver" \(its nodes: plan, solve, calculate, verify, answer\).*\[UNKNOWN_NODE\]/);
    const none = await cli(['fork', parentId, '--node', 'solve', '--db', db]);
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/give exactly one intervention/);
    const badRun = await cli(['fork', 'exp-nope/0', '--node', 'solve', '--seed', '1', '--db', db]);
    expect(badRun.code).toBe(1);
    expect(badRun.err).toMatch(/exp-nope\/0/);

    // The tiny model's solver fails its contract, so the answerer never ran.
    const never = await cli(['fork', parentId, '--node', 'answer', '--output', '{"answer":1}', '--db', db]);
    expect(never.code).toBe(1);
    expect(never.err).toMatch(/node "answer" never ran .*\[NEVER_RAN\]/);

    // Another model for the solver that is not there: a clear error, nothing stored.
    const missing = await cli(['fork', parentId, '--node', 'solve', '--role-model', 'solver=/nonexistent/v.gguf', '--db', db]);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/live model failed at node solve: MODEL_NOT_FOUND.*\/nonexistent\/v\.gguf.*\[MODEL_FAILED\]/);

    const broken = await cli(['fork', parentId, '--node', 'solve', '--output', 'not json', '--threads', '1', '--db', db, '--json']);
    expect(broken.code, broken.err).toBe(0);
    const b = JSON.parse(broken.out);
    expect(b.roots).toEqual(['solve']);
    expect(b.calls.liveTotal).toBe(0); // the solver failed at once: nothing below it ran
    expect(b.modelsLoaded).toBe(0);
    expect(stored(parentId)).toBe(before);
  }, 120_000);
});
