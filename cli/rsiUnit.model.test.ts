/**
 * `flowlab rsi --dataset learn-unit` on stories260K (issue 25, part 4): two cycles on the
 * solving side of learn-judge. The self-judge's pairs are in learn-judge's task format, each
 * held-out comparison carries the blind-spot error rate (answers with the right number in the
 * wrong unit) and, from cycle 2, the paired test against the previous cycle; two runs of the same
 * seed store the same records and write the same files (the trained GGUFs byte for byte), and the
 * loop replays with no model. The base here is the untrained stories260K (its judge fails its
 * audit, hence --allow-unreliable-judge): the test is about the plumbing on real weights; the
 * figures from the trained judge are in docs/mass.md ("rsi on learn-unit").
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson, openStore } from '../core/store/index.ts';
import { tempDir } from '../test/fixtures.ts';
import { cli, haveShared, tinyModel } from '../test/cli.ts';
import { filesUnder } from '../test/killed.ts';

const LOOP = 'rsi-unit';
const args = (db: string) => [
  'rsi', '--model', tinyModel, '--threads', '1', '--dataset', 'learn-unit', '--tasks', '2', '--runs', '4', '--neighbours', '2', '--top-k', '2', '--validation', '1',
  '--heldout', '4', '--cycles', '2', '--sft-passes', '1', '--sft-batch', '4', '--loop-id', LOOP, '--db', db, '--json', '--allow-unreliable-judge',
];
const unclocked = (text: string) => text.replace(/"seconds": ?[0-9.e+-]+/g, '"seconds":"<wall>"');

interface Rate { errors: number; n: number; rate: number | null }
interface Sign { positive: number; negative: number; ties: number }
interface Report { cycles: Array<{ cycle: number; arms: Record<string, { heldout: { pairs: number; classes: Record<string, number>; blindSpot: Rate; baseBlindSpot: Rate; vsPrevious?: { previous: number }; blindSpotVsBase: Sign; blindSpotVsPrevious?: Sign } }> }> }

describe.skipIf(!haveShared)('flowlab rsi on learn-unit (stories260K, 2 cycles)', () => {
  it('judges in learn-judge\'s format, reports the blind-spot rate per arm and cycle, reproduces byte for byte and replays without a model', async () => {
    const [d1, d2] = [tempDir('rsi-unit-a'), tempDir('rsi-unit-b')];
    const [db1, db2] = [path.join(d1, 'f.db'), path.join(d2, 'f.db')];
    const first = await cli(args(db1));
    expect(first.code, first.err).toBe(0);
    const report = JSON.parse(first.out) as Report;
    expect(report.cycles.map((c) => c.cycle)).toEqual([1, 2]);
    for (const c of report.cycles) {
      for (const arm of ['self', 'verifier']) {
        const h = c.arms[arm]!.heldout;
        expect(Object.values(h.classes).reduce((s, n) => s + n, 0)).toBe(4);
        expect(h.blindSpot).toMatchObject({ n: 4, errors: h.classes['blind-unit'] ?? 0 });
        expect(h.blindSpot.rate).toBe((h.classes['blind-unit'] ?? 0) / 4);
        expect(h.baseBlindSpot.n).toBe(4);
        expect(h.vsPrevious !== undefined).toBe(c.cycle === 2);
        // The paired sign test counts tasks into (+) and out of (−) the blind spot: their difference is the difference of the counts.
        expect(h.blindSpotVsBase.positive - h.blindSpotVsBase.negative).toBe(h.blindSpot.errors - h.baseBlindSpot.errors);
        expect(h.blindSpotVsBase.positive + h.blindSpotVsBase.negative + h.blindSpotVsBase.ties).toBe(4);
        expect(h.blindSpotVsPrevious !== undefined).toBe(c.cycle === 2);
      }
    }
    const s = openStore(db1);
    try {
      const judge = s.listExperiments().find((x) => x.id === `${LOOP}-c1-shared-t0-p0`)!;
      const call = s.getExperimentCalls(judge.id)[0]!;
      expect(call.prompt).toMatch(/^Request: [^\n]+\nA: [^\n]+\nB: [^\n]+\nRight:\n$/);
      expect(['A', 'B', '"A"', '"B"']).toContain(call.completion.trim());
    } finally {
      s.close();
    }

    const second = await cli(args(db2));
    expect(second.code, second.err).toBe(0);
    expect(unclocked(second.out)).toBe(unclocked(first.out.split(d1).join(d2)));
    const records = (db: string, dir: string) => {
      const st = openStore(db);
      try {
        return st.mass.list(LOOP).map((r) => unclocked(`${r.kind} ${r.key} ${canonicalJson(r.value)}`.split(dir).join('<dir>'))).sort();
      } finally {
        st.close();
      }
    };
    expect(records(db2, d2)).toEqual(records(db1, d1));
    const [o1, o2] = [path.join(d1, 'flowlab-mass', LOOP), path.join(d2, 'flowlab-mass', LOOP)];
    const files = filesUnder(o1);
    expect(filesUnder(o2)).toEqual(files);
    // The self arm trains every cycle (its top-k are never empty); the verifier arm only on runs the grader passes, which the untrained base may not give.
    expect(files).toEqual(expect.arrayContaining(['versions/c1-self.gguf', 'versions/c2-self.gguf']));
    for (const f of files.filter((x) => x.endsWith('.gguf'))) expect(readFileSync(path.join(o1, f)).equals(readFileSync(path.join(o2, f))), f).toBe(true);

    const replay = await cli(['rsi', '--replay', LOOP, '--db', db1, '--json']);
    expect(replay.code, replay.err).toBe(0);
    const r = JSON.parse(replay.out) as { mismatches: string[]; matched: number; records: number; cycles: number; modelsLoaded: number };
    expect(r).toMatchObject({ mismatches: [], cycles: 2, modelsLoaded: 0 });
    expect(r.matched).toBe(r.records);
  }, 600_000);
});
