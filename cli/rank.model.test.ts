/**
 * `flowlab rank` on stories260K (learn-tool, the task's exact grader as external verifier),
 * killed for real: a child process SIGKILLs itself (core/killPoint.ts) at six points of the
 * outer loop — a step created but not run, a run's guard written, a tournament verdict stored,
 * the tournament judged, the rankings recorded, one arm exported — each rerun of the same
 * command (same --loop-id) taking over where the last one died. The last rerun completes and
 * must print, store and write exactly what an uninterrupted run of the same seed does (every
 * record once, every step run once with its calls once, every file byte for byte), and its
 * replay must match without loading a model.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson, openStore, type Store } from '../core/store/index.ts';
import { tempDir } from '../test/fixtures.ts';
import { cli, haveShared, tinyModel } from '../test/cli.ts';
import { cliKilledAt, filesUnder, peekStore } from '../test/killed.ts';

const LOOP = 'rk-kill';
const args = (db: string) => ['rank', '--model', tinyModel, '--threads', '1', '--dataset', 'learn-tool', '--tasks', '1', '--runs', '4', '--neighbours', '2', '--top-k', '2', '--validation', '1', '--loop-id', LOOP, '--db', db, '--json',
  // stories260K's self-judge fails its audit (UNRELIABLE JUDGE); this test is about killing the exports, so the self arm is allowed.
  '--allow-unreliable-judge'];

const killedAt = (db: string, point: string) => cliKilledAt(args(db), point);

const records = (s: Store) => s.mass.list(LOOP).map((r) => `${r.kind} ${r.key} ${canonicalJson(r.value)}`).sort();
const kinds = (s: Store) => s.mass.list(LOOP).map((r) => r.kind).sort();
/** Each step: id, status, stored runs and calls. */
const steps = (s: Store) => s.listExperiments().map((x) => `${x.id} ${x.status} runs=${s.listRuns(x.id).length} calls=${s.getExperimentCalls(x.id).length}`).sort();
const withRun = (s: Store) => s.listExperiments().filter((x) => s.listRuns(x.id).length > 0).map((x) => x.id).sort();

describe.skipIf(!haveShared)('flowlab rank on stories260K: SIGKILL at six points, resumed to the uninterrupted result', () => {
  it('every rerun takes over; the result, records, steps and files equal an uninterrupted run; the replay needs no model', async () => {
    const refDir = tempDir('rank-ref');
    const killDir = tempDir('rank-kill');
    const ref = path.join(refDir, 'f.db');
    const db = path.join(killDir, 'f.db');
    const whole = await cli(args(ref));
    expect(whole.code, whole.err).toBe(0);
    const refOut = JSON.parse(whole.out) as { runs: number; rankings: Array<{ runs: unknown[]; pairs: unknown[] }> };
    expect(refOut.runs).toBe(4);
    expect(refOut.rankings[0]!.pairs).toHaveLength(6); // 4 runs, each against its next 2: 6 unique pairs

    const out = path.join(killDir, 'flowlab-mass', LOOP);
    const runIds = [0, 1, 2, 3].map((j) => `${LOOP}-t0-r${j}`);
    const guarded = () => runIds.filter((id) => readJsonIf(path.join(out, 'env', id, 'guard.json'))?.guard);

    // 1. The third step (run r2) is created, then the process dies before running it.
    expect(await killedAt(db, 'mass-step-created@3')).toEqual({ code: null, signal: 'SIGKILL' });
    expect(peekStore(db, (s) => [s.listExperiments().length, withRun(s), kinds(s)])).toEqual([3, runIds.slice(0, 2), ['outer-settings']]);
    expect(guarded()).toEqual(runIds.slice(0, 2));

    // 2. The rerun takes r2 over, runs it and dies once its guard verdict is written.
    expect(await killedAt(db, 'outer-run-guarded')).toEqual({ code: null, signal: 'SIGKILL' });
    expect(peekStore(db, withRun)).toEqual(runIds.slice(0, 3));
    expect(guarded()).toEqual(runIds.slice(0, 3));

    // 3. Dies after the second tournament verdict is stored.
    expect(await killedAt(db, 'outer-pair-judged@2')).toEqual({ code: null, signal: 'SIGKILL' });
    expect(peekStore(db, withRun)).toEqual([...runIds, `${LOOP}-t0-p0`, `${LOOP}-t0-p1`].sort());

    // 4. Dies with the tournament judged (the two verdicts read back, four judged), nothing ranked.
    expect(await killedAt(db, 'outer-tournament-done')).toEqual({ code: null, signal: 'SIGKILL' });
    expect(peekStore(db, (s) => [withRun(s).length, kinds(s)])).toEqual([10, ['outer-settings']]);

    // 5. Dies with the ranking recorded, nothing exported.
    expect(await killedAt(db, 'outer-rankings-stored')).toEqual({ code: null, signal: 'SIGKILL' });
    expect(peekStore(db, kinds)).toEqual(['outer-ranking', 'outer-settings']);
    expect(existsSync(path.join(out, 'self'))).toBe(false);

    // 6. Dies with the self arm exported, the verifier arm not yet.
    expect(await killedAt(db, 'outer-arm-exported')).toEqual({ code: null, signal: 'SIGKILL' });
    expect([existsSync(path.join(out, 'self', 'manifest.json')), existsSync(path.join(out, 'verifier'))]).toEqual([true, false]);

    // The last rerun completes with the uninterrupted run's report (only the folder differs).
    const resumed = await cli(args(db));
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.out).toBe(whole.out.split(refDir).join(killDir));

    const [a, b] = [openStore(db), openStore(ref)];
    try {
      // Nothing duplicated or lost: settings, one ranking, the judge audit; 4 runs, 6 verdicts and 6 swapped verdicts (the audit), each stored once with its calls once.
      expect(kinds(a)).toEqual(['judge-audit', 'outer-ranking', 'outer-settings']);
      expect(records(a)).toEqual(records(b).map((r) => r.split(refDir).join(killDir)));
      expect(steps(a)).toEqual(steps(b));
      expect(steps(a)).toHaveLength(16);
      expect(a.listExperiments().every((x) => x.status === 'completed' && a.listRuns(x.id).length === 1)).toBe(true);
    } finally {
      a.close();
      b.close();
    }
    // Every file (4 environments: guard.json + 3 protected files; 2 arms: train, validation, manifest) byte for byte.
    const refOutDir = path.join(refDir, 'flowlab-mass', LOOP);
    const files = filesUnder(out);
    expect(files).toEqual(filesUnder(refOutDir));
    expect(files).toHaveLength(22);
    for (const f of files) expect(readFileSync(path.join(out, f), 'utf8'), f).toBe(readFileSync(path.join(refOutDir, f), 'utf8').split(refDir).join(killDir));

    // The replay of the killed-and-resumed loop, without the model.
    const replay = await cli(['rank', '--replay', LOOP, '--db', db, '--json']);
    expect(replay.code, replay.err).toBe(0);
    const r = JSON.parse(replay.out) as { mismatches: string[]; matched: number; records: number; files: number; filesMatched: number; modelsLoaded: number };
    expect(r).toMatchObject({ mismatches: [], records: 3, matched: 3, files: 22, filesMatched: 22, modelsLoaded: 0 });
  }, 300_000);
});

function readJsonIf(file: string): { guard?: unknown } | undefined {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { guard?: unknown }) : undefined;
}
