/**
 * `flowlab rank --parallel 4` on stories260K (issue 26; core/mass/inFlight.ts): the runs and then
 * the judge pairs of a task go in flight together on the real model, and what is printed, stored
 * and written is what `--parallel 1` gives. Killed for real (core/killPoint.ts) once the second
 * verdict is stored, the pairs after it — started, some perhaps answered — have stored nothing
 * (each step stores only on its turn), and a rerun at --parallel 4 completes to the same result.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson, openStore, type Store } from '../core/store/index.ts';
import { tempDir } from '../test/fixtures.ts';
import { cli, haveShared, tinyModel } from '../test/cli.ts';
import { cliKilledAt, filesUnder, peekStore } from '../test/killed.ts';

const LOOP = 'rk-par';
const args = (db: string, parallel: number) => ['rank', '--model', tinyModel, '--threads', '1', '--dataset', 'learn-tool', '--tasks', '1', '--runs', '4', '--neighbours', '2', '--top-k', '2', '--validation', '1', '--loop-id', LOOP, '--db', db, '--json',
  '--allow-unreliable-judge', '--parallel', String(parallel)];

const records = (s: Store) => s.mass.list(LOOP).map((r) => `${r.kind} ${r.key} ${canonicalJson(r.value)}`);
/** Each step in creation order: id, status, stored runs, and its calls' completions. */
const steps = (s: Store) => s.listExperiments().map((x) => `${x.id} ${x.status} runs=${s.listRuns(x.id).length} ${s.getExperimentCalls(x.id).map((c) => c.completion).join('|')}`).sort();
const withRun = (s: Store) => s.listExperiments().filter((x) => s.listRuns(x.id).length > 0).map((x) => x.id).sort();

describe.skipIf(!haveShared)('flowlab rank --parallel 4 on stories260K', () => {
  it('prints, stores and writes what --parallel 1 does, also when killed after the second verdict and rerun', async () => {
    const oneDir = tempDir('rank-par-1');
    const manyDir = tempDir('rank-par-4');
    const one = path.join(oneDir, 'f.db');
    const many = path.join(manyDir, 'f.db');
    const serial = await cli(args(one, 1));
    expect(serial.code, serial.err).toBe(0);

    expect(await cliKilledAt(args(many, 4), 'outer-pair-judged@2')).toEqual({ code: null, signal: 'SIGKILL' });
    const runIds = [0, 1, 2, 3].map((j) => `${LOOP}-t0-r${j}`);
    // Only the first two verdicts are stored, whatever else was in flight.
    expect(peekStore(many, withRun)).toEqual([...runIds, `${LOOP}-t0-p0`, `${LOOP}-t0-p1`].sort());

    const resumed = await cli(args(many, 4));
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.out).toBe(serial.out.split(oneDir).join(manyDir));
    const [a, b] = [openStore(many), openStore(one)];
    try {
      expect(records(a)).toEqual(records(b).map((r) => r.split(oneDir).join(manyDir)));
      expect(steps(a)).toEqual(steps(b));
      expect(steps(a)).toHaveLength(16);
    } finally {
      a.close();
      b.close();
    }
    const [outA, outB] = [path.join(manyDir, 'flowlab-mass', LOOP), path.join(oneDir, 'flowlab-mass', LOOP)];
    const files = filesUnder(outA);
    expect(files).toEqual(filesUnder(outB));
    for (const f of files) expect(readFileSync(path.join(outA, f), 'utf8'), f).toBe(readFileSync(path.join(outB, f), 'utf8').split(oneDir).join(manyDir));
  }, 300_000);
});
