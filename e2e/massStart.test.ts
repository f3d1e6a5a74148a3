/**
 * Starting a MASS job from the window, end to end: `flowlab serve` over an empty database with
 * the real tiny model (stories260K) in its model folder, driven from Debian Chromium. In the
 * MASS tab: start an evolve (1 task, 3 iterations, threads 1) from the form, see it running with
 * its count and progress lines growing as the pushed events arrive, see it complete, and find its
 * evolution's timeline in the view. Then start a rank and cancel it. Skips, saying why, without
 * Chromium or the model.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserMissing, openLab, recordStates, REQUIRED, screenshot, sharedMissing, type OpenLab, type ServeProcess } from './harness.ts';

const missing = browserMissing() ?? sharedMissing();
if (missing && REQUIRED) throw new Error(`e2e: ${missing} (FLOWLAB_E2E_REQUIRED=1: the browser tests must run here)`);
if (missing) process.stdout.write(`[e2e mass start] SKIPPED: ${missing}\n`);

const tid = (id: string) => `[data-testid="${id}"]`;

let lab: OpenLab<void>;
let serve: ServeProcess;
let page: Page;
let pageErrors: string[] = [];

describe.skipIf(!!missing)('starting MASS jobs from the window (flowlab serve, stories260K)', () => {
  beforeAll(async () => {
    lab = await openLab(() => {});
    ({ serve, page, pageErrors } = lab);
  }, 300_000);

  afterAll(() => lab?.close(), 60_000);

  it('starts an evolve, sees it progress live and complete, and its timeline appears', async () => {
    await page.goto(serve.url);
    await page.click(tid('nav-mass'));
    await page.locator(`${tid('mass-start-model')} option`).first().waitFor({ state: 'attached', timeout: 30_000 });
    await expect(page.locator(tid('mass-start-model')).inputValue()).resolves.toMatch(/stories260K\.gguf$/);
    await page.locator(tid('mass-start-iterations')).fill('3');
    // Every state the job's box shows, recorded in the page as it changes (sampling it from here
    // can miss a count that lasts less than a round trip).
    const states = await recordStates(page, tid('mass-job'), ['data-status'], 'mass-job-count');
    await page.click(tid('mass-start'));
    // Progress arrives while it runs: the count moves and lines are added.
    await page.locator(`${tid('mass-job')} ${tid('mass-job-lines')} li`).first().waitFor({ timeout: 60_000 });
    await page.locator(`${tid('mass-job')}:is([data-status="completed"], [data-status="failed"])`).waitFor({ timeout: 240_000 });
    const status = await page.locator(tid('mass-job')).getAttribute('data-status');
    const seen = await states();
    expect(status).toBe('completed');
    expect(seen.some((s) => s.startsWith('running'))).toBe(true);
    // At least two different counts were shown while it ran (live progress, not only the end); the
    // box's first states, before the job's total is known, show no count and do not count.
    expect(new Set(seen.map((s) => s.split(' ').slice(1).join(' ')).filter((c) => c !== '')).size).toBeGreaterThan(1);
    await expect(page.locator(tid('mass-job-count')).textContent()).resolves.toBe('3 / 3');
    await expect(page.locator(tid('mass-job-lines')).textContent()).resolves.toMatch(/task 0 it 0: baseline ran, external score/);
    // The stored evolution is shown.
    await page.locator(tid('mass-timeline-0')).waitFor({ timeout: 30_000 });
    await expect(page.locator(tid('mass-evolution')).inputValue()).resolves.toBe('evo-learn-tool-1-baseline-stories260k');
    // The timeline may first show the records stored before the job ended; the store's pushed change brings the last.
    await expect.poll(() => page.locator(`${tid('mass-timeline-0')} tbody tr`).count(), { timeout: 30_000 }).toBe(3);
    await screenshot(page, 'mass-start');
  }, 300_000);

  it('starts a rank and cancels it from the window', async () => {
    await page.locator(tid('mass-start-job')).selectOption('rank');
    await page.locator(tid('mass-start-id')).fill('lab-rank');
    await page.click(tid('mass-start'));
    await page.locator(`${tid('mass-job')}[data-status="running"]`).waitFor({ timeout: 60_000 });
    await page.click(tid('mass-cancel'));
    await page.locator(`${tid('mass-job')}[data-status="cancelled"]`).waitFor({ timeout: 60_000 });
    await expect(page.locator(tid('mass-job')).textContent()).resolves.toContain('lab-rank');
    expect(pageErrors).toEqual([]);
  }, 180_000);
});
