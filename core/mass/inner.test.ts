import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ReplayProvider } from '../../models/replay/index.ts';
import { canonicalJson, openStore, type Store } from '../store/index.ts';
import { defaultTools } from '../tools/index.ts';
import { evolve } from './inner.ts';
import { family, scripted, spec } from './loop.fixture.ts';
import { replayEvolution } from './replay.ts';

const tools = defaultTools();
const values = (store: Store, evo: string, kind: string) => store.mass.list(evo, kind).map((r) => r.value as Record<string, unknown>);

describe('evolve (scripted team, judge and optimizer: SIMULATED)', () => {
  it('keeps the champion rule of the public code: baseline first, later winners must win arbitration', async () => {
    const store = openStore(':memory:');
    const report = await evolve(spec('e'), { store, provider: scripted(), tools });
    expect(report.tasks).toEqual([{ taskIndex: 0, taskId: 'learn-tool/train/0', champion: 2, versions: 4, rejected: 2, championScore: expect.any(Number), baselineScore: expect.any(Number) }]);
    expect(values(store, 'e', 'champion')).toEqual([
      { iteration: 0, version: 0, previous: null, reason: 'first version to beat the baseline' },
      { iteration: 2, version: 2, previous: 0, reason: 'beat the baseline and champion v0 in arbitration' },
    ]);
    const verdicts = values(store, 'e', 'verdict');
    expect(verdicts.map((v) => `${v.candidate}/${v.kind} vs ${v.against}: ${v.candidateWon}`)).toEqual([
      '0/baseline vs baseline: true',
      '1/baseline vs baseline: true',
      '1/arbitration vs v0: false',
      '2/baseline vs baseline: true',
      '2/arbitration vs v0: true',
      '3/baseline vs baseline: false',
    ]);
    // Orientation is recorded, and the verdict read through it.
    for (const v of verdicts) expect(v.winner === v.candidateSide).toBe(v.candidateWon);
    expect(new Set(verdicts.map((v) => v.candidateSide))).toEqual(new Set(['A', 'B']));
    expect(verdicts[2]!.rationale).toMatch(/is weak/);
    // Rejected proposals are recorded with the validator's located issues; the loop went on.
    const proposals = values(store, 'e', 'proposal');
    expect(proposals.map((p) => p.accepted)).toEqual([true, true, true, false, false]);
    expect(proposals[3]!.issues).toEqual([{ code: 'UNKNOWN_AGENT', path: 'hops[0].agent_id', message: expect.stringContaining('reviewer') }]);
    expect(values(store, 'e', 'iteration').map((i) => `${i.iteration}:${i.version}:${i.champion}`)).toEqual(['0:0:0', '1:1:0', '2:2:2', '3:3:2', '4:null:2', '5:null:2']);
    // Every design stored with its diff from its parent.
    const designs = values(store, 'e', 'design');
    expect(designs.map((d) => `${d.version}<-${d.parent}`)).toEqual(['0<-null', '1<-0', '2<-1', '3<-2']);
    expect((designs[1]!.diff as { agents: { changed: unknown[] } }).agents.changed).toEqual([{ agent_id: 'picker', field: 'role', from: 'Picker P2', to: 'Picker P1' }]);
    // Each step is an ordinary stored run: 5 workspaces, 6 judge calls, 5 optimizer calls.
    const steps = store.listExperiments().filter((x) => x.id.startsWith('e.'));
    expect(steps).toHaveLength(16);
    expect(steps.every((x) => x.kind === 'mass' && x.runsDone === 1 && x.status === 'completed')).toBe(true);
    store.close();
  });

  it('offers the paper’s direct candidate-vs-champion rule, and records which rule ran', async () => {
    const store = openStore(':memory:');
    const report = await evolve(spec('d', 6, 'direct'), { store, provider: scripted(), tools });
    expect(report.rule).toBe('direct');
    expect((store.mass.get('d', 'evolution', 'settings')!.value as { rule: string }).rule).toBe('direct');
    expect(values(store, 'd', 'champion').map((c) => `${c.iteration}:v${c.version}`)).toEqual(['0:v0', '2:v2']);
    expect(values(store, 'd', 'verdict').map((v) => `${v.candidate} ${v.kind} vs ${v.against}`)).toEqual(['1 direct vs v0', '2 direct vs v0', '3 direct vs v2']);
    expect(store.findExperiment('d.t0.baseline')).toBeUndefined();
    store.close();
  });

  it('resumes from the store: a second call runs nothing and writes nothing; other settings are refused', async () => {
    const store = openStore(':memory:');
    const p = scripted();
    const first = await evolve(spec('r', 3), { store, provider: p, tools });
    const calls = p.calls;
    const again = await evolve(spec('r', 3), { store, provider: p, tools });
    expect(p.calls).toBe(calls);
    expect(again.written).toBe(0);
    expect(first.written).toBe(store.mass.list('r').length);
    await expect(evolve(spec('r', 4), { store, provider: p, tools })).rejects.toMatchObject({ code: 'MISMATCH' });
    store.close();
  });

  it('replays without the model: the same designs, verdicts and champion timeline from the recorded calls', async () => {
    const store = openStore(':memory:');
    await evolve(spec('p'), { store, provider: scripted(), tools });
    const replay = await replayEvolution(store, 'p', { family, tools, providerFor: (id) => new ReplayProvider(store.getExperimentCalls(id)) });
    expect(replay.mismatches).toEqual([]);
    expect(replay.matched).toBe(replay.records);
    expect(replay.records).toBe(30);
    expect(replay.modelsLoaded).toBe(0);
    store.close();
  });

  it('SIGKILL mid-loop, then resume: the same records and runs as an uninterrupted loop, none duplicated', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mass-kill-'));
    const db = path.join(dir, 'kill.db');
    const child = spawn(process.execPath, ['--import', 'tsx', 'core/mass/loop.fixture.ts', db, '40'], { stdio: 'ignore' });
    const closed = new Promise((r) => child.once('close', r)); // listened from the start: it may end before the kill
    let records = 0;
    // On the clock (not a count of polls) and only while it runs: tsx starting the child takes seconds on a loaded machine.
    for (const deadline = Date.now() + 120_000; records < 12 && child.exitCode === null && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 25));
      if (!existsSync(db)) continue;
      try {
        const s = openStore(db, { markInterrupted: false });
        records = s.mass.list('evo-kill').length;
        s.close();
      } catch { /* the writer may hold the lock */ }
    }
    child.kill('SIGKILL');
    await closed;
    const killed = openStore(db);
    const before = killed.mass.list('evo-kill').length;
    expect(before).toBeGreaterThanOrEqual(12);
    expect(before).toBeLessThan(30);
    await evolve(spec('evo-kill'), { store: killed, provider: scripted(), tools });
    const reference = openStore(':memory:');
    await evolve(spec('evo-kill'), { store: reference, provider: scripted(), tools });
    const dump = (s: Store) => s.mass.list('evo-kill').map((r) => `${r.kind} ${r.key} ${canonicalJson(r.value)}`).sort();
    expect(dump(killed)).toEqual(dump(reference));
    const steps = (s: Store) => s.listExperiments().map((x) => `${x.id} runs=${x.runsDone} calls=${s.getExperimentCalls(x.id).length}`).sort();
    expect(steps(killed)).toEqual(steps(reference));
    killed.close();
    reference.close();
  }, 240_000);
});
