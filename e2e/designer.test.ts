/**
 * The views of a designed workflow end to end: `flowlab serve` over a fresh database holding a
 * designed experiment, driven from Debian Chromium through playwright-core.
 *
 * The experiment is run before the server starts, through the real engine and design stage, with
 * the scripted model — a SIMULATED designer and executor, named so in the stored calls
 * (core/api/designedRun.fixture.ts): task 0's design wires a dangling input, task 2's uses one id
 * twice, task 3's is cut off mid-way. The Learning view's curves are hand-written weight-version rows of one train loop (two
 * roles, no training: SIMULATED numbers), enough to draw the co-evolution chart.
 * In the browser: open the designed run, see each node's author marks, the design text and its
 * validation message; click the message and see its node selected in the graph, its root failure
 * blamed on the designer and its place in the text marked; the banner of the unusable design; the
 * designer's ladder; both roles' curves. Screenshots go to artifacts/screenshots/ (designer-trace.png
 * is the one copied to docs/screenshots/). Skips, saying why, without Chromium (unless
 * FLOWLAB_E2E_REQUIRED=1). Needs no model.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDesignedExperiment } from '../core/api/designedRun.fixture.ts';
import type { Store } from '../core/store/index.ts';
import { browserMissing, openLab, REQUIRED, screenshot, type OpenLab, type ServeProcess } from './harness.ts';

const noBrowser = browserMissing();
if (noBrowser && REQUIRED) throw new Error(`e2e: ${noBrowser} (FLOWLAB_E2E_REQUIRED=1: the browser tests must run here)`);
if (noBrowser) process.stdout.write(`[e2e designer] SKIPPED: ${noBrowser}\n`);

const WAIT = { timeout: 30_000 } as const;
const tid = (id: string) => `[data-testid="${id}"]`;

let lab: OpenLab<string>;
let serve: ServeProcess;
let page: Page;
let experiment = '';
let pageErrors: string[] = [];

/** Writes the designed experiment and a two-role train loop's versions (SIMULATED metrics) into the database. */
async function seed(store: Store): Promise<string> {
  const id = await seedDesignedExperiment(store);
  const curves = { designer: [0.12, 0.3, 0.45, 0.62], executor: [0.2, 0.28, 0.5, 0.71] };
  let t = 1;
  for (const [role, rewards] of Object.entries(curves)) {
    rewards.forEach((reward, i) =>
      store.weights.save({
        id: `wv-${role}-${i + 1}`,
        role,
        basePath: '/simulated/base.gguf',
        path: `/simulated/${role}-iter-${i + 1}.gguf`,
        ...(i ? { parentId: `wv-${role}-${i}` } : {}),
        iteration: i + 1,
        hyper: { loopId: 'tl-simulated', simulated: true },
        metrics: { reward, kl: 0.01 * (i + 1) },
        createdAt: t++,
      }),
    );
  }
  return id;
}

