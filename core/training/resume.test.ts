import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore, type Store } from '../store/index.ts';
import { loopDebris } from './recover.ts';
import { getDataset } from '../tasks/index.ts';
import { defaultTools } from '../tools/index.ts';
import { parseWorkflow } from '../workflow/load.ts';
import { FakeTrainer, momentOf, SeedProvider, stepsOf, WORKSHOP_FILE } from './killed.fixture.ts';
import { runTrainLoop } from './loop.ts';

/**
 * Kills of a real train-loop process at chosen points (FLOWLAB_TEST_KILL_AT, core/killPoint.ts)
 * and its resume (core/experiments/trainLoopResume.ts): a two-role loop (planner, solver) of 4
 * iterations through the experiment service with the fake trainer and provider of
 * killed.fixture.ts (no model files).
 */
const FIXTURE = 'core/training/killed.fixture.ts';
const ROLES = ['planner', 'solver'] as const;

function child(args: string[], killAt?: string): { status: number | null; signal: NodeJS.Signals | null; out: string; err: string } {
  const env = { ...process.env };
  delete env['FLOWLAB_TEST_KILL_AT'];
  if (killAt) env['FLOWLAB_TEST_KILL_AT'] = killAt;
  const r = spawnSync(process.execPath, ['--import', 'tsx', FIXTURE, ...args], { env, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, signal: r.signal, out: r.stdout, err: r.stderr };
}

function setup(tag: string) {
  const dir = mkdtempSync(path.join(tmpdir(), `flowlab-resume-${tag}-`));
  return { dir, db: path.join(dir, 'f.db'), versions: path.join(dir, 'v'), loopId: `tl-test-${tag}` };
}

/** Version rows of the loop: role -> [iteration, id, parent, path] in order. */
function versionsOf(store: Store, loopId: string) {
  const out: Record<string, Array<{ iteration: number; id: string; parentId?: string; path: string }>> = {};
  for (const v of store.weights.list().filter((x) => x.hyper['loopId'] === loopId)) (out[v.role] ??= []).push({ iteration: v.iteration!, id: v.id, ...(v.parentId && { parentId: v.parentId }), path: v.path });
  return out;
}

function recorded(store: Store, loopId: string): Set<string> {
  return new Set(Object.values(versionsOf(store, loopId)).flat().map((v) => v.path));
}

/** After a resume to the end: 4 iterations, one rollouts experiment each, an unbroken lineage per role, no debris, weights continued. */
function expectWholeLoop(t: ReturnType<typeof setup>): void {
  const store = openStore(t.db);
  try {
    const loop = store.trainLoops.get(t.loopId);
    expect([loop.status, loop.done, loop.iterations]).toEqual(['completed', 4, 4]);
    const exps = store.trainLoops.experimentsOf(t.loopId);
    expect(exps.filter((e) => e.iteration !== undefined).map((e) => e.iteration)).toEqual([1, 2, 3, 4]);
    expect(exps.filter((e) => e.phase).map((e) => e.phase)).toEqual(['heldout-before', 'heldout-after']);
    expect(exps.every((e) => e.status === 'completed')).toBe(true);
    for (const e of exps) expect(store.listRuns(e.id)).toHaveLength(store.listTasks(e.id).length); // no task lost, none twice (one run per task)
    const versions = versionsOf(store, t.loopId);
    for (const role of ROLES) {
      const chain = versions[role]!;
      expect(chain.map((v) => v.iteration)).toEqual([1, 2, 3, 4]);
      expect(chain[0]!.parentId).toBeUndefined();
      chain.slice(1).forEach((v, i) => expect(v.parentId).toBe(chain[i]!.id));
      // The file of iteration k holds k steps: the resumed loop went on from the recorded weights.
      expect(chain.map((v) => stepsOf(v.path))).toEqual([1, 2, 3, 4]);
      expect(loop.state['roles']).toMatchObject({ [role]: { path: chain[3]!.path, parentId: chain[3]!.id, versions: chain.map((v) => v.id) } });
    }
    expect(loopDebris(t.versions, t.loopId, recorded(store, t.loopId))).toEqual({ temps: [], unrecorded: [] });
  } finally {
    store.close();
  }
}

describe('a train loop killed at a chosen point, then resumed', () => {
  it("ends with the optimiser state of an uninterrupted loop: the moments are stored beside each version and restored at a resume", () => {
    const whole = setup('adam-whole');
    expect(child(['start', whole.db, whole.versions, whole.loopId, '4']).status).toBe(0);
    const t = setup('adam-kill');
    expect(child(['start', t.db, t.versions, t.loopId, '4'], 'rollout-stored@20').signal).toBe('SIGKILL'); // in iteration 3's sampling (8 rollouts per iteration)
    expect(child(['resume', t.db, t.loopId]).status).toBe(0);
    expectWholeLoop(t);
    // m after k steps from zero: 1, 1.5, 1.75, 1.875 — the resumed loop's too (it restarted at 0, giving 1 and 1.5 for iterations 3 and 4, before).
    for (const role of ROLES) {
      const files = (x: ReturnType<typeof setup>) => [1, 2, 3, 4].map((k) => path.join(x.versions, x.loopId, role, `iter-00${k}.gguf`));
      expect(files(whole).map(momentOf)).toEqual([1, 1.5, 1.75, 1.875]);
      expect(files(t).map(momentOf)).toEqual([1, 1.5, 1.75, 1.875]);
    }
  });

  it('a partial temp GGUF is removed on resume; the loop ends at its planned iteration with an unbroken lineage', () => {
    const t = setup('tmp');
    const killed = child(['start', t.db, t.versions, t.loopId, '4'], 'gguf-temp-written@3'); // iteration 2, planner
    expect(killed.signal).toBe('SIGKILL');
    expect(readdirSync(path.join(t.versions, t.loopId, 'planner')).filter((f) => f.endsWith('.tmp'))).toHaveLength(1);
    const r = child(['resume', t.db, t.loopId]);
    expect([r.status, r.err]).toEqual([0, '']);
    expect(JSON.parse(r.out)).toMatchObject({ loopId: t.loopId, cancelled: false });
    expectWholeLoop(t);
  });

  it('a complete version file with no row (killed between rename and commit) is removed, not recorded; the iteration trains again from its stored rollouts', () => {
    const t = setup('unrec');
    expect(child(['start', t.db, t.versions, t.loopId, '4'], 'version-file-written@3').signal).toBe('SIGKILL'); // iteration 2, planner's file in place
    let store = openStore(t.db);
    const it2 = store.trainLoops.experimentsOf(t.loopId).find((e) => e.iteration === 2)!;
    const runsBefore = store.listRuns(it2.id).map((r) => [r.runId, r.seed]);
    expect(loopDebris(t.versions, t.loopId, recorded(store, t.loopId)).unrecorded).toEqual([path.join(t.versions, t.loopId, 'planner', 'iter-002.gguf')]);
    store.close();
    expect(child(['resume', t.db, t.loopId]).status).toBe(0);
    expectWholeLoop(t);
    store = openStore(t.db);
    // The same rollouts experiment, the same runs: not sampled again.
    expect(store.trainLoops.experimentsOf(t.loopId).find((e) => e.iteration === 2)!.id).toBe(it2.id);
    expect(store.listRuns(it2.id).map((r) => [r.runId, r.seed])).toEqual(runsBefore);
    store.close();
  });

  it("an iteration's roles are recorded together: killed after both files, neither role has a row for it", () => {
    const t = setup('half');
    expect(child(['start', t.db, t.versions, t.loopId, '4'], 'version-file-written@4').signal).toBe('SIGKILL'); // iteration 2, both files in place
    const store = openStore(t.db);
    const v = versionsOf(store, t.loopId);
    expect(Object.fromEntries(ROLES.map((r) => [r, v[r]!.map((x) => x.iteration)]))).toEqual({ planner: [1], solver: [1] });
    expect(store.trainLoops.get(t.loopId)).toMatchObject({ status: 'interrupted', done: 1 });
    store.close();
    expect(child(['resume', t.db, t.loopId]).status).toBe(0);
    expectWholeLoop(t);
  });

  it('finished rollouts survive a kill before any version is written, and a half-sampled iteration runs only its pending tasks', () => {
    const t = setup('rollouts');
    expect(child(['start', t.db, t.versions, t.loopId, '4'], 'rollouts-done@1').signal).toBe('SIGKILL');
    let store = openStore(t.db);
    const it1 = store.trainLoops.experimentsOf(t.loopId).find((e) => e.iteration === 1)!;
    expect([it1.status, store.listRuns(it1.id).length]).toEqual(['completed', 8]);
    store.close();
    // Resume, killed again in the middle of iteration 3's rollouts (after its 3rd stored run).
    expect(child(['resume', t.db, t.loopId], 'rollout-stored@11').signal).toBe('SIGKILL');
    store = openStore(t.db);
    const it3 = store.trainLoops.experimentsOf(t.loopId).find((e) => e.iteration === 3)!;
    expect([it3.status, store.listRuns(it3.id).length]).toEqual(['interrupted', 3]);
    const kept = store.listRuns(it3.id).map((r) => r.runId);
    store.close();
    expect(child(['resume', t.db, t.loopId]).status).toBe(0);
    expectWholeLoop(t);
    store = openStore(t.db);
    expect(store.trainLoops.experimentsOf(t.loopId).find((e) => e.iteration === 1)!.id).toBe(it1.id);
    expect(store.listRuns(it3.id).map((r) => r.runId).slice(0, 3)).toEqual(kept);
    store.close();
  });

  it('resumes by the id of any of its experiments; a completed loop has nothing to resume', () => {
    const t = setup('byexp');
    expect(child(['start', t.db, t.versions, t.loopId, '4'], 'iteration-committed@2').signal).toBe('SIGKILL');
    const store = openStore(t.db);
    const anExperiment = store.trainLoops.experimentsOf(t.loopId)[0]!.id;
    store.close();
    expect(child(['resume', t.db, anExperiment]).status).toBe(0);
    expectWholeLoop(t);
    const again = child(['resume', t.db, t.loopId]);
    expect([again.status, JSON.parse(again.out)]).toEqual([0, { loopId: t.loopId, nothing: true }]);
  });

  it("a new loop's start sweeps the debris of stored loops that are not running, and nothing else", () => {
    const t = setup('sweep');
    expect(child(['start', t.db, t.versions, t.loopId, '4'], 'gguf-temp-written@2').signal).toBe('SIGKILL'); // iteration 1, solver's temp
    const stranger = path.join(t.versions, 'tl-not-stored', 'solver');
    mkdirSync(stranger, { recursive: true });
    writeFileSync(path.join(stranger, '.iter-001.gguf.1.tmp'), 'another database\'s loop');
    const debris = (() => {
      const s = openStore(t.db);
      try {
        return loopDebris(t.versions, t.loopId, recorded(s, t.loopId));
      } finally {
        s.close();
      }
    })();
    expect(debris.temps).toHaveLength(1);
    expect(debris.unrecorded).toEqual([path.join(t.versions, t.loopId, 'planner', 'iter-001.gguf')]);
    expect(child(['start', t.db, t.versions, 'tl-test-sweep2', '1']).status).toBe(0);
    const s = openStore(t.db);
    try {
      expect(loopDebris(t.versions, t.loopId, recorded(s, t.loopId))).toEqual({ temps: [], unrecorded: [] });
      expect(existsSync(path.join(stranger, '.iter-001.gguf.1.tmp'))).toBe(true); // not a loop of this database: left alone
    } finally {
      s.close();
    }
  });
});

describe('commitIteration', () => {
  it('records all of an iteration or none of it', () => {
    const store = openStore(':memory:');
    try {
      store.trainLoops.create({ id: 'tl-x', iterations: 2, versionsDir: '/v', plan: {}, state: { n: 0 } });
      const ok = { role: 'planner', basePath: '/b', path: '/v/tl-x/planner/iter-001.gguf', iteration: 1, hyper: { loopId: 'tl-x' }, metrics: {} };
      const orphan = { ...ok, role: 'solver', path: '/v/tl-x/solver/iter-001.gguf', parentId: 'wv-missing' };
      expect(() => store.trainLoops.commitIteration('tl-x', 1, [ok, orphan], { n: 1 })).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
      expect([store.weights.list().length, store.trainLoops.get('tl-x').done, store.trainLoops.get('tl-x').state]).toEqual([0, 0, { n: 0 }]);
      const saved = store.trainLoops.commitIteration('tl-x', 1, [ok, { ...orphan, parentId: undefined }], { n: 1 });
      expect(saved.map((v) => v.role)).toEqual(['planner', 'solver']);
      expect(store.trainLoops.get('tl-x')).toMatchObject({ done: 1, state: { n: 1 } });
      expect(() => store.trainLoops.commitIteration('tl-x', 1, [], {})).toThrow(expect.objectContaining({ code: 'RUN_EXISTS' }));
      expect(() => store.trainLoops.commitIteration('tl-x', 3, [], {})).toThrow(expect.objectContaining({ code: 'INVALID_RECORD' }));
    } finally {
      store.close();
    }
  });
});

describe('a resume that cannot go on', () => {
  it('marks the claimed loop failed (resumable later), never leaves it running', async () => {
    const store = openStore(':memory:');
    try {
      store.trainLoops.create({ id: 'tl-y', iterations: 2, versionsDir: tmpdir(), plan: {}, state: { roles: { planner: { basePath: '/b', startPath: '/b', path: '/b', versions: [] } }, iterations: [] } });
      store.trainLoops.finish('tl-y', 'interrupted'); // as if its process had died
      const text = readFileSync(WORKSHOP_FILE, 'utf8');
      const ds = getDataset('learn-team');
      const run = runTrainLoop({
        store, graph: parseWorkflow(text, { tools: defaultTools() }).graph, workflow: { yaml: text }, dataset: { name: ds.name, grader: ds.grader },
        trainTasks: ds.load({ split: 'train', limit: 2 }), heldoutTasks: [], tools: defaultTools(), trainer: new FakeTrainer(),
        makeProvider: async (m) => new SeedProvider(m), models: { models: { default: '/b' }, roleModels: { planner: 'default', solver: 'default' } },
        roles: ['solver'], group: 2, iterations: 2, tasksPerIteration: 1, lr: 1e-4, kl: 0, temperature: 1, heldoutSamples: 1, heldoutTemperature: 0, seed: 1,
        versionsDir: tmpdir(), loopId: 'tl-y', resume: true,
      });
      await expect(run).rejects.toMatchObject({ code: 'NO_ROLE', message: 'train-loop: loop tl-y has no stored lineage for role(s) solver' });
      expect(store.trainLoops.get('tl-y').status).toBe('failed');
      expect(store.trainLoops.isLive('tl-y')).toBe(false);
    } finally {
      store.close();
    }
  });
});
