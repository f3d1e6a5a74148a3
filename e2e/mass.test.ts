/**
 * The MASS view end to end: `flowlab serve` over a database holding two evolutions, driven from
 * Debian Chromium through playwright-core.
 *
 * `evo-learn-tool-1-baseline-stories260k` is a real inner loop run by `flowlab evolve` on stories260K (4
 * iterations) before the server starts; `evo-scripted` is the scripted loop of
 * core/mass/loop.fixture.ts (a SIMULATED team, judge and optimizer) whose accepted versions give
 * a design diff to show. In the browser: open the MASS tab, see the real loop's timeline (its
 * verdicts with the side the candidate was shown on), switch to the scripted one, see its two
 * champion changes and rejected proposals, and the diff from v0 to v2. Screenshots go to
 * artifacts/screenshots/ (mass-timeline.png). Skips, saying why, without Chromium or the model.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evolve } from '../core/mass/inner.ts';
import { scripted, spec } from '../core/mass/loop.fixture.ts';
import { defaultTools } from '../core/tools/index.ts';
import { cli } from '../test/cli.ts';
import { browserMissing, openLab, REQUIRED, screenshot, sharedMissing, TINY_MODEL, type OpenLab, type ServeProcess } from './harness.ts';

const missing = browserMissing() ?? sharedMissing();
if (missing && REQUIRED) throw new Error(`e2e: ${missing} (FLOWLAB_E2E_REQUIRED=1: the browser tests must run here)`);
if (missing) process.stdout.write(`[e2e mass] SKIPPED: ${missing}\n`);

const WAIT = { timeout: 30_000 } as const;
const tid = (id: string) => `[data-testid="${id}"]`;

let lab: OpenLab<void>;
let serve: ServeProcess;
let page: Page;
let pageErrors: string[] = [];

describe.skipIf(!!missing)('the MASS view in Chromium against flowlab serve', () => {
  beforeAll(async () => {
    lab = await openLab(async (store, ws) => {
      await evolve(spec('evo-scripted'), { store, provider: scripted(), tools: defaultTools() });
      const real = await cli(['evolve', 'learn-tool', '--model', TINY_MODEL, '--threads', '1', '--iterations', '4', '--db', ws.db]);
      if (real.code !== 0) throw new Error(`flowlab evolve failed: ${real.err}`);
    });
    ({ serve, page, pageErrors } = lab);
  }, 300_000);

  afterAll(() => lab?.close(), 60_000);

  it('shows the real loop’s champion timeline with each verdict’s orientation', async () => {
    await page.goto(serve.url);
    await page.click(tid('nav-mass'));
    const timeline = page.locator(tid('mass-timeline-0'));
    await timeline.waitFor(WAIT);
    await expect(page.locator(tid('mass-evolution')).inputValue()).resolves.toBe('evo-learn-tool-1-baseline-stories260k');
    await expect(timeline.locator('tbody tr').count()).resolves.toBe(4);
    await expect(timeline.textContent()).resolves.toMatch(/vs baseline: (A|B|tie|no valid verdict) \(candidate shown as [AB]\)/);
    await screenshot(page, 'mass-timeline');
  });

  it('switches to the scripted loop (SIMULATED) and shows its champion changes, rejections and a design diff', async () => {
    await page.locator(tid('mass-evolution')).selectOption('evo-scripted');
    const timeline = page.locator(tid('mass-timeline-0'));
    await page.locator(`${tid('mass-task-0')} h3:has-text("champion v2")`).waitFor(WAIT);
    await expect(timeline.locator('tr.mass-new-champion').count()).resolves.toBe(2);
    await expect(timeline.locator('.mass-rejected').count()).resolves.toBe(2);
    await page.selectOption('select[aria-label="from version"]', '0');
    await page.selectOption('select[aria-label="to version"]', '2');
    await page.click('button:has-text("Show diff")');
    const diff = page.locator(tid('mass-diff'));
    await diff.waitFor(WAIT);
    await expect(diff.textContent()).resolves.toContain('picker role: “Picker P2” → “Picker P5”');
    await screenshot(page, 'mass-diff');
  });

  it('raised no uncaught error in the page', () => {
    expect(pageErrors).toEqual([]);
  });
});
