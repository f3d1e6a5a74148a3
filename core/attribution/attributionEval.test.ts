import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../cli/main.ts';
import { capture, tempDir } from '../../test/fixtures.ts';

const run = async (...argv: string[]) => {
  const io = capture();
  const code = await main(['attribution-eval', ...argv], io);
  return { code, out: io.out, err: io.err };
};

/** Two tiny logs: one surfaces a failure at the labelled step, one surfaces nothing. */
function craftedFolder(): string {
  const dir = tempDir('attr-cli');
  const base = { question: 'q', ground_truth: 'g', is_corrected: false, mistake_reason: 'r', question_ID: 'x' };
  writeFileSync(path.join(dir, '1.json'), JSON.stringify({
    ...base,
    history: [{ role: 'human', content: 'task' }, { role: 'Orchestrator (thought)', content: 'plan' }, { role: 'ComputerTerminal', content: 'exitcode: 1' }],
    mistake_agent: 'ComputerTerminal',
    mistake_step: '2',
  }));
  writeFileSync(path.join(dir, '2.json'), JSON.stringify({
    ...base,
    history: [{ role: 'human', content: 'task' }, { role: 'WebSurfer', content: 'a page' }],
    mistake_agent: 'WebSurfer',
    mistake_step: '1',
  }));
  return dir;
}

describe('flowlab attribution-eval', () => {
  it('bad arguments: usage and exit code 2', async () => {
    const cases: Array<[string[], string]> = [
      [['--method', 'surfaced'], 'missing --dataset'],
      [['--dataset', 'gaia', '--method', 'surfaced'], 'unknown --dataset "gaia"'],
      [['--dataset', 'who-and-when'], 'missing --method'],
      [['--dataset', 'who-and-when', '--method', 'vibes'], 'unknown --method "vibes"'],
      [['--dataset', 'who-and-when', '--method', 'all-at-once'], '--method all-at-once needs --model'],
      [['--dataset', 'who-and-when', '--method', 'surfaced', '--model', 'm.gguf'], 'surfaced uses no model'],
      [['--dataset', 'who-and-when', '--method', 'surfaced', '--limit', '0'], '--limit must be an integer >= 1, got "0"'],
      [['--dataset', 'who-and-when', '--method', 'surfaced', '--harness-crash', 'x'], '--harness-crash takes infrastructure or execution'],
      [['--dataset', 'who-and-when', '--method', 'surfaced', '--bogus'], "Unknown option '--bogus'"],
    ];
    for (const [argv, message] of cases) {
      const r = await run(...argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.err).toContain(message);
      expect(r.err).toContain('Usage: flowlab attribution-eval');
    }
  });

  it('a missing folder or a bad log: exit 1 with a clear message', async () => {
    const missing = path.join(tmpdir(), 'flowlab-no-such-folder-xyz');
    let r = await run('--dataset', 'who-and-when', '--method', 'surfaced', '--path', missing);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`Who&When folder not found: ${missing}`);
    const dir = craftedFolder();
    writeFileSync(path.join(dir, '3.json'), '{"history": "nope"}');
    r = await run('--dataset', 'who-and-when', '--method', 'surfaced', '--path', dir);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${path.join(dir, '3.json')}: "history" is not an array`);
  });

  it('surfaced on a crafted folder: --json object and the table', async () => {
    const dir = craftedFolder();
    let r = await run('--dataset', 'who-and-when', '--method', 'surfaced', '--path', dir, '--json');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j).toMatchObject({
      logs: 2,
      covered: 1,
      agentAccuracy: { overAll: 0.5, overCovered: 1 },
      stepAccuracy: { overAll: 0.5, overCovered: 1 },
      method: 'surfaced',
    });
    r = await run('--dataset', 'who-and-when', '--method', 'surfaced', '--path', dir);
    expect(r.code).toBe(0);
    expect(r.out).toContain('agent accuracy, over covered');
    expect(r.out).toContain('100.0%');
    expect(r.out).toContain('from the paper, for context: best LLM method');
    expect(r.out).toContain('agent 54%–55%, step <= 25.5%');
    expect(r.out).toContain('ComputerTerminal');
  });
});