describe.skipIf(!!noBrowser)('the views of a designed workflow in Chromium against flowlab serve (SIMULATED scripted designer)', () => {
  beforeAll(async () => {
    lab = await openLab((store) => seed(store));
    ({ serve, page, pageErrors, seeded: experiment } = lab);
  }, 120_000);

  afterAll(() => lab?.close(), 60_000);

  it('opens the designed run: the graph it ran, each node with its authors, the design text', async () => {
    await page.goto(serve.url);
    await page.click(tid('nav-trace'));
    await page.selectOption(tid('pick-experiment'), experiment, WAIT);
    await page.click(tid('pick-run-0'), WAIT);
    // The design node and the two nodes the designer drew.
    await page.locator(`${tid('graph')}[data-nodes="3"][data-ready="true"]`).waitFor(WAIT);
    await page.locator(tid('author-design-design')).waitFor(WAIT);
    await expect(page.locator(tid('author-design-design')).textContent()).resolves.toBe('✎ design node, run by designer');
    await expect(page.locator(tid('author-wired-a')).textContent()).resolves.toBe('✎ wired by designer');
    await expect(page.locator(tid('author-run-a')).textContent()).resolves.toBe('▶ run by executor');
    await expect(page.locator(tid('author-wired-b')).textContent()).resolves.toBe('✎ wired by designer');
    await expect(page.locator(tid('author-legend')).textContent()).resolves.toContain('dashed outer ring');
    // The pre-failed wiring node is the run's one root failure, blamed on the designer.
    await expect(page.locator('tr.row-st-root').count()).resolves.toBe(1);
    await expect(page.locator('tr.row-st-root').textContent()).resolves.toMatch(/DANGLING_EDGE.*blamed: designer/);
    const text = page.locator(tid('design-text'));
    await expect(text.textContent()).resolves.toContain('"expression": "c"');
    await expect(page.locator(tid('design-issue-0')).textContent()).resolves.toMatch(/DANGLING_EDGE at steps\[1\]\.inputs\.expression · node b/);
    await expect(page.locator(tid('design-mark')).count()).resolves.toBe(0);
  });

  it('clicks the validation message: its node is selected in the graph and its place in the text marked', async () => {
    await page.click(tid('design-issue-0'));
    await expect(page.locator(tid('design-mark')).textContent()).resolves.toBe('"expression": "c"');
    await page.locator(`${tid('graph')}[data-selected="b"]`).waitFor(WAIT);
    await expect(page.locator(tid('trace-row-b')).getAttribute('aria-pressed')).resolves.toBe('true');
    const detail = page.locator(tid('node-detail'));
    await detail.waitFor(WAIT);
    await expect(detail.locator(tid('node-error')).textContent()).resolves.toMatch(/DANGLING_EDGE.*at steps\[1\]\.inputs\.expression/);
    await expect(detail.locator(tid('blame-badge')).textContent()).resolves.toBe('⚑ blamed: designer');
    await expect(page.locator(tid('design-issue-0')).getAttribute('aria-pressed')).resolves.toBe('true');
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshot(page, 'designer-trace');
    // Clicking it again clears the mark and the selection.
    await page.click(tid('design-issue-0'));
    await expect(page.locator(tid('design-mark')).count()).resolves.toBe(0);
    await page.locator(`${tid('graph')}[data-selected=""]`).waitFor(WAIT);
  });

  it('a design that cannot run: a banner with the reason, the design node the only root', async () => {
    await page.click(tid('pick-run-2'), WAIT);
    const banner = page.locator(tid('design-banner'));
    await banner.waitFor(WAIT);
    await expect(banner.textContent()).resolves.toMatch(/The design cannot run: at steps\[1\]\.id: duplicate node id "a" \(first defined at steps\[0\]\)/);
    await page.locator(`${tid('graph')}[data-nodes="1"][data-ready="true"]`).waitFor(WAIT);
    await page.click(tid('design-issue-0'));
    // A design-level message belongs to the design node.
    await page.locator(`${tid('graph')}[data-selected="design"]`).waitFor(WAIT);
    await expect(page.locator(tid('design-mark')).textContent()).resolves.toBe('"id": "a"');
    await screenshot(page, 'designer-trace-unusable');
  });

  it('a design cut off mid-way (as a tiny model writes them): the banner, the completion shown as written', async () => {
    await page.click(tid('pick-run-3'), WAIT);
    await page.locator(tid('design-banner')).waitFor(WAIT);
    await expect(page.locator(tid('design-panel')).textContent()).resolves.toContain('The completion did not parse as a design; it is shown as written.');
    await expect(page.locator(tid('design-text')).textContent()).resolves.toBe('{"steps": [{"id": "a", "skill": "expr');
    await expect(page.locator(tid('design-no-issues')).textContent()).resolves.toBe('None: the design did not get as far as validation (the banner above says why).');
    await expect(page.locator(tid('design-banner')).textContent()).resolves.toMatch(/The design cannot run: .+\. The design node design failed/);
  });

  it("shows the designer's ladder beside the executor's, with what validity means for it", async () => {
    await page.click(tid('pick-run-0'), WAIT);
    await page.click(tid('nav-ladder'));
    await page.locator(tid('ladder-chart')).waitFor(WAIT);
    for (const r of ['designer', 'executor']) await page.locator(tid('ladder-chart')).locator(tid(`ladder-role-${r}`)).waitFor(WAIT);
    await expect(page.locator(tid('ladder-chart')).locator(tid('ladder-role-designer')).textContent()).resolves.toMatch(/^✎ designer/);
    await expect(page.locator(tid('ladder')).locator(tid('ladder-row-designer')).textContent()).resolves.toMatch(/designer✎ wired the graph1 · 2/);
    await expect(page.locator(tid('ladder')).locator(tid('ladder-validity-designer')).textContent()).resolves.toBe('v for designer (wired 2 nodes): its graph well-formed: every node it wired passed validation.');
    await screenshot(page, 'designer-ladder');
  });

  it('shows both roles\' curves of the train loop on one chart with a legend', async () => {
    await page.click(tid('nav-learning'));
    const chart = page.locator(`${tid('coevolution-chart')}[data-roles="designer,executor"][data-points="4"]`);
    await chart.waitFor(WAIT);
    await expect(chart.locator('canvas').count()).resolves.toBe(1);
    await expect(chart.locator(tid('coevolution-role-designer')).textContent()).resolves.toBe('designer (solid line, circles) · last 0.62');
    await expect(chart.locator(tid('coevolution-role-executor')).textContent()).resolves.toBe('executor (dashed line, diamonds) · last 0.71');
    await screenshot(page, 'designer-learning');
  });

  it('raised no uncaught error in the page', () => {
    expect(pageErrors).toEqual([]);
  });
});
