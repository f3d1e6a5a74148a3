/**
 * `flowlab rank --replay` and `flowlab rsi --replay`: a loop run with the SIMULATED model
 * (core/mass/rsi.fixture.ts) is replayed from the store with no model at all — the replay's
 * provider factory is never called and no model is loaded — and prints the loop's report byte
 * for byte, every record and file identical.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeTrainer, scripted } from '../core/mass/rsi.fixture.ts';
import { openStore } from '../core/store/index.ts';
import type { SftSequence } from '../core/training/index.ts';
import type { CommandContext } from './args.ts';
import { define as defineRank } from './commands/rank.ts';
import { define as defineRsi, type RsiCommandDeps } from './commands/rsi.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function run(define: typeof defineRank, args: string[], deps: RsiCommandDeps): Promise<{ code: number | undefined; out: string; err: string }> {
  let out = '';
  let err = '';
  const ctx: CommandContext = { io: { stdout: (s) => void (out += s), stderr: (s) => void (err += s), isTTY: false } };
  const cmd = new Command('x').exitOverride();
  define(cmd, ctx, deps);
  await cmd.parseAsync(args, { from: 'user' });
  return { code: ctx.status, out, err };
}

/** A provider factory that counts its calls (the replay must never call it). */
function counted(log: string[]): RsiCommandDeps['makeProvider'] {
  return async (file) => {
    log.push(file);
    return scripted(file);
  };
}

