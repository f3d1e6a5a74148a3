/**
 * Starting a study from the window, end to end: `flowlab serve` over an empty database with the
 * real tiny model (stories260K) in its model folder, driven from Debian Chromium. In the Studies
 * tab: paste a 1-cell plan (single agent on 2 learn-design tasks), pick the model, threads 1;
 * Dry run shows the estimate; Start shows it running with its progress lines and cell count as
 * the pushed events arrive, then completed, and the study's table appears in the view; a study a
 * token budget stops mid-cell counts that cell as not done, in the job's box as in its summary. Skips,
 * saying why, without Chromium or the model.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserMissing, openLab, recordStates, REQUIRED, screenshot, sharedMissing, type OpenLab, type ServeProcess } from './harness.ts';

const missing = browserMissing() ?? sharedMissing();
if (missing && REQUIRED) throw new Error(`e2e: ${missing} (FLOWLAB_E2E_REQUIRED=1: the browser tests must run here)`);
if (missing) process.stdout.write(`[e2e study start] SKIPPED: ${missing}\n`);

const tid = (id: string) => `[data-testid="${id}"]`;

/** One condition x one zone x one seed x one model: a single cell of 2 runs. */
const PLAN = `name: window-tiny
baseline: single
conditions:
  - { id: single, label: single agent, kind: single-agent, workflow: single-agent.yaml }
zones:
  - { id: id, label: in-distribution, kind: in-distribution, dataset: learn-design, split: heldout, limit: 2 }
seeds: [0]
models:
  - { id: tiny, model: $FLOWLAB_SHARED/models/stories260K.gguf, threads: 1 }
`;

let lab: OpenLab<void>;
let serve: ServeProcess;
let page: Page;
let pageErrors: string[] = [];

describe.skipIf(!!missing)('starting a study from the window (flowlab serve, stories260K)', () => {
  beforeAll(async () => {
    lab = await openLab(() => {});
    ({ serve, page, pageErrors } = lab);
  }, 300_000);

  afterAll(() => lab?.close(), 60_000);

  it('a dry run of a pasted 1-cell plan shows the estimate', async () => {
    await page.goto(serve.url);
    await page.click(tid('nav-studies'));
    await page.locator(`${tid('study-start-plan')} option[value="laptop.yaml"]`).waitFor({ state: 'attached', timeout: 30_000 });
    await page.click(tid('study-source-pasted'));
    // Switching to a pasted plan starts from the chosen shipped plan's text.
    await expect(page.locator(tid('study-start-text')).inputValue()).resolves.toMatch(/^name: laptop$/m);
    await page.locator(tid('study-start-text')).fill(PLAN);
    await page.locator(`${tid('study-start-model')} option[value$="stories260K.gguf"]`).waitFor({ state: 'attached', timeout: 30_000 });
    const model = await page.locator(`${tid('study-start-model')} option[value$="stories260K.gguf"]`).first().getAttribute('value');
    await page.locator(tid('study-start-model')).selectOption(model!);
    await page.locator(tid('study-start-threads')).fill('1');
    await page.locator(tid('study-start-calibrationTasks')).fill('1');
    await page.click(tid('study-dry-run'));
    await page.locator(`${tid('study-job')}[data-status="completed"]`).waitFor({ timeout: 180_000 });
    // The calibration said each run as it was stored (it showed only "calibrating…" for over 90 s).
    const lines = (await page.locator(tid('study-job-lines')).textContent()) ?? '';
    expect(lines).toMatch(/calibrating single on tiny: 1 tasks of learn-design\/heldout/);
    expect(lines).toMatch(/calibrating single on tiny: run 1 of 1 done after \d+\.\d s/);
    await expect(page.locator(tid('study-estimate')).textContent()).resolves.toMatch(/^Estimate: 1 cell and 0 train loops left, 2 runs, \d+ model calls?, \d+ tokens?, about \d+ s\.$/);
    // The study's row takes its estimate from the store's next `stored` event, which may land after the job box settles.
    await page.locator(tid('study-summary')).filter({ hasText: /0\/1 cells, 0\/2 runs · dry-run estimate \d+ s/ }).waitFor({ timeout: 30_000 });
  }, 240_000);

  it('starts it, sees it progress live and complete, and its table appears', async () => {
    // Every state the job's box shows, recorded in the page as it changes (the tiny study can end within a second).
    const states = await recordStates(page, tid('study-job'), ['data-dry-run', 'data-status'], 'study-job-count');
    await page.click(tid('study-start'));
    await page.locator(`${tid('study-job')}[data-dry-run="false"][data-status="completed"]`).waitFor({ timeout: 240_000 });
    const seen = await states();
    // It was shown running, with the cell count moving from 0 to 1 of 1.
    expect(seen).toContain('false running 0 / 1 cells');
    expect(seen.at(-1)).toBe('false completed 1 / 1 cells');
    await expect(page.locator(tid('study-job-count')).textContent()).resolves.toBe('1 / 1 cells');
    const lines = (await page.locator(tid('study-job-lines')).textContent()) ?? '';
    expect(lines).toMatch(/cell single\/id\/s0\/tiny: run 2\/2/);
    expect(lines).toMatch(/Study st-window-tiny-\w+: 1 cell, 0 train loops/);
    expect(lines).toMatch(/Status: completed\. CSV and HTML: .*flowlab-studies/);
    // The stored study is shown with its table.
    await expect.poll(() => page.locator(tid('study-summary')).textContent(), { timeout: 30_000 }).toMatch(/completed · 1\/1 cells, 2\/2 runs/);
    await expect(page.locator(`${tid('study-table')} tbody tr`).count()).resolves.toBe(1);
    await screenshot(page, 'study-start');
    expect(pageErrors).toEqual([]);
  }, 300_000);

  it('a study a token budget stops mid-cell: the header counts the cells the summary counts (it said 4 / 15 beside 3/15)', async () => {
    await page.locator(tid('study-start-text')).fill(PLAN.replace('name: window-tiny', 'name: window-budget'));
    await page.locator(tid('study-start-budgetTokens')).fill('1');
    await page.click(tid('study-start'));
    // The first run spends more than one token: the budget stops the cell after it, 1 of its 2 runs stored.
    await page.locator(`${tid('study-job')}[data-dry-run="false"][data-status="stopped"]`).waitFor({ timeout: 240_000 });
    const id = (await page.locator(`${tid('study-job')} code`).first().textContent()) ?? '';
    expect(id).toMatch(/^st-window-budget-/);
    await expect(page.locator(tid('study-job-count')).textContent()).resolves.toBe('0 / 1 cells');
    await page.locator(tid('study-select')).selectOption(id);
    await expect.poll(() => page.locator(tid('study-summary')).textContent(), { timeout: 30_000 }).toMatch(new RegExp(`^${id} · \\w+ · 0/1 cells, 1/2 runs`));
    expect(pageErrors).toEqual([]);
  }, 300_000);
});
