import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../../cli/main.ts';
import { capture, tempDir } from '../../../test/fixtures.ts';

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

  it('a missing folder: exit 1 with a clear message; bad logs: exit 1 naming the count and the first (issue 30), with --skip-bad listed as unscorable and the rest scored', async () => {
    const missing = path.join(tmpdir(), 'flowlab-no-such-folder-xyz');
    let r = await run('--dataset', 'who-and-when', '--method', 'surfaced', '--path', missing);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`Who&When folder not found: ${missing}`);
    const dir = craftedFolder();
    writeFileSync(path.join(dir, '3.json'), '{"history": "nope"}');
    writeFileSync(path.join(dir, '4.json'), '{"history": [');
    writeFileSync(path.join(dir, '5.json'), '{"history": [], "mistake_agent": "WebSurfer", "mistake_step": "0"}');
    writeFileSync(path.join(dir, '6.json'), '[1, 2]');
    // Issue 30: bad logs end the command (count, first file and field) unless --skip-bad.
    r = await run('--dataset', 'who-and-when', '--method', 'surfaced', '--path', dir);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`4 of 6 Who&When logs in ${dir} cannot be scored; the first: ${path.join(dir, '3.json')}: "history" is not an array. Fix them, or pass --skip-bad`);
    expect(r.err).toContain('[BAD_LOGS]');
    r = await run('--dataset', 'who-and-when', '--method', 'surfaced', '--path', dir, '--skip-bad');
    expect(r.code).toBe(0);
    expect(r.out).toContain('Unscorable logs, left out of every accuracy (4):');
    expect(r.out).toContain(`${path.join(dir, '3.json')}: "history" is not an array`);
    expect(r.out).toContain(`${path.join(dir, '4.json')}: not valid JSON (`);
    expect(r.out).toContain(`${path.join(dir, '5.json')}: "history" is empty`);
    expect(r.out).toContain(`${path.join(dir, '6.json')}: expected a JSON object`);
    r = await run('--dataset', 'who-and-when', '--method', 'all', '--path', dir, '--json', '--skip-bad');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j).toMatchObject({ logs: 6, scored: 2 });
    expect(j.unscorable.map((u: { logId: string; reason: string }) => [u.logId, u.reason.slice(0, 15)])).toEqual([
      ['3', '"history" is no'],
      ['4', 'not valid JSON '],
      ['5', '"history" is em'],
      ['6', 'expected a JSON'],
    ]);
    expect(j.rows.find((x: { id: string }) => x.id === 'surfaced')).toMatchObject({ logs: 2, covered: 1 });
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
    // The constant guard on the blamed agent: labels ComputerTerminal and WebSurfer (best constant 1 of 2);
    // answers: one agent and no answer, 2 distinct: not constant.
    expect(j.agentGuard).toMatchObject({ runs: 2, labelled: 2, bestConstant: { accuracy: 0.5 }, distinctAnswers: 2 });
    expect(j.agentGuard.constant).toBeUndefined();
    r = await run('--dataset', 'who-and-when', '--method', 'surfaced', '--path', dir);
    expect(r.out).toMatch(/agent: best constant policy \(most blamed agent in the labels\)\s*│\s*50\.0% \(always computerterminal\)/i);
    expect(r.out).toMatch(/agent: distinct agents blamed\s*│\s*2\s/);
    expect(r.code).toBe(0);
    expect(r.out).toContain('agent accuracy, over covered');
    expect(r.out).toContain('100.0%');
    expect(r.out).toContain('from the paper, for context: best LLM method');
    expect(r.out).toContain('agent 54%–55%, step <= 25.5%');
    expect(r.out).toContain('ComputerTerminal');
  });

  it('--harness-crash reaches structural and hybrid, and every method selection states it', async () => {
    // One log: a worker answers, then the Orchestrator's last message ends in the harness crash block.
    const dir = tempDir('attr-crash');
    writeFileSync(path.join(dir, '1.json'), JSON.stringify({
      question: 'q', ground_truth: 'g', is_corrected: false, mistake_reason: 'r', question_ID: 'x',
      history: [
        { role: 'human', content: 'task' },
        { role: 'WebSurfer', content: 'a page' },
        { role: 'Orchestrator (thought)', content: 'Done.\nError processing publish message\nTraceback (most recent call last):\n  File "x"' },
      ],
      mistake_agent: 'Orchestrator',
      mistake_step: '2',
    }));
    const json = async (...argv: string[]) => {
      const r = await run('--dataset', 'who-and-when', '--path', dir, '--json', ...argv);
      expect(r.code, argv.join(' ')).toBe(0);
      return JSON.parse(r.out);
    };
    // execution: the crash is the Orchestrator's (step 2); infrastructure: structure sees nothing.
    expect(await json('--method', 'structural')).toMatchObject({ covered: 1, stepAccuracy: { overAll: 1 }, harnessCrash: 'execution' });
    expect(await json('--method', 'structural', '--harness-crash', 'infrastructure')).toMatchObject({ covered: 0, harnessCrash: 'infrastructure' });
    // hybrid falls back to the first worker (WebSurfer@1) when the crash is nobody's.
    expect(await json('--method', 'hybrid', '--harness-crash', 'infrastructure')).toMatchObject({ covered: 1, agentAccuracy: { overAll: 0 } });
    expect(await json('--method', 'hybrid')).toMatchObject({ agentAccuracy: { overAll: 1 }, stepAccuracy: { overAll: 1 } });
    const all = await json('--method', 'all', '--harness-crash', 'infrastructure');
    const row = (id: string) => all.rows.find((r: { id: string }) => r.id === id);
    expect(all.harnessCrash).toBe('infrastructure');
    expect(row('structural')).toMatchObject({ covered: 0, label: 'structural (team authorship), crash = infrastructure' });
    expect(row('hybrid')).toMatchObject({ agentAccuracy: { overAll: 0 } });
    // The two surfaced rows keep showing both classes.
    expect(row('surfaced')).toMatchObject({ covered: 1 });
    expect(row('surfaced-infrastructure')).toMatchObject({ covered: 0 });

    for (const method of ['all', 'structural', 'surfaced,hybrid']) {
      const r = await run('--dataset', 'who-and-when', '--path', dir, '--method', method, '--harness-crash', 'infrastructure');
      expect(r.code, method).toBe(0);
      expect(r.out, method).toContain("End-of-run harness crash: --harness-crash infrastructure, the harness's fault, blamed on nobody; used by");
    }
    const d = await run('--dataset', 'who-and-when', '--path', dir, '--method', 'all');
    expect(d.out).toContain("End-of-run harness crash: --harness-crash execution (default), the speaking agent's execution failure; used by structural, hybrid (the two surfaced rows show both classes).");
    const none = await run('--dataset', 'who-and-when', '--path', dir, '--method', 'first-worker');
    expect(none.out).not.toContain('End-of-run harness crash');
  });
});