describe('outer-loop replay without the model (SIMULATED model)', () => {
  it('rank: a halted loop (the SIMULATED tamperer) replays byte-identical, recorded as halted, no model loaded', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'rank-replay-'));
    dirs.push(dir);
    const db = path.join(dir, 'f.db');
    const base = ['--model', path.join(dir, 'base.gguf'), '--dataset', 'learn-tool', '--tasks', '2', '--runs', '5', '--top-k', '3', '--db', db, '--loop-id', 'rk'];
    const loads: string[] = [];
    const first = await run(defineRank, [...base, '--simulate-tamperer', 'expectation'], { makeProvider: counted(loads) });
    expect(first.code).toBe(3);
    expect(first.out).toContain('HALTED in cycle 1 (rk)');
    expect(first.out).toContain('Judge audit: self-judge (');
    expect(loads).toHaveLength(1);

    const store = openStore(db);
    expect(store.mass.get('rk', 'outer-halt', 'halt')?.value).toEqual({ cycle: null, reasons: ['6 of 10 runs quarantined (60.0%), above the threshold of 25.0%'] });
    // A rerun with other settings under the same loop id is refused, naming them.
    store.close();
    const other = await run(defineRank, [...base, '--simulate-tamperer', 'expectation', '--max-quarantined', '1'], { makeProvider: counted(loads) }).catch((e: Error) => e);
    expect(String(other)).toMatch(/loop rk was started with other settings \(options\.thresholds\)/);

    const replayLoads: string[] = [];
    const replay = await run(defineRank, ['--replay', 'rk', '--db', db], { makeProvider: counted(replayLoads) });
    expect(replayLoads).toEqual([]);
    expect(replay.code).toBe(0);
    expect(replay.out.startsWith(first.out)).toBe(true);
    const tail = replay.out.slice(first.out.length);
    expect(tail).toMatch(/^Replay of rk \(rank\) without the model: (\d+)\/\1 records and (\d+)\/\2 files identical; models loaded 0; /);
    const json = JSON.parse((await run(defineRank, ['--replay', 'rk', '--db', db, '--json'], {})).out) as { mismatches: string[]; modelsLoaded: number; records: number; files: number };
    expect(json).toMatchObject({ mismatches: [], modelsLoaded: 0 });
    // settings, 2 rankings, the judge audit, the halt; 10 environments x (guard.json + 3 protected files)
    expect(json.records).toBe(5);
    expect(json.files).toBe(40);
  }, 120_000);

  it('rsi: two cycles with training replay every record, export and report byte-identical; the trainer and the model are never used', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'rsi-replay-'));
    dirs.push(dir);
    const db = path.join(dir, 'f.db');
    const model = path.join(dir, 'base.gguf');
    writeFileSync(model, 'base');
    const log: Array<{ start: string; seqs: SftSequence[] }> = [];
    const args = ['--model', model, '--dataset', 'learn-tool', '--tasks', '2', '--runs', '5', '--top-k', '3', '--heldout', '6', '--cycles', '2', '--sft-passes', '1', '--db', db, '--loop-id', 'cy', '--allow-unreliable-judge'];
    const first = await run(defineRsi, args, { makeProvider: counted([]), trainer: fakeTrainer(log) });
    expect(first.code).toBe(0);
    expect(log.length).toBe(4);
    const replayLoads: string[] = [];
    const replayLog: typeof log = [];
    const replay = await run(defineRsi, ['--replay', 'cy', '--db', db], { makeProvider: counted(replayLoads), trainer: fakeTrainer(replayLog) });
    expect(replay.code).toBe(0);
    expect(replayLoads).toEqual([]);
    expect(replayLog).toEqual([]);
    expect(replay.out.startsWith(first.out)).toBe(true);
    expect(replay.out.slice(first.out.length)).toMatch(/^Replay of cy \(rsi, 2 cycle\(s\)\) without the model: (\d+)\/\1 records and (\d+)\/\2 files identical; models loaded 0; /);
    // A changed export in the loop's folder is caught, named, and fails the replay.
    const exported = path.join(dir, 'flowlab-mass', 'cy', 'cycle-1', 'verifier', 'train.jsonl');
    writeFileSync(exported, readFileSync(exported, 'utf8').replace('assistant', 'user'));
    const changed = await run(defineRsi, ['--replay', 'cy', '--db', db], {});
    expect(changed.code).toBe(1);
    expect(changed.out).toContain('1 differ:\n  file cycle-1/verifier/train.jsonl: differs');
  }, 120_000);

  it('rsi: a loop the blind-spot guard halts (flags set here) prints the guard, writes no export and replays byte-identical', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'rsi-blind-'));
    dirs.push(dir);
    const db = path.join(dir, 'f.db');
    const model = path.join(dir, 'base.gguf');
    writeFileSync(model, 'base');
    const log: Array<{ start: string; seqs: SftSequence[] }> = [];
    const args = ['--model', model, '--dataset', 'learn-tool', '--tasks', '2', '--runs', '5', '--top-k', '3', '--heldout', '2', '--cycles', '1', '--sft-passes', '1', '--db', db, '--loop-id', 'bs', '--allow-unreliable-judge',
      '--blind-spot-sample', '1', '--max-blind-disagreement', '0.1'];
    const first = await run(defineRsi, args, { makeProvider: counted([]), trainer: fakeTrainer(log) });
    expect(first.code).toBe(3);
    expect(first.out).toMatch(/HALTED in cycle 1 \(bs-c1-shared\), before any training:\n  - blind-spot guard: the external verifier rejects \d+ of 6 sampled self-judged winners/);
    expect(log).toEqual([]);
    expect(() => readFileSync(path.join(dir, 'flowlab-mass', 'bs', 'cycle-1', 'self', 'manifest.json'))).toThrow();
    const halt = JSON.parse(readFileSync(path.join(dir, 'flowlab-mass', 'bs', 'halt.json'), 'utf8')) as { blindSpot: { sampled: number; threshold: unknown } };
    expect(halt.blindSpot).toMatchObject({ sampled: 6, threshold: { sample: 1, maxDisagreement: 0.1 } });
    const replay = await run(defineRsi, ['--replay', 'bs', '--db', db], { makeProvider: counted([]), trainer: fakeTrainer([]) });
    expect(replay.out.slice(first.out.length)).toMatch(/^Replay of bs \(rsi, 1 cycle\(s\)\) without the model: (\d+)\/\1 records and (\d+)\/\2 files identical; models loaded 0; /);
  }, 120_000);
});
