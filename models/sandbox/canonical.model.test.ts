import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDataset, humanEvalProgram, mbppProgram, resolveSharedDir, type Task } from '../../core/tasks/index.ts';
import { noteSkip, tempDir } from '../../test/fixtures.ts';
import { nodeUtilityFork, PyodideSandbox, utilityLauncher } from './index.ts';

const shared = resolveSharedDir();
const humanEvalFile = path.join(shared, 'data', 'humaneval', 'HumanEval.jsonl');
const mbppFile = path.join(shared, 'data', 'mbpp', 'sanitized-mbpp.json');
const haveData = fs.existsSync(humanEvalFile) && fs.existsSync(mbppFile);
if (!haveData) noteSkip('canonical.model.test', 'the HumanEval and MBPP reference-solution checks', fs.existsSync(humanEvalFile) ? mbppFile : humanEvalFile);

/**
 * The sandbox started the way the desktop app starts it (models/sandbox/launcher.ts
 * `utilityLauncher`: the worker program as a file, its flags, a working directory outside any
 * asar), with Node's fork standing in for Electron's `utilityProcess.fork`.
 */
describe.skipIf(!haveData)('reference solutions pass their own tests in the sandbox (launched as the desktop app does)', () => {
  let sandbox: PyodideSandbox;
  const grade = async (tasks: Task[], program: (t: Task, code: string) => string) =>
    Promise.all(tasks.map(async (t) => ({ task: t, result: await sandbox.run({ code: program(t, t.expected), timeoutMs: 10_000 }) })));

  beforeAll(async () => {
    sandbox = new PyodideSandbox({ size: 2, launcher: utilityLauncher(nodeUtilityFork, tempDir('canonical-sandbox')) });
    await sandbox.warm();
  }, 120_000);
  afterAll(async () => { await sandbox?.close(); });

  it('all 164 HumanEval canonical solutions pass', async () => {
    const tasks = getDataset('humaneval', { sharedDir: shared }).load({ split: 'test' });
    expect(tasks).toHaveLength(164);
    const t0 = performance.now();
    const rows = await grade(tasks, humanEvalProgram);
    const failed = rows.filter((r) => r.result.status !== 'ok').map((r) => `${r.task.meta!.task_id}: ${r.result.status} ${r.result.error?.message ?? ''}`);
    console.log(`[canonical] HumanEval: ${rows.length - failed.length}/164 canonical solutions pass (${((performance.now() - t0) / 1000).toFixed(1)} s, 2 warm interpreters, utility launcher)`);
    expect(failed).toEqual([]);
  }, 300_000);

  it('at least 95% of the 427 sanitized-MBPP reference solutions pass (the count is printed)', async () => {
    const tasks = getDataset('mbpp', { sharedDir: shared }).load({ split: 'all' });
    expect(tasks).toHaveLength(427);
    const t0 = performance.now();
    const rows = await grade(tasks, mbppProgram);
    const failed = rows.filter((r) => r.result.status !== 'ok');
    console.log(`[canonical] MBPP (sanitized): ${rows.length - failed.length}/427 reference solutions pass (${((performance.now() - t0) / 1000).toFixed(1)} s); ` +
      `failing: ${failed.map((r) => `task ${r.task.meta!.task_id} ${r.result.status}`).join(', ') || 'none'}`);
    expect(rows.length - failed.length).toBeGreaterThanOrEqual(Math.ceil(0.95 * 427));
  }, 300_000);
});
