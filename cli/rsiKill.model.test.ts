/**
 * `flowlab rsi --cycles 1` on stories260K (learn-tool, exact grader), killed for real at the
 * points where a cycle's training and its records land (core/killPoint.ts): a trained
 * version's GGUF temp file written but not renamed, the self arm's version recorded (the
 * verifier arm not trained; the dead temp file swept), and the cycle's record stored with
 * state.json not yet written.
 * Each rerun of the same command takes over; the last completes and must print, store and
 * write what an uninterrupted run does (every record and weight version once, each step run
 * once, every file byte for byte, the trained GGUFs included; only training's wall-clock
 * seconds may differ), and replay without a model.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson, openStore, type Store } from '../core/store/index.ts';
import { tempDir } from '../test/fixtures.ts';
import { cli, haveShared, tinyModel } from '../test/cli.ts';
import { cliKilledAt, filesUnder, peekStore } from '../test/killed.ts';

const LOOP = 'rsi-kill';
const args = (db: string) => [
  'rsi', '--model', tinyModel, '--threads', '1', '--dataset', 'learn-tool', '--tasks', '1', '--runs', '4', '--neighbours', '2', '--top-k', '2', '--validation', '1',
  '--heldout', '2', '--cycles', '1', '--sft-passes', '1', '--sft-batch', '4', '--loop-id', LOOP, '--db', db, '--json',
  // stories260K's self-judge fails its audit (UNRELIABLE JUDGE); this test is about killing the self arm's training, so it is allowed.
  '--allow-unreliable-judge',
];

const killedAt = (db: string, point: string) => cliKilledAt(args(db), point);

/** Training's wall-clock seconds (a measurement, not a result) masked; everything else must match. */
const unclocked = (text: string) => text.replace(/"seconds": ?[0-9.e+-]+/g, '"seconds":"<wall>"');
const kinds = (s: Store) => s.mass.list(LOOP).map((r) => r.kind).sort();
const records = (s: Store, dir: string) => s.mass.list(LOOP).map((r) => unclocked(`${r.kind} ${r.key} ${canonicalJson(r.value)}`.split(dir).join('<dir>'))).sort();
const steps = (s: Store) => s.listExperiments().map((x) => `${x.id} ${x.status} runs=${s.listRuns(x.id).length} calls=${s.getExperimentCalls(x.id).length}`).sort();
const versions = (s: Store, dir: string) => s.weights.list({ role: 'mass' }).map((v) => `${v.id} ${v.path.split(dir).join('<dir>')} ${v.parentId ?? '-'}`).sort();

describe.skipIf(!haveShared)('flowlab rsi --cycles 1 on stories260K: SIGKILL in training and between the cycle record and state.json', () => {
  it('every rerun takes over; the report, records, versions, steps and files equal an uninterrupted run; the replay needs no model', async () => {
    const refDir = tempDir('rsi-ref');
    const killDir = tempDir('rsi-kill');
    const ref = path.join(refDir, 'f.db');
    const db = path.join(killDir, 'f.db');
    const whole = await cli(args(ref));
    expect(whole.code, whole.err).toBe(0);
    const out = path.join(killDir, 'flowlab-mass', LOOP);
    const gguf = (arm: string) => path.join(out, 'versions', `c1-${arm}.gguf`);

    // 1. The self arm's first GGUF is written to its temp file, not renamed: no version.
    expect(await killedAt(db, 'gguf-temp-written')).toEqual({ code: null, signal: 'SIGKILL' });
    expect(peekStore(db, (s) => [kinds(s), s.weights.list({ role: 'mass' }).length])).toEqual([['judge-audit', 'outer-base', 'outer-ranking', 'outer-settings'], 0]);
    expect(existsSync(gguf('self'))).toBe(false);
    const temps = () => readdirSync(path.join(out, 'versions')).filter((f) => f.endsWith('.tmp'));
    expect(temps()).toEqual([expect.stringMatching(/^\.c1-self\.gguf\.\d+\.[0-9a-f]+\.tmp$/)]);

    // 2. The self arm is trained again and recorded; the process dies before the verifier arm trains.
    expect(await killedAt(db, 'rsi-version-recorded')).toEqual({ code: null, signal: 'SIGKILL' });
    expect(peekStore(db, (s) => s.weights.list({ role: 'mass' }).map((v) => v.id))).toEqual([`wv-${LOOP}-c1-self`]);
    expect([existsSync(gguf('self')), existsSync(gguf('verifier'))]).toEqual([true, false]);
    expect(temps()).toEqual([]); // the dead writer's temp file is swept before the arm trains again

    // 3. Both arms trained and evaluated, the cycle recorded, state.json not yet written.
    expect(await killedAt(db, 'rsi-cycle-stored')).toEqual({ code: null, signal: 'SIGKILL' });
    expect(peekStore(db, kinds)).toEqual(['judge-audit', 'outer-base', 'outer-cycle', 'outer-ranking', 'outer-settings']);
    expect(existsSync(path.join(out, 'state.json'))).toBe(false);

    const resumed = await cli(args(db));
    expect(resumed.code, resumed.err).toBe(0);
    expect(unclocked(resumed.out)).toBe(unclocked(whole.out.split(refDir).join(killDir)));
    expect(resumed.out).toMatch(/"seconds":\d/);

    const [a, b] = [openStore(db), openStore(ref)];
    try {
      expect(kinds(a)).toEqual(['judge-audit', 'outer-base', 'outer-cycle', 'outer-ranking', 'outer-settings']);
      expect(records(a, killDir)).toEqual(records(b, refDir));
      expect(versions(a, killDir)).toEqual(versions(b, refDir));
      expect(versions(a, killDir)).toHaveLength(2);
      expect(steps(a)).toEqual(steps(b));
      expect(a.listExperiments().every((x) => x.status === 'completed' && a.listRuns(x.id).length === 1)).toBe(true);
    } finally {
      a.close();
      b.close();
    }
    const refOut = path.join(refDir, 'flowlab-mass', LOOP);
    const files = filesUnder(out);
    expect(files).toEqual(filesUnder(refOut));
    expect(files).toEqual(expect.arrayContaining(['state.json', 'versions/c1-self.gguf', 'versions/c1-verifier.gguf', 'cycle-1/verifier/train.jsonl']));
    for (const f of files) {
      const [mine, theirs] = [readFileSync(path.join(out, f)), readFileSync(path.join(refOut, f))];
      if (f.endsWith('.gguf')) expect(mine.equals(theirs), f).toBe(true);
      else expect(unclocked(mine.toString('utf8')), f).toBe(unclocked(theirs.toString('utf8').split(refDir).join(killDir)));
    }

    const replay = await cli(['rsi', '--replay', LOOP, '--db', db, '--json']);
    expect(replay.code, replay.err).toBe(0);
    const r = JSON.parse(replay.out) as { mismatches: string[]; matched: number; records: number; cycles: number; modelsLoaded: number };
    expect(r).toMatchObject({ mismatches: [], cycles: 1, modelsLoaded: 0 });
    expect(r.matched).toBe(r.records);
  }, 300_000);
});
