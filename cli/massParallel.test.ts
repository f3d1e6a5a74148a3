/**
 * `flowlab rank --parallel n` (issue 26; core/mass/inFlight.ts): the command with a SIMULATED
 * model whose replies are delayed by call (core/mass/rsi.fixture.ts `delayed`) prints the same
 * report and stores the same loop records at --parallel 1 and 8, keeps several calls in flight
 * at 8, and refuses --parallel 0 naming the flag. (The rows of every table: core/mass/parallel.test.ts.)
 */
import path from 'node:path';
import { Command } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { delayed, flight, scripted } from '../core/mass/rsi.fixture.ts';
import { openStore } from '../core/store/index.ts';
import { capture, tempDir } from '../test/fixtures.ts';
import { define as defineRank } from './commands/rank.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function rankAt(parallel: string | undefined) {
  const dir = tempDir('mass-parallel-cli');
  dirs.push(dir);
  const io = capture();
  const f = flight();
  const cmd = new Command('rank').exitOverride();
  defineRank(cmd, { io }, { makeProvider: async (file) => delayed(scripted(file), f) });
  const db = path.join(dir, 'f.db');
  await cmd.parseAsync(['--model', path.join(dir, 'base.gguf'), '--tasks', '2', '--runs', '5', '--top-k', '3', '--loop-id', 'rank-cli', '--db', db, '--out', path.join(dir, 'out'), '--allow-unreliable-judge', ...(parallel === undefined ? [] : ['--parallel', parallel])], { from: 'user' });
  const store = openStore(db);
  const records = store.mass.list('rank-cli').map((r) => ({ kind: r.kind, key: r.key, value: JSON.stringify(r.value).split(dir).join('<dir>') }));
  store.close();
  return { f, out: io.out.split(dir).join('<dir>'), err: io.err, records };
}

describe('flowlab rank --parallel', () => {
  it('prints and stores the same at --parallel 1 and 8; 8 keeps calls in flight; the default is 1 for a local file', { timeout: 120_000 }, async () => {
    const byDefault = await rankAt(undefined);
    const one = await rankAt('1');
    const many = await rankAt('8');
    expect(byDefault.f.max).toBe(1);
    expect(one.f.max).toBe(1);
    expect(many.f.max).toBeGreaterThan(1);
    expect(many.f.finishOrder).not.toEqual([...many.f.finishOrder].sort((a, b) => a - b));
    expect(one.out).toContain('rank-cli-t1-r4/0');
    expect(many.out).toBe(one.out);
    expect(byDefault.out).toBe(one.out);
    expect(one.records.map((r) => r.kind)).toEqual(expect.arrayContaining(['outer-settings', 'outer-ranking', 'judge-audit']));
    expect(many.records).toEqual(one.records);
  });

  it('refuses --parallel 0, naming the flag', async () => {
    const io = capture();
    const cmd = new Command('rank').exitOverride().configureOutput({ writeErr: (s) => io.stderr(s), writeOut: (s) => io.stdout(s) });
    defineRank(cmd, { io });
    await expect(cmd.parseAsync(['--model', '/m.gguf', '--parallel', '0'], { from: 'user' })).rejects.toThrow(/--parallel/);
  });
});
