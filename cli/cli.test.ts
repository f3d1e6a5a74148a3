import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../core/store/index.ts';
import { capture, tempDir } from '../test/fixtures.ts';
import { main } from './main.ts';

const tmp = () => tempDir('cli');

describe('flowlab CLI arguments', () => {
  it('no command, unknown command, missing or bad flags: usage and exit code 2', async () => {
    let io = capture();
    expect(await main([], io)).toBe(2);
    expect(io.out).toContain('Usage: flowlab <command>');
    io = capture();
    expect(await main(['frobnicate'], io)).toBe(2);
    expect(io.err).toContain('unknown command "frobnicate"');
    io = capture();
    expect(await main(['run', 'examples/gsm8k-team.yaml'], io)).toBe(2);
    expect(io.err).toContain('missing --dataset');
    expect(io.err).toContain('Usage: flowlab run');
    io = capture();
    expect(await main(['run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--limit', 'ten'], io)).toBe(2);
    expect(io.err).toContain('--limit must be an integer >= 1, got "ten"');
    io = capture();
    expect(await main(['run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--bogus'], io)).toBe(2);
    expect(io.err).toContain("Unknown option '--bogus'");
    io = capture();
    expect(await main(['replay'], io)).toBe(2);
  });

  it('a malformed workflow: exit 1 with file, line and what is wrong', async () => {
    const dir = tmp();
    const wf = path.join(dir, 'bad.yaml');
    writeFileSync(wf, 'name: bad\nroles: { a: { kind: planner } }\nnodes:\n  - { id: x, role: ghost }\n');
    const io = capture();
    expect(await main(['run', wf, '--dataset', 'gsm8k', '--model', 'm.gguf', '--db', path.join(dir, 'x.db')], io)).toBe(1);
    expect(io.err).toContain(`${wf}:4:`);
    expect(io.err).toContain('names role "ghost", which is not defined');
  });

  it('a missing model file: exit 1 naming the file, and no experiment is recorded', async () => {
    const dir = tmp();
    const db = path.join(dir, 'x.db');
    const io = capture();
    // A one-line GSM8K file of our own, so this test needs no shared folder.
    mkdirSync(path.join(dir, 'gsm8k'));
    writeFileSync(path.join(dir, 'gsm8k/test.jsonl'), JSON.stringify({ question: 'What is 2 + 2?', answer: '2 + 2 = 4\n#### 4' }) + '\n');
    const code = await main(['run', 'examples/gsm8k-single.yaml', '--dataset', 'gsm8k', '--limit', '1', '--model', path.join(dir, 'nope.gguf'), '--db', db, '--data-dir', dir], io);
    expect(code).toBe(1);
    expect(io.err).toContain(path.join(dir, 'nope.gguf'));
    if (existsSync(db)) {
      const store = openStore(db);
      expect(store.listExperiments()).toHaveLength(0);
      store.close();
    }
  });
});
