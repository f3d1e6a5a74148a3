/**
 * One vocabulary with the CLI (issue 29 part 4), in Debian Chromium against `flowlab serve`: the
 * test walks Experiments, Trace, Ladder, Rollouts and Runs over one database
 * (test/vocabulary.fixture.ts, SIMULATED records: a blame-eval on two model files, a rollouts
 * experiment of 2 tasks × G = 2, a run whose run failed) and checks each label against what the
 * CLI prints for the same file: the kind as `flowlab ls`'s table names it, the models of
 * `ls --json`, the task `task/rollout` of `ls <experiment> --json`, the status and grade of
 * `show <run> --json`, and the first line of `show <experiment> --json`. Skips, saying why,
 * without Chromium.
 */
import { spawnSync } from 'node:child_process';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunHit } from '../core/store/index.ts';
import type { RunRecord } from '../core/results/index.ts';
import { seedVocabulary } from '../test/vocabulary.fixture.ts';
import { browserMissing, openLab, REQUIRED, ROOT, screenshot, type OpenLab } from './harness.ts';

const noBrowser = browserMissing();
if (noBrowser && REQUIRED) throw new Error(`e2e: ${noBrowser} (FLOWLAB_E2E_REQUIRED=1: the browser tests must run here)`);
if (noBrowser) process.stdout.write(`[e2e vocabulary] SKIPPED: ${noBrowser}\n`);

const WAIT = { timeout: 30_000 } as const;
const tid = (id: string) => `[data-testid="${id}"]`;

let lab: OpenLab<ReturnType<typeof seedVocabulary>>;
let page: Page;

/** What the CLI prints for `args` on the lab's database. */
function cli(...args: string[]): string {
  const r = spawnSync(process.execPath, ['bin/flowlab.js', ...args, '--db', lab.ws.db], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`flowlab ${args.join(' ')} failed (exit ${r.status}):\n${r.stderr}`);
  return r.stdout;
}
const json = <T>(...args: string[]) => JSON.parse(cli(...args, '--json')) as T;
/** An element's text, spaces collapsed. */
const text = async (testId: string) => ((await page.locator(tid(testId)).first().textContent(WAIT)) ?? '').replace(/\s+/g, ' ').trim();

interface ShownExperiment { kind: string; workflowName: string; dataset: string; split: string; models: string[] }
/** `show <experiment-id>`'s first words: kind (as its table prints it), workflow, dataset/split, models. */
function showLine(id: string): string {
  const s = json<ShownExperiment>('show', id);
  const kind = /^Experiment \S+ {2}(.+?) {2}workflow /.exec(cli('show', id).split('\n')[0]!)![1]!;
  expect(kind.startsWith(s.kind)).toBe(true);
  return `${kind} · workflow ${s.workflowName} · dataset ${s.dataset}/${s.split} · models ${s.models.join(', ')}`;
}

describe.skipIf(!!noBrowser)('the window names kinds, tasks, outcomes and models as the CLI does', () => {
  beforeAll(async () => {
    lab = await openLab((store) => seedVocabulary(store));
    page = lab.page;
    await page.goto(lab.serve.url);
  }, 180_000);

  afterAll(async () => {
    await lab?.close();
  }, 60_000);

  it('Experiments: each kind as `ls` prints it (a blame-eval is SIMULATED), each model column as `ls --json`', async () => {
    await page.click(tid('nav-experiments'));
    const rows = json<{ rows: Array<{ id: string; models: string[] }> }>('ls').rows;
    expect(rows.map((r) => r.id).sort()).toEqual(['exp-blame', 'exp-roll', 'exp-run']);
    const table = cli('ls').split('\n');
    for (const r of rows) {
      const kind = await text(`experiment-kind-${r.id}`);
      expect(table.find((l) => l.includes(` ${r.id} `))).toContain(`│ ${kind} `);
      expect(await text(`experiment-model-${r.id}`)).toBe(r.models.join(', '));
    }
    expect(await text('experiment-kind-exp-blame')).toBe('blame-eval (SIMULATED faults)');
    await screenshot(page, 'vocabulary-experiments');
  });

  it('Trace: a rollout\'s task is `task/rollout` of `ls --json`, its experiment as `show` heads it', async () => {
    const hit = json<{ rows: RunHit[] }>('ls', lab.seeded.rollouts).rows.find((r) => r.taskIndex === 3)!;
    await page.click(tid('nav-trace'));
    await page.selectOption(tid('pick-experiment'), lab.seeded.rollouts, WAIT);
    await expect.poll(() => text('run-task-3'), WAIT).toBe(`${hit.rollout!.task}/${hit.rollout!.index}`);
    await page.click(tid('pick-run-3'), WAIT);
    await expect.poll(() => text('trace-task'), WAIT).toBe(`Task ${hit.rollout!.task}/${hit.rollout!.index} ${hit.taskId}`);
    expect(await text('trace-experiment')).toBe(showLine(lab.seeded.rollouts));
    await screenshot(page, 'vocabulary-trace');
  });

  it('Ladder: a failed run reads "failed · wrong" as `show <run> --json` has it, with its experiment\'s models', async () => {
    const { run } = json<{ run: RunRecord }>('show', 'exp-run-r0');
    expect([run.status, run.correct]).toEqual(['failed', false]);
    await page.click(tid('nav-trace'));
    await page.selectOption(tid('pick-experiment'), lab.seeded.run, WAIT);
    await page.click(tid('pick-run-0'), WAIT);
    await page.click(tid('nav-ladder'));
    await expect.poll(() => text('ladder-run-title'), WAIT).toBe(`Run ${run.runId} · task ${run.taskIndex} · ${run.status} · ${run.correct ? 'correct' : 'wrong'}`);
    expect(await text('ladder-experiment')).toBe(showLine(lab.seeded.run));
  });

  it('Rollouts: groups numbered by task as `ls` numbers them, the models shown', async () => {
    const hits = json<{ rows: RunHit[] }>('ls', lab.seeded.rollouts).rows;
    await page.click(tid('nav-rollouts'));
    await page.selectOption(tid('rollouts-experiment'), lab.seeded.rollouts, WAIT);
    for (const task of [...new Set(hits.map((h) => h.rollout!.task))]) {
      await expect.poll(() => text(`rollouts-group-${task}`), WAIT).toMatch(new RegExp(`^task ${task} `));
    }
    expect(await text('rollouts-models')).toBe(`models ${json<ShownExperiment>('show', lab.seeded.rollouts).models.join(', ')}`);
  });

  it('no page error on the way', () => {
    expect(lab.pageErrors).toEqual([]);
  });
});
