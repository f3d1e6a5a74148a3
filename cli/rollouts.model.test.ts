import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../core/store/index.ts';
import { cli } from '../test/cli.ts';
import { haveShared, noteSkip, tempDir, tinyModel as model } from '../test/fixtures.ts';

if (!haveShared) noteSkip('rollouts.model.test', 'the rollouts and export tests', `${model} or the GSM8K data`);

describe.skipIf(!haveShared)('flowlab rollouts and export with the real tiny model', () => {
  it('G=4 on 5 GSM8K tasks stores 20 trajectories with per-role advantages; export writes TRL files', async () => {
    const dir = tempDir('ro');
    const db = path.join(dir, 'ro.db');
    const res = await cli(['rollouts', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--limit', '5', '--group', '4', '--model', model, '--db', db, '--json']);
    expect(res.code, res.err).toBe(0);
    const j = JSON.parse(res.out);
    expect(j).toMatchObject({ groups: 5, trajectories: 20, group: 4, mode: 'multi-agent' });
    expect(typeof j.zeroSpreadGroups).toBe('number');
    expect(Object.keys(j.roles)).toEqual(['planner', 'solver', 'verifier', 'answerer']);
    const store = openStore(db);
    const runs = store.listRuns(j.experimentId);
    expect(runs).toHaveLength(20);
    // Distinct recorded seeds within each group, sampled at the rollout temperature with topK 0.
    for (let t = 0; t < 5; t++) expect(new Set(runs.slice(t * 4, t * 4 + 4).map((r) => r.seed)).size).toBe(4);
    const call = store.getRunEvents(runs[0]!.runId)[0]!.calls[0]!;
    expect(call.params).toMatchObject({ temperature: 0.8, topK: 0, topP: 1, minP: 0 });
    const adv = store.improve.advantagesOf(j.experimentId);
    expect(adv.filter((a) => a.mode === 'ladder')).toHaveLength(80); // 20 runs x 4 roles
    // Each group's advantages sum to zero per role (or are all zero with zero spread).
    for (const role of ['planner', 'solver']) {
      for (let t = 0; t < 5; t++) {
        const g = adv.filter((a) => a.role === role && a.mode === 'ladder' && runs.slice(t * 4, t * 4 + 4).some((r) => r.runId === a.runId));
        expect(g).toHaveLength(4);
        expect(Math.abs(g.reduce((s, a) => s + a.advantage, 0))).toBeLessThan(1e-9);
      }
    }
    store.close();

    const out = path.join(dir, 'export');
    const ex = await cli(['export', j.experimentId, '--db', db, '--out', out, '--json']);
    expect(ex.code, ex.err).toBe(0);
    const manifest = JSON.parse(readFileSync(path.join(out, 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({ experimentId: j.experimentId, learningRoles: ['planner', 'solver', 'verifier', 'answerer'], advantageMode: 'ladder' });
    const lines = readFileSync(path.join(out, 'planner.grpo.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(20);
    expect(Object.keys(lines[0]).sort()).toEqual(['advantage', 'attempt', 'call_index', 'completion', 'group_id', 'label', 'model', 'node_id', 'prompt', 'reward', 'run_id', 'seed', 'temperature']);
    expect(lines[0].group_id).toBe('gsm8k/test/0');
  });
});
