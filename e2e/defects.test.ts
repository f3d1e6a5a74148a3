/**
 * The layout defects seen in the lab, and every view at 1280x800 in the light and the dark
 * theme, in Debian Chromium against `flowlab serve` over a database that fills every view
 * (e2e/labSeed.ts; SIMULATED numbers, no model needed except for the last test).
 *
 * Every view, both themes: the page is never wider than the window (document.documentElement
 * .scrollWidth <= 1280) and the console shows no error other than those a test provokes (the
 * server stopped on purpose, at the end). With FLOWLAB_SCREENSHOTS=1 each view is written to
 * docs/screenshots/<view>-light.png and <view>-dark.png (so CI never rewrites them); otherwise to
 * artifacts/screenshots/ (git-ignored). Skips, saying why, without Chromium (unless
 * FLOWLAB_E2E_REQUIRED=1); the server-stop test also needs the shared tiny model.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { ConsoleMessage, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { traceStateColor } from '../renderer/lib/graphStyle.ts';
import { ALL_VIEWS, type View } from '../renderer/lib/shortcuts.ts';
import { browserMissing, openLab, REQUIRED, ROOT, screenshot, sharedMissing, VIEWPORT, type OpenLab } from './harness.ts';
import { seedLab, type LabSeed } from './labSeed.ts';

const noBrowser = browserMissing();
const noShared = sharedMissing();
if (noBrowser && REQUIRED) throw new Error(`e2e: ${noBrowser} (FLOWLAB_E2E_REQUIRED=1: the browser tests must run here)`);
if (noBrowser) process.stdout.write(`[e2e defects] SKIPPED: ${noBrowser}\n`);

const WAIT = { timeout: 30_000 } as const;
const tid = (id: string) => `[data-testid="${id}"]`;
/** docs/screenshots/ only when asked (FLOWLAB_SCREENSHOTS=1). */
const WRITE_DOCS = process.env.FLOWLAB_SCREENSHOTS === '1';
const DOCS_SCREENSHOTS = path.join(ROOT, 'docs/screenshots');

let lab: OpenLab<LabSeed>;
let page: Page;
const consoleErrors: string[] = [];
/** Console errors from here on are provoked by the test (the server stopped on purpose). */
let provoking = false;

/** #rrggbb -> `rgb(r, g, b)` as getComputedStyle writes it. */
function rgb(hex: string): string {
  const n = Number.parseInt(hex.slice(1), 16);
  return `rgb(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255})`;
}

/** How much wider than the window the page is (0 when it fits). */
const overflow = (p: Page) => p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

/** Opens the trace of `experiment`'s run of task 0 and waits for its graph. */
async function openTrace(experiment: string): Promise<void> {
  await page.click(tid('nav-trace'));
  await page.selectOption(tid('pick-experiment'), experiment, WAIT);
  await page.click(tid('pick-run-0'), WAIT);
  await page.locator(`${tid('graph')}[data-ready="true"]`).waitFor(WAIT);
}

/** The element that shows a view has its data (views not listed need no wait, or are prepared below). */
const SHOWN_BY: Partial<Record<View, string>> = {
  ladder: 'ladder-chart',
  experiments: 'experiments-table',
  rollouts: 'rollouts-group-panel',
  cards: 'card-card-solver',
  learning: 'learning-versions',
  studies: 'study-table',
  mass: 'mass-timeline-0',
};

/** What each view needs before its screenshot shows it in use. */
async function prepare(view: View): Promise<void> {
  if (view === 'editor') {
    await page.locator(`${tid('example-select')} option[value="examples/gsm8k-team.yaml"]`).waitFor({ state: 'attached', ...WAIT });
    if (!(await page.inputValue(tid('yaml-text'))).includes('name: gsm8k-team')) {
      await page.selectOption(tid('example-select'), 'examples/gsm8k-team.yaml');
      await page.click(tid('example-open'));
    }
    await page.locator(`${tid('validation')}[data-valid="true"]`).waitFor(WAIT);
  } else if (view === 'trace') {
    await openTrace(lab.seeded.designed);
    await page.click(tid('trace-row-a'));
    await page.locator(tid('node-detail')).waitFor(WAIT);
  } else if (SHOWN_BY[view]) {
    await page.locator(tid(SHOWN_BY[view])).waitFor(WAIT);
  }
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.waitForTimeout(350); // graph centring animations (250 ms)
}

