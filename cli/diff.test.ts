import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { seedRunDiffPair, TEAM_YAML, VERDICTS } from '../core/api/runDiff.fixture.ts';
import { asNodeId, asRunId, HUMAN } from '../core/ids.ts';
import { computeWorkflowHash, openStore } from '../core/store/index.ts';
import { capture, newExperiment, runRecord, tempDir } from '../test/fixtures.ts';
import { main } from './main.ts';

let db = '';
let a = '';
let b = '';

/** Adds an experiment of `yaml` (named `name`) with one run whose one event is an ok tool node `plan`. */
function addOther(file: string, id: string, name: string, yaml: string): void {
  const store = openStore(file);
  try {
    store.createExperiment(newExperiment({ id, limit: 1, workflowName: name, workflowYaml: yaml, workflowHash: computeWorkflowHash(yaml) }));
    const run = runRecord(id, 0, { runId: asRunId(`${id}/0`) });
    store.saveRun(run, [{ runId: run.runId, nodeId: asNodeId('plan'), attempt: 1, seq: 0, kind: 'tool', wiredBy: HUMAN, inputs: {}, output: 1, status: 'ok', calls: [], startedAt: 0, endedAt: 1 }]);
  } finally {
    store.close();
  }
}

beforeAll(async () => {
  db = path.join(tempDir('cli-diff'), 'diff.db');
  const store = openStore(db);
  ({ a, b } = await seedRunDiffPair(store));
  store.close();
  addOther(db, 'demo-exp', 'demo', 'name: demo\nsteps: []\n');
  addOther(db, 'team-edited', 'gsm8k-team', TEAM_YAML.replace('Plan:', 'Your plan:'));
});

const diff = async (...args: string[]) => {
  const io = capture();
  const code = await main(['diff', ...args, '--db', db], io);
  return { code, out: io.out, err: io.err };
};

describe('flowlab diff on stored runs (scripted gsm8k-team pair, SIMULATED model)', () => {
  it('names the first diverging node and tabulates the aligned node runs; exits 0 although they differ', async () => {
    const r = await diff(a, b);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toBe('');
    expect(r.out).toContain('First diverging node: verify#1 (agent verifier): sampled text — call 0 completion\n');
    expect(r.out).toContain(`  A: ${JSON.stringify(VERDICTS.accept)}\n  B: ${JSON.stringify(VERDICTS.revise)}\n`);
    expect(r.out).toMatch(/│ ▶ │ verify#1\s+│ agent verifier │ ok\s+│ ok\s+│ sampled text \(call 0 completion\) · output\s+│/);
    expect(r.out).toMatch(/│\s+│ solve#2\s+│ agent solver\s+│ —\s+│ ok\s+│ ran in B only\s+│/);
    expect(r.out).toContain('8 node runs aligned: 4 differ (0 only in A, 3 only in B), 4 the same. ▶ first divergence.');
    expect(r.out).toContain('exits 0 whether or not the runs differ');
  });

  it('--json: one object with both runs and the diff', async () => {
    const r = await diff(a, b, '--json');
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out);
    expect([j.a.runId, j.b.runId, j.replay, j.sameWorkflow, j.greedy, j.notes]).toEqual([a, b, false, true, true, []]);
    expect(j.diff.first).toMatchObject({ nodeId: 'verify', attempt: 1, aspect: 'completion' });
    expect(j.diff.counts).toEqual({ nodes: 8, differing: 4, onlyA: 0, onlyB: 3 });
  });

  it('a run with itself: no divergence', async () => {
    const r = await diff(b, b);
    expect(r.code).toBe(0);
    expect(r.out).toContain('No divergence: the 8 node runs are the same in inputs, prompts, sampling, sampled text, outputs and statuses.');
  });

  it('an experiment id with --task names its run; without --task the error says how to name one', async () => {
    const r = await diff('diff-accept', 'diff-revise', '--task', '0', '--json');
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out).diff.first.nodeId).toBe('verify');
    const bare = await diff('diff-accept', b);
    expect(bare.code).toBe(1);
    expect(bare.err).toBe('flowlab diff: "diff-accept" is an experiment, not a run: name one of its runs as diff-accept/<task-index>, or add --task <i> (runs stored for task 0) [NOT_FOUND]\n');
  });

  it('unknown runs: exit 1, naming what is missing', async () => {
    const r = await diff(a, 'nope/3');
    expect([r.code, r.err]).toEqual([1, `flowlab diff: no run or experiment "nope/3" in ${db} [NOT_FOUND]\n`]);
    const task = await diff('diff-accept/5', b);
    expect([task.code, task.err]).toEqual([1, 'flowlab diff: experiment diff-accept has no stored run of task 5 (runs stored for task 0) [NOT_FOUND]\n']);
  });

  it('differently named workflows: refused (exit 1) unless --force, which warns', async () => {
    const r = await diff(a, 'demo-exp/0');
    expect(r.code).toBe(1);
    expect(r.err).toBe(`flowlab diff: ${a} ran workflow "gsm8k-team" and demo-exp/0 ran "demo": a diff aligns runs of one workflow; add --force to align them by node id anyway [DIFFERENT_WORKFLOWS]\n`);
    const forced = await diff(a, 'demo-exp/0', '--force');
    expect(forced.code, forced.err).toBe(0);
    expect(forced.err.split('\n')).toEqual([
      'flowlab diff: note: the workflow of demo-exp does not compile here (<workflow>:1:1 at roles: missing required field "roles" [SCHEMA]); its nodes are ordered by completion only',
      expect.stringMatching(/^flowlab diff: note: the runs ran different workflows \("gsm8k-team" and "demo", --force\) \(sha256 [0-9a-f]{12} vs [0-9a-f]{12}\); nodes are aligned by id$/),
      '',
    ]);
    expect(forced.out).toContain('First diverging node: plan#1');
  });

  it('another text of the same workflow: diffed, with a note on stderr', async () => {
    const r = await diff(a, 'team-edited/0');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/^flowlab diff: note: the runs ran two texts of workflow "gsm8k-team" \(sha256 /);
  });

  it('usage errors: both run-b and --replay, or neither (exit 2)', async () => {
    const both = await diff(a, b, '--replay');
    expect([both.code, both.err.split('\n')[0]]).toEqual([2, 'flowlab diff: give either <run-b> or --replay, not both']);
    const neither = await diff(a);
    expect([neither.code, neither.err.split('\n')[0]]).toEqual([2, 'flowlab diff: missing <run-b> (or --replay to compare run A with its replay)']);
  });

  it('--replay of a scripted run: the replay serves the recorded calls, and nothing diverges', async () => {
    const r = await diff(b, '--replay', '--json');
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out);
    expect([j.replay, j.b.runId, j.diff.same, j.diff.counts.nodes, j.diff.first]).toEqual([true, `${b} (replayed)`, true, 8, undefined]);
  });
});
