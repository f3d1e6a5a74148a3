/**
 * A new user's path (issue 29), walked in Debian Chromium on a fresh database: the README's
 * `flowlab serve` command, the page it prints, an example opened in the Editor, run from the Run
 * view on the tiny shared model (stories260K, a real model: its answers are its own), its failed
 * runs found in the Runs view (the same ones `flowlab ls <experiment> --status failed` lists), one
 * opened in Trace with its root failure and blamed role, and the Ladder. One screenshot per step:
 * docs/screenshots/new-user-<n>-<step>.png with FLOWLAB_SCREENSHOTS=1, else artifacts/screenshots/.
 * Skips, saying why, without Chromium or the shared model and data.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSearchResult } from '../core/api/client.ts';
import { browserMissing, openLab, REQUIRED, ROOT, screenshot, SHARED, sharedMissing, type OpenLab } from './harness.ts';

const noBrowser = browserMissing();
const noShared = sharedMissing();
if (noBrowser && REQUIRED) throw new Error(`e2e: ${noBrowser} (FLOWLAB_E2E_REQUIRED=1: the browser tests must run here)`);
const skip = noBrowser ?? noShared;
if (skip) process.stdout.write(`[e2e new user] SKIPPED: ${skip}\n`);

const WAIT = { timeout: 30_000 } as const;
const tid = (id: string) => `[data-testid="${id}"]`;
/** Tasks run: few, so the path stays a few seconds on the tiny model. */
const TASKS = 4;
/** docs/screenshots/ only when asked (FLOWLAB_SCREENSHOTS=1), as e2e/defects.test.ts does. */
const WRITE_DOCS = process.env.FLOWLAB_SCREENSHOTS === '1';

let lab: OpenLab<null>;
let page: Page;
let step = 0;

/** The step's screenshot (artifacts/, and docs/screenshots/ when asked). */
async function shot(name: string): Promise<void> {
  const file = await screenshot(page, `new-user-${++step}-${name}`);
  if (WRITE_DOCS) {
    mkdirSync(path.join(ROOT, 'docs/screenshots'), { recursive: true });
    copyFileSync(file, path.join(ROOT, 'docs/screenshots', path.basename(file)));
  }
}

/** Selects the option of a <select> whose visible text starts with `prefix`. */
async function selectByText(selector: string, prefix: string): Promise<void> {
  const value = await page.locator(selector).evaluate((el, p) => [...(el as HTMLSelectElement).options].find((o) => o.text.trim().startsWith(p) && !o.disabled)?.value ?? null, prefix);
  if (value === null) throw new Error(`${selector} has no option starting with "${prefix}"`);
  await page.selectOption(selector, value);
}