async function shoot(name: string): Promise<void> {
  if (!WRITE_DOCS) {
    await screenshot(page, name);
    return;
  }
  mkdirSync(DOCS_SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(DOCS_SCREENSHOTS, `${name}.png`), animations: 'disabled', caret: 'hide' });
}

describe.skipIf(!!noBrowser)('the defects seen, and every view at 1280x800 in both themes, in Chromium against flowlab serve', () => {
  beforeAll(async () => {
    lab = await openLab((store) => seedLab(store));
    page = lab.page;
    page.on('console', (msg: ConsoleMessage) => {
      if (msg.type() === 'error' && !provoking) consoleErrors.push(msg.text());
    });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(lab.serve.url);
  }, 180_000);

  afterAll(() => lab?.close(), 60_000);

  it('shows every view at 1280x800, light then dark, never wider than the window', async () => {
    expect(VIEWPORT).toEqual({ width: 1280, height: 800 });
    const widths: Record<string, number> = {};
    for (const theme of ['light', 'dark'] as const) {
      if ((await page.getAttribute('html', 'data-theme')) !== theme) await page.click(tid('theme-toggle'));
      await expect.poll(() => page.getAttribute('html', 'data-theme'), WAIT).toBe(theme);
      for (const view of ALL_VIEWS) {
        await page.click(tid(`nav-${view}`));
        await prepare(view);
        widths[`${view}-${theme}`] = await page.evaluate(() => document.documentElement.scrollWidth);
        await shoot(`${view}-${theme}`);
      }
    }
    const tooWide = Object.entries(widths).filter(([, w]) => w > VIEWPORT.width);
    expect(tooWide).toEqual([]);
    expect(Object.keys(widths)).toHaveLength(ALL_VIEWS.length * 2);
    await page.click(tid('theme-toggle'));
    await expect.poll(() => page.getAttribute('html', 'data-theme'), WAIT).toBe('light');
  }, 240_000);

  it('the "⚑ blamed: …" badge clipped in the nodes table: every badge lies inside the table\'s box', async () => {
    await openTrace(lab.seeded.designed);
    await page.click(tid('trace-row-a'));
    await page.locator(tid('node-detail')).waitFor(WAIT);
    const boxes = await page.locator('.trace-nodes').evaluate((section) => {
      const scroll = section.querySelector('.scroll') as HTMLElement;
      const outer = scroll.getBoundingClientRect();
      return {
        hidden: scroll.scrollWidth - scroll.clientWidth,
        badges: [...section.querySelectorAll('[data-testid="blame-badge"]')].map((b) => ({ text: b.textContent ?? '', right: b.getBoundingClientRect().right, limit: outer.right })),
      };
    });
    expect(boxes.badges.length).toBeGreaterThan(0);
    expect(boxes.badges[0]!.text).toMatch(/⚑ blamed: designer/);
    expect(boxes.hidden).toBeLessThanOrEqual(0);
    for (const b of boxes.badges) expect(b.right).toBeLessThanOrEqual(b.limit);
  });

  it('the experiment dropdown cut off: the chosen experiment is shown in full beside the picker', async () => {
    await openTrace(lab.seeded.designed);
    const picked = page.locator(tid('picked-experiment'));
    await expect(picked.textContent()).resolves.toContain(lab.seeded.designed);
    const fit = await page.evaluate(() => {
      const nav = document.querySelector('.run-picker') as HTMLElement;
      const p = document.querySelector('[data-testid="picked-experiment"]') as HTMLElement;
      const select = document.querySelector('[data-testid="pick-experiment"]') as HTMLSelectElement;
      const box = nav.getBoundingClientRect();
      return { overflow: p.scrollWidth - p.clientWidth, right: p.getBoundingClientRect().right, selectRight: select.getBoundingClientRect().right, limit: box.right, title: select.title };
    });
    expect(fit.overflow).toBeLessThanOrEqual(0);
    expect(fit.right).toBeLessThanOrEqual(fit.limit + 0.5);
    expect(fit.selectRight).toBeLessThanOrEqual(fit.limit + 0.5);
    expect(fit.title).toContain(lab.seeded.designed);
  });

  it('opening node details shrinks the graph until labels are ~7 px, the wheel scrolls the page, no zoom', async () => {
    await openTrace(lab.seeded.revise);
    const graph = page.locator(tid('graph'));
    await page.click(tid('trace-row-verify'));
    await page.locator(tid('node-detail')).waitFor(WAIT);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.waitForTimeout(600);
    const zoom = async () => Number(await graph.getAttribute('data-zoom'));
    // Labels are 12 px at zoom 1: at least 10 px with the panel open.
    expect(12 * (await zoom())).toBeGreaterThanOrEqual(9.99); // data-zoom has 3 decimals
    // The wheel zooms the graph, and the page stays where it is.
    const box = (await graph.boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    const before = { zoom: await zoom(), scrollY: await page.evaluate(() => window.scrollY) };
    await page.mouse.wheel(0, -400);
    await expect.poll(zoom, WAIT).toBeGreaterThan(before.zoom);
    expect(await page.evaluate(() => window.scrollY)).toBe(before.scrollY);
    // A drag on the background pans.
    const pan = await graph.getAttribute('data-pan');
    await page.mouse.move(box.x + 12, box.y + box.height - 12);
    await page.mouse.down();
    await page.mouse.move(box.x + 120, box.y + box.height - 60, { steps: 6 });
    await page.mouse.up();
    await expect.poll(() => graph.getAttribute('data-pan'), WAIT).not.toBe(pan);
  });

  it("the silent node's border purple in the graph but amber in the legend: the key's colour is the graph's, in both themes", async () => {
    await openTrace(lab.seeded.revise);
    for (const theme of ['light', 'dark'] as const) {
      if ((await page.getAttribute('html', 'data-theme')) !== theme) await page.click(tid('theme-toggle'));
      await expect.poll(() => page.getAttribute('html', 'data-theme'), WAIT).toBe(theme);
      const swatch = page.locator(tid('legend-state-silent'));
      await expect(swatch.evaluate((el) => getComputedStyle(el).borderTopColor)).resolves.toBe(rgb(traceStateColor(theme, 'silent')));
    }
    await page.click(tid('theme-toggle'));
  });

  it('rollout seeds wrap mid-number and the page overflows sideways (1456 px in a 1280 window)', async () => {
    await page.click(tid('nav-rollouts'));
    await page.locator(tid('rollouts-group-panel')).waitFor(WAIT);
    const seeds = await page.locator('.rollout-facts').evaluateAll((facts) =>
      facts.map((dl) => {
        const dd = dl.querySelector('dd') as HTMLElement;
        const range = document.createRange();
        range.selectNodeContents(dd);
        return { text: dd.textContent ?? '', lines: new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size };
      }),
    );
    expect(seeds).toHaveLength(8);
    for (const s of seeds) {
      expect(s.text).toMatch(/^\d{10}$/);
      expect(s.lines).toBe(1);
    }
    expect(await overflow(page)).toBeLessThanOrEqual(0);
  });

  it('roles that never ran show rung 0/5 like roles that produced garbage: the ladder says "not reached"', async () => {
    await page.click(tid('nav-experiments'));
    await page.click(tid('nav-trace'));
    await page.selectOption(tid('pick-experiment'), lab.seeded.rollouts, WAIT);
    await page.click(tid('pick-run-0'), WAIT);
    await page.click(tid('nav-ladder'));
    const row = page.locator(tid('ladder-row-verifier')).first();
    await row.waitFor(WAIT);
    await expect(row.locator('td').nth(8).textContent()).resolves.toBe('not reached');
    await expect(page.locator(tid('ladder-row-solver')).first().locator('td').nth(8).textContent()).resolves.toMatch(/^\d\/5$/);
    await expect(page.locator(tid('ladder-chart')).getAttribute('aria-label')).resolves.toContain('verifier: h 0.00, not reached');
  });

  it('raised no uncaught error and no console error', () => {
    expect(lab.pageErrors).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });

  it.skipIf(!!noShared)('when the server stops mid-run only "cancelled" shows and Start stays enabled: the run says the connection was lost, Start is disabled', async () => {
    await page.click(tid('nav-editor'));
    await prepare('editor');
    await page.click(tid('nav-models'));
    await page.locator(tid('model-row-0')).waitFor(WAIT);
    await page.click(tid('nav-run'));
    await page.fill(tid('run-limit'), '40');
    await expect.poll(() => page.locator(tid('run-start')).isEnabled(), WAIT).toBe(true);
    await page.click(tid('run-start'));
    await page.locator(`${tid('run-status')}[data-status="running"]`).waitFor({ timeout: 60_000 });
    provoking = true;
    await lab.serve.stop();
    await page.locator(tid('run-connection-lost')).waitFor(WAIT);
    await expect(page.locator(tid('run-status')).getAttribute('data-connection')).resolves.toBe('lost');
    await expect(page.locator(tid('run-start')).isDisabled()).resolves.toBe(true);
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await shoot('run-connection-lost');
  }, 120_000);
});
