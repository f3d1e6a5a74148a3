/**
 * Run diff end to end: `flowlab serve` over a fresh database holding two experiments of the
 * gsm8k-team workflow, driven from Debian Chromium through playwright-core.
 *
 * The experiments are run before the server starts, through the real engine, with the scripted
 * model — a SIMULATED model, named so in the stored calls (core/api/runDiff.fixture.ts): in one
 * the verifier accepts at once, in the other it asks for a revision first, so that run loops
 * through solve, calculate and verify again. In the browser: open the first run's trace, choose
 * "Diff with…" the other run, see both runs side by side aligned by node with the verifier's
 * first verdict highlighted and named as the first divergence, open the loop's extra node run,
 * go back to the trace. Screenshots go to artifacts/screenshots/. Skips, saying why, without
 * Chromium (unless FLOWLAB_E2E_REQUIRED=1). Needs no model.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedRunDiffPair, VERDICTS } from '../core/api/runDiff.fixture.ts';
import { browserMissing, openLab, REQUIRED, screenshot, type OpenLab, type ServeProcess } from './harness.ts';

const noBrowser = browserMissing();
if (noBrowser && REQUIRED) throw new Error(`e2e: ${noBrowser} (FLOWLAB_E2E_REQUIRED=1: the browser tests must run here)`);
if (noBrowser) process.stdout.write(`[e2e diff] SKIPPED: ${noBrowser}\n`);

const WAIT = { timeout: 30_000 } as const;
const tid = (id: string) => `[data-testid="${id}"]`;

let lab: OpenLab<{ a: string; b: string }>;
let serve: ServeProcess;
let page: Page;
let pair = { a: '', b: '' };
let pageErrors: string[] = [];

describe.skipIf(!!noBrowser)('run diff in Chromium against flowlab serve (SIMULATED scripted gsm8k-team pair)', () => {
  beforeAll(async () => {
    lab = await openLab((store) => seedRunDiffPair(store));
    ({ serve, page, pageErrors, seeded: pair } = lab);
  }, 120_000);

  afterAll(() => lab?.close(), 60_000);

  it('offers the same task of the other experiment in "Diff with…"', async () => {
    await page.goto(serve.url);
    await page.click(tid('nav-trace'));
    await page.selectOption(tid('pick-experiment'), 'diff-accept', WAIT);
    await page.click(tid('pick-run-0'), WAIT);
    await page.locator(`${tid('graph')}[data-nodes="5"][data-ready="true"]`).waitFor(WAIT);
    const picker = page.locator(tid('diff-with'));
    await page.locator(`${tid('diff-with')} option[value="${pair.b}"]`).waitFor({ state: 'attached', ...WAIT });
    await expect(picker.locator(`option[value="${pair.b}"]`).textContent()).resolves.toBe('diff-revise · task 0 · seed 3 · ✓');
    await expect(picker.locator('optgroup').getAttribute('label')).resolves.toBe('Task 0 in other experiments of gsm8k-team');
  });

  it('shows both runs side by side, aligned by node, the verifier\'s first verdict highlighted as the first divergence', async () => {
    await page.selectOption(tid('diff-with'), pair.b);
    const first = page.locator(tid('diff-first'));
    await first.waitFor(WAIT);
    await expect(first.textContent()).resolves.toBe(`First diverging node: verify#1 (agent verifier) — sampled text, call 0 completionA: ${VERDICTS.accept}B: ${VERDICTS.revise}`);
    // The graph gave way to the diff; the rows are the aligned node runs in diff order.
    await expect(page.locator(tid('graph')).count()).resolves.toBe(0);
    const rows = await page.locator(`${tid('diff-table')} tbody tr`).evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-testid')));
    expect(rows).toEqual(['plan-1', 'solve-1', 'calculate-1', 'verify-1', 'solve-2', 'answer-1', 'calculate-2', 'verify-2'].map((k) => `diff-row-${k}`));
    const row = page.locator(tid('diff-row-verify-1'));
    await expect(row.getAttribute('class')).resolves.toMatch(/\bdiff-first\b/);
    await expect(page.locator('tr.diff-first').count()).resolves.toBe(1);
    // The highlight is visible: the first divergence's row has a background of its own.
    const [firstBg, sameBg] = await Promise.all([row.evaluate((el) => getComputedStyle(el).backgroundColor), page.locator(tid('diff-row-plan-1')).evaluate((el) => getComputedStyle(el).backgroundColor)]);
    expect(firstBg).not.toBe(sameBg);
    await expect(row.locator('td').nth(1).textContent()).resolves.toBe(`ok${VERDICTS.accept}`);
    await expect(row.locator('td').nth(2).textContent()).resolves.toBe(`ok${VERDICTS.revise}`);
    await expect(page.locator(tid('diff-row-solve-2')).locator('td').nth(3).textContent()).resolves.toBe('ran in B only');
    await expect(page.locator(tid('diff-counts')).textContent()).resolves.toMatch(/^8 node runs aligned: 4 differ \(0 only in A, 3 only in B\)/);
    await expect(page.locator(tid('diff-detail')).locator('h4').textContent()).resolves.toBe('verify#1 2 differences, in data-flow order');
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshot(page, 'run-diff');
  });

  it('opens another node run\'s differences, then goes back to the trace', async () => {
    await page.locator(tid('diff-row-solve-2')).locator('button').click();
    await expect(page.locator(tid('diff-detail')).locator('h4').textContent()).resolves.toBe('solve#2 1 difference, in data-flow order');
    await expect(page.locator(tid('diff-detail-0')).textContent()).resolves.toBe('ran in one run only ranA: (none)B: ok');
    await page.click(tid('diff-close'));
    await page.locator(`${tid('graph')}[data-nodes="5"][data-ready="true"]`).waitFor(WAIT);
    await expect(page.locator(tid('run-diff')).count()).resolves.toBe(0);
    await expect(page.locator(tid('diff-with')).inputValue()).resolves.toBe('');
  });

  it('raised no uncaught error in the page', () => {
    expect(pageErrors).toEqual([]);
  });
});
