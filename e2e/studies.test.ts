/**
 * The Studies view end to end: `flowlab serve` over a fresh database holding a finished toy study
 * (core/studies/study.fixture.ts: two workflows on two zones of a six-task toy dataset, run with
 * the scripted model — SIMULATED answers), driven from Debian Chromium through playwright-core.
 * In the browser: the Studies tab shows the table with its intervals and the paired delta, the
 * chart and every cell's progress; a table cell opens its experiment in the Experiments view.
 * A screenshot goes to artifacts/screenshots/studies.png. Skips, saying why, without Chromium
 * (unless FLOWLAB_E2E_REQUIRED=1). Needs no model.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runToyStudy } from '../core/studies/study.fixture.ts';
import { browserMissing, openLab, REQUIRED, screenshot, type OpenLab, type ServeProcess } from './harness.ts';

const noBrowser = browserMissing();
if (noBrowser && REQUIRED) throw new Error(`e2e: ${noBrowser} (FLOWLAB_E2E_REQUIRED=1: the browser tests must run here)`);
if (noBrowser) process.stdout.write(`[e2e studies] SKIPPED: ${noBrowser}\n`);

const WAIT = { timeout: 30_000 } as const;
const tid = (id: string) => `[data-testid="${id}"]`;

let lab: OpenLab<string>;
let serve: ServeProcess;
let page: Page;
let studyId = '';
let pageErrors: string[] = [];

describe.skipIf(!!noBrowser)('the Studies view in Chromium against flowlab serve (SIMULATED scripted model)', () => {
  beforeAll(async () => {
    lab = await openLab(async (store) => (await runToyStudy(store)).studyId);
    ({ serve, page, pageErrors, seeded: studyId } = lab);
  }, 120_000);

  afterAll(() => lab?.close(), 60_000);

  it('shows the table with intervals and deltas, the chart and the cells', async () => {
    await page.goto(serve.url);
    await page.click(tid('nav-studies'));
    await page.locator(tid('study-table')).waitFor(WAIT);
    await expect(page.locator(tid('study-summary')).textContent()).resolves.toContain(`${studyId} · completed · 4/4 cells, 12/12 runs`);
    await expect(page.locator(tid('study-cell-base-id-m')).textContent()).resolves.toBe('50.0 [0.0, 100.0]');
    await expect(page.locator(tid('study-table')).textContent()).resolves.toContain('+50.0 [+0.0, +100.0] p=0.500');
    await expect(page.locator(`${tid('study-chart')} rect`).count()).resolves.toBeGreaterThanOrEqual(4);
    await expect(page.locator(`${tid('study-cells')} progress`).count()).resolves.toBe(4);
    await screenshot(page, 'studies');
    expect(pageErrors).toEqual([]);
  });

  it('opens a cell in the Experiments view', async () => {
    await page.click(tid('study-cell-better-id-m'));
    await expect(page.locator(tid('nav-experiments')).getAttribute('aria-current')).resolves.toBe('page');
    await page.locator(`${tid(`experiment-row-${studyId}.better.id.s0.m`)}.selected`).waitFor(WAIT);
    expect(pageErrors).toEqual([]);
  });
});