describe.skipIf(!!skip)("a new user's path: README, serve, an example, run it, its failed runs, one run's blame and ladder", () => {
  beforeAll(async () => {
    lab = await openLab(() => null);
    page = lab.page;
  }, 120_000);

  afterAll(async () => {
    await lab?.close();
  }, 60_000);

  it('walks from the README to the blame and the ladder of a failed run', async () => {
    // 1. The README says how to open the lab in a browser, and what the first line will be.
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('npm run flowlab -- serve [--port 5177]');
    expect(readme).toMatch(/# prints: http:\/\/127\.0\.0\.1:5177\/\?token=/);
    // The harness started that command (`flowlab serve --port 0 --db --models`) and read that line.
    expect(lab.serve.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]+$/);
    await page.goto(lab.serve.url);
    await page.locator(tid('nav-editor')).waitFor(WAIT);
    await shot('opened');

    // 2. Open an example in the Editor.
    await page.click(tid('nav-editor'));
    await page.locator(`${tid('example-select')} option[value="examples/gsm8k-team.yaml"]`).waitFor({ state: 'attached', ...WAIT });
    await page.selectOption(tid('example-select'), 'examples/gsm8k-team.yaml');
    await page.click(tid('example-open'));
    await page.locator(`${tid('validation')}[data-valid="true"]`).waitFor(WAIT);
    await page.locator(`${tid('graph')}[data-ready="true"]`).waitFor(WAIT);
    await shot('example');

    // 3. Run it: the model, a few tasks, Start; wait for the end.
    await page.click(tid('nav-run'));
    // The model and dataset lists arrive after the view: wait for the options before choosing.
    await page.waitForFunction((sel) => [...(document.querySelector(sel) as HTMLSelectElement | null)?.options ?? []].some((o) => o.text.trim().startsWith('stories260K.gguf')), tid('default-model'), WAIT);
    await selectByText(tid('default-model'), 'stories260K.gguf');
    await page.locator(`${tid('run-dataset')} option[value="gsm8k"]`).waitFor({ state: 'attached', ...WAIT });
    // The dataset the example names in its "Run it:" line, not the first in the list (as `flowlab run --dataset gsm8k`).
    expect(readFileSync(path.join(ROOT, 'examples/gsm8k-team.yaml'), 'utf8')).toMatch(/^# Run it: .*--dataset gsm8k /m);
    const firstAvailable = await page.locator(`${tid('run-dataset')} option`).first().getAttribute('value');
    process.stdout.write(`[e2e new user] the Run form's dataset: ${await page.inputValue(tid('run-dataset'))} (first listed: ${firstAvailable})\n`);
    expect(await page.inputValue(tid('run-dataset'))).toBe('gsm8k');
    await page.fill(tid('run-limit'), String(TASKS));
    await expect.poll(() => page.locator(tid('run-start')).isEnabled(), WAIT).toBe(true);
    // The CLI's defaults and words: seed 0 (the form said 1), and the kind it starts (a run with a SIMULATED fault is a blame-eval).
    expect(await page.inputValue(tid('run-seed'))).toBe('0');
    expect(await page.locator(tid('run-starts-kind')).getAttribute('data-kind')).toBe('run');
    await page.click(tid('fault-add'));
    await page.locator(`${tid('run-starts-kind')}[data-kind="blame-eval"]`).waitFor(WAIT);
    await expect(page.locator(tid('run-starts-kind')).textContent()).resolves.toContain('flowlab blame-eval');
    await page.click('[aria-label="Remove fault 1"]');
    await page.locator(`${tid('run-starts-kind')}[data-kind="run"]`).waitFor(WAIT);
    await page.click(tid('run-start'));
    const status = page.locator(tid('run-status'));
    await expect.poll(async () => (await status.locator('code').first().textContent()) ?? '', WAIT).toMatch(/^exp-/);
    const experiment = (await status.locator('code').first().textContent())!;
    await page.locator(`${tid('run-status')}[data-status="completed"]`).waitFor({ timeout: 120_000 });
    expect(await page.locator(tid('run-progress')).getAttribute('value')).toBe(String(TASKS));
    await shot('ran');

    // 4. Find its failed runs: the Runs view filtered as `flowlab ls <experiment> --status failed`.
    const ls = spawnSync(process.execPath, ['bin/flowlab.js', 'ls', experiment, '--status', 'failed', '--sort', 'task', '--json', '--db', lab.ws.db], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, FLOWLAB_SHARED: SHARED } });
    expect(ls.status).toBe(0);
    const failed = JSON.parse(ls.stdout) as RunSearchResult;
    // The tiny model fails the team's contracts (its text is no JSON): at least one failed run to open.
    expect(failed.total).toBeGreaterThan(0);
    await page.click(tid('nav-runs'));
    await page.selectOption(tid('runs-experiment'), experiment, WAIT);
    await page.selectOption(tid('runs-status'), 'failed');
    const totalText = `${failed.total.toLocaleString('en')} run${failed.total === 1 ? '' : 's'}`;
    await page.waitForFunction(([sel, want]) => document.querySelector(sel)?.textContent?.trim() === want, [tid('runs-total'), totalText] as const, WAIT);
    await page.click(tid('runs-sort-task'));
    const first = failed.rows[0]!;
    await page.locator(`${tid('runs-row-0')}[data-run="${first.runId}"]`).waitFor(WAIT);
    await shot('failed-runs');

    // 5. Open one: its trace, with the root failure, its error and the blamed role.
    const root = first.credit!.roots[0]!;
    await page.click(tid('runs-row-0'));
    await page.locator(`${tid(`pick-run-${first.taskIndex}`)}[aria-pressed="true"]`).waitFor(WAIT);
    await page.locator(`${tid('graph')}[data-ready="true"]`).waitFor(WAIT);
    await page.click(tid(`trace-row-${root.nodeId}`), WAIT);
    const detail = page.locator(tid('node-detail'));
    await detail.waitFor(WAIT);
    await expect(detail.locator(tid('blame-badge')).textContent()).resolves.toContain(`blamed: ${root.blamed}`);
    await expect(page.locator(tid('blame-summary')).locator(tid(`blame-role-${root.blamed}`)).textContent()).resolves.toContain(root.nodeId);
    await shot('blame');

    // 6. The ladder of that run and the experiment's mean per role.
    await page.click(tid('nav-ladder'));
    await page.locator(tid('ladder')).locator(tid('ladder-chart')).waitFor(WAIT);
    await expect(page.locator(tid('ladder')).locator(tid(`ladder-role-${root.blamed}`)).count()).resolves.toBe(1);
    await page.locator(tid('ladder-mean')).locator(tid('ladder-mean-chart')).waitFor(WAIT);
    await shot('ladder');
    expect(lab.pageErrors).toEqual([]);
  }, 240_000);
});
