/**
 * "Fork from here" end to end: `flowlab serve` over a fresh database holding one recorded run of
 * the main job (gsm8k-team, the tiny real model stories260K, one thread), driven from Debian
 * Chromium through playwright-core. In the browser: open the run's trace, select the solver, fork
 * from it with a replaced output, and see the fork beside its parent in the run diff, the solver's
 * node run highlighted as the first divergence; back on the trace, the run lists its fork, which
 * opens the same diff. Skips, saying why, without Chromium (unless FLOWLAB_E2E_REQUIRED=1) or
 * without the shared model and data.
 */
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from '../test/cli.ts';
import { browserMissing, openLab, REQUIRED, screenshot, sharedMissing, TINY_MODEL, type OpenLab } from './harness.ts';

const noBrowser = browserMissing();
if (noBrowser && REQUIRED) throw new Error(`e2e: ${noBrowser} (FLOWLAB_E2E_REQUIRED=1: the browser tests must run here)`);
const noShared = sharedMissing();
const skip = noBrowser ?? noShared;
if (skip) process.stdout.write(`[e2e fork] SKIPPED: ${skip}\n`);

const WAIT = { timeout: 60_000 } as const;
const tid = (id: string) => `[data-testid="${id}"]`;

let lab: OpenLab<{ experimentId: string }>;
let page: Page;

describe.skipIf(!!skip)('fork from the trace view in Chromium against flowlab serve (main job, stories260K)', () => {
  beforeAll(async () => {
    lab = await openLab(async (_store, ws) => {
      const r = await cli(['run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--split', 'test', '--limit', '1', '--model', path.join(ws.models, path.basename(TINY_MODEL)), '--threads', '1', '--db', ws.db, '--json']);
      if (r.code !== 0) throw new Error(`seed run failed: ${r.err}`);
      return { experimentId: JSON.parse(r.out).experimentId as string };
    });
    page = lab.page;
  }, 180_000);

  afterAll(() => lab?.close(), 60_000);

  it('forks the run at the solver with a replaced output and shows the fork beside its parent, the solver first to diverge', async () => {
    const { experimentId } = lab.seeded;
    await page.goto(lab.serve.url);
    await page.click(tid('nav-trace'));
    await page.selectOption(tid('pick-experiment'), experimentId, WAIT);
    await page.click(tid('pick-run-0'), WAIT);
    await page.locator(`${tid('graph')}[data-ready="true"]`).waitFor(WAIT);
    await page.click(tid('trace-row-solve'));
    await page.click(tid('fork-open'));
    await page.fill(tid('fork-text'), '{"expression":"16 - 3 - 4"}');
    await page.click(tid('fork-run'));
    const first = page.locator(tid('diff-first'));
    await first.waitFor(WAIT);
    await expect(first.textContent()).resolves.toMatch(/^First diverging node: solve#1 \(agent solver\)/);
    const row = page.locator(tid('diff-row-solve-1'));
    await expect(row.getAttribute('class')).resolves.toMatch(/\bdiff-first\b/);
    // The fork is B: its solver's call was answered by the intervention, not the model; its planner came from the recording, unchanged.
    await expect(row.locator('td').nth(1).textContent()).resolves.toContain('stories260K.gguf');
    await expect(row.locator('td').nth(2).textContent()).resolves.toContain('fork intervention (output)');
    await expect(page.locator(tid('diff-row-plan-1')).getAttribute('class')).resolves.not.toMatch(/\bdiff-first\b/);
    await screenshot(page, 'fork-diff');
  }, 120_000);

  it('lists the fork on its parent run, and the fork opens the same diff', async () => {
    await page.click(tid('diff-close'));
    const forks = page.locator(tid('run-forks'));
    await forks.waitFor(WAIT);
    await expect(forks.textContent()).resolves.toMatch(/Forks of this run \(1\):.*at solve#1 \(output\)/);
    await forks.locator('button').first().click();
    await page.locator(tid('diff-first')).waitFor(WAIT);
    await expect(page.locator(tid('diff-first')).textContent()).resolves.toMatch(/^First diverging node: solve#1/);
  }, 60_000);

  it('raised no uncaught error in the page', () => {
    expect(lab.pageErrors).toEqual([]);
  });
});
