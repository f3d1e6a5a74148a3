import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../core/store/index.ts';
import { cli } from '../test/cli.ts';
import { haveShared, noteSkip, tempDir, tinyModel as model } from '../test/fixtures.ts';

if (!haveShared) noteSkip('diff.model.test', 'flowlab diff on the main job', `${model} or the GSM8K data`);

let db = '';
let dir = '';

/** `flowlab run <workflow> --dataset gsm8k --split test --limit N --model stories260K --seed S` (the README's main job); returns the experiment id. */
async function runJob(workflow: string, seed: number, limit: number): Promise<string> {
  const r = await cli(['run', workflow, '--dataset', 'gsm8k', '--split', 'test', '--limit', String(limit), '--model', model, '--seed', String(seed), '--db', db, '--json']);
  expect(r.code, r.err).toBe(0);
  return JSON.parse(r.out).experimentId as string;
}

/** The recorded call `callIndex` of node `nodeId`'s first attempt in a run. */
function callOf(runId: string, nodeId: string) {
  const store = openStore(db);
  try {
    return store.getRunEvents(runId).find((e) => e.nodeId === nodeId && e.attempt === 1)!.calls[0]!;
  } finally {
    store.close();
  }
}

function eventCount(runId: string): number {
  const store = openStore(db);
  try {
    return store.getRunEvents(runId).length;
  } finally {
    store.close();
  }
}

describe.skipIf(!haveShared)('flowlab diff with the real tiny model (stories260K) on the main job', () => {
  let seed1 = '';
  let seed2 = '';
  beforeAll(async () => {
    dir = tempDir('cli-diff-model');
    db = path.join(dir, 'diff.db');
    seed1 = await runJob('examples/gsm8k-team.yaml', 1, 3);
    seed2 = await runJob('examples/gsm8k-team.yaml', 2, 3);
  }, 120_000);

  it('two runs of the main job with seeds 1 and 2: the first diverging node is plan#1, by its seed; greedy decoding samples the same text', async () => {
    const a = `${seed1}/0`;
    const b = `${seed2}/0`;
    const r = await cli(['diff', a, b, '--db', db, '--json']);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out);
    const [ca, cb] = [callOf(a, 'plan'), callOf(b, 'plan')];
    expect(ca.seed).not.toBe(cb.seed);
    expect(j.diff.first).toEqual({ index: 0, nodeId: 'plan', attempt: 1, aspect: 'sampling', difference: { aspect: 'sampling', at: 'call 0 seed', a: String(ca.seed), b: String(cb.seed) } });
    // examples/gsm8k-team.yaml samples at temperature 0 (greedy): the seed changes no sampled text.
    expect(ca.completion).toBe(cb.completion);
    expect([j.greedy, j.diff.firstBehaviour, j.diff.counts.nodes, j.diff.counts.onlyA, j.diff.counts.onlyB]).toEqual([true, undefined, eventCount(a), 0, 0]);
    const text = await cli(['diff', a, b, '--db', db]);
    expect(text.code, text.err).toBe(0);
    expect(text.out).toContain('First diverging node: plan#1 (agent planner): sampling — call 0 seed\n');
    expect(text.out).toContain('Behaviour: the same at every node run; only sampling settings differ (every call decoded greedily, temperature 0, so the seed changes nothing).');
  });

  it('a run of the main job and its replay from the recorded calls: no divergence, for every task', async () => {
    for (const i of [0, 1, 2]) {
      const r = await cli(['diff', `${seed1}/${i}`, '--replay', '--db', db, '--json']);
      expect(r.code, r.err).toBe(0);
      const j = JSON.parse(r.out);
      expect([j.replay, j.diff.same, j.diff.first, j.diff.counts.differing, j.diff.counts.nodes]).toEqual([true, true, undefined, 0, eventCount(`${seed1}/${i}`)]);
    }
    const text = await cli(['diff', `${seed1}/0`, '--replay', '--db', db]);
    expect(text.out).toMatch(/^Run A: .+\nRun B: .+ \(replayed\) .+\nNo divergence: the \d+ node runs are the same in inputs, prompts, sampling, sampled text, outputs and statuses\.\n/);
  });

  it('the main job with the planner sampling (temperature 0.9), seeds 1 and 2: the planner\'s sampled text diverges first, then the solver\'s input', async () => {
    const sampled = path.join(dir, 'gsm8k-team-sampled.yaml');
    const yaml = readFileSync('examples/gsm8k-team.yaml', 'utf8').replace('    max_tokens: 48\n    stop: ["\\n\\n"]', '    max_tokens: 48\n    temperature: 0.9\n    stop: ["\\n\\n"]');
    expect(yaml).toContain('temperature: 0.9');
    writeFileSync(sampled, yaml);
    const x = await runJob(sampled, 1, 1);
    const y = await runJob(sampled, 2, 1);
    const r = await cli(['diff', `${x}/0`, `${y}/0`, '--db', db, '--json']);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out);
    const [ca, cb] = [callOf(`${x}/0`, 'plan'), callOf(`${y}/0`, 'plan')];
    expect(ca.params.temperature).toBe(0.9);
    expect(ca.completion).not.toBe(cb.completion);
    expect(j.greedy).toBe(false);
    expect(j.diff.first).toMatchObject({ nodeId: 'plan', attempt: 1, aspect: 'sampling' });
    expect(j.diff.firstBehaviour).toMatchObject({ index: 0, nodeId: 'plan', attempt: 1, aspect: 'completion', difference: { at: 'call 0 completion', a: ca.completion, b: cb.completion } });
    expect(j.diff.nodes[1].nodeId).toBe('solve');
    expect(j.diff.nodes[1].differences[0]).toMatchObject({ aspect: 'input', at: 'input plan' });
  });
});
