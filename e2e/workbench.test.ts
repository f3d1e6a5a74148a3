/**
 * The lab as a workbench, end to end in Debian Chromium against a real `flowlab serve` (no mocks):
 * - a workflow saved in the workflows folder comes back the same after a reload;
 * - unsaved changes survive a reload (the draft) and are not replaced by "Open example" without asking;
 * - a CLI run on the served database (`FLOWLAB_DEV=1 node bin/flowlab.js rollouts ... --db <it>`,
 *   the tiny real model, one thread) appears in the open lab's Rollouts and Experiments views
 *   without Refresh (the host's `stored` event, host/storeWatch.ts);
 * - the server stopped mid-run: the lost-connection banner, Start disabled, retries with backoff
 *   (not a console error every second); the server started again on its port and token: the
 *   banner goes, the run shows how it ended, Start is back.
 * Skips, saying why, without Chromium (unless FLOWLAB_E2E_REQUIRED=1) or the shared model and data.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserMissing, openLab, REQUIRED, ROOT, screenshot, SHARED, sharedMissing, startServe, TINY_MODEL, type OpenLab, type ServeProcess } from './harness.ts';

const noBrowser = browserMissing();
if (noBrowser && REQUIRED) throw new Error(`e2e: ${noBrowser} (FLOWLAB_E2E_REQUIRED=1: the browser tests must run here)`);
const missing = noBrowser ?? sharedMissing();
if (missing) process.stdout.write(`[e2e workbench] SKIPPED: ${missing}\n`);

const WAIT = { timeout: 30_000 } as const;
const tid = (id: string) => `[data-testid="${id}"]`;

let lab: OpenLab<null>;
let page: Page;
/** The server serving the page now (a new process after the restart). */
let serve: ServeProcess;
const consoleErrors: Array<{ at: number; text: string }> = [];

async function selectByText(selector: string, prefix: string): Promise<string> {
  const value = await page.locator(selector).evaluate((el, p) => [...(el as HTMLSelectElement).options].find((o) => o.text.trim().startsWith(p) && !o.disabled)?.value ?? null, prefix);
  if (value === null) throw new Error(`${selector} has no option starting with "${prefix}"`);
  await page.selectOption(selector, value);
  return value;
}

/** Runs the CLI from sources on the served database; resolves with its exit code and output. */
function cli(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/flowlab.js', ...args], { cwd: ROOT, env: { ...process.env, FLOWLAB_DEV: '1', FLOWLAB_SHARED: SHARED }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

describe.skipIf(!!missing)('the lab as a workbench in Chromium against flowlab serve', () => {
  beforeAll(async () => {
    lab = await openLab(() => null);
    ({ page, serve } = lab);
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push({ at: Date.now(), text: m.text() });
    });
    await page.goto(serve.url);
  }, 120_000);

  afterAll(async () => {
    await serve?.stop();
    await lab?.close();
  }, 60_000);

  it('save -> reload -> the same document', async () => {
    await page.click(tid('nav-editor'));
    await page.locator(`${tid('example-select')} option[value="examples/gsm8k-team.yaml"]`).waitFor({ state: 'attached', ...WAIT });
    await page.selectOption(tid('example-select'), 'examples/gsm8k-team.yaml');
    await page.click(tid('example-open'));
    await page.locator(`${tid('validation')}[data-valid="true"]`).waitFor(WAIT);
    // Edit: a role changed in the graph, then the workflow's name typed in the text.
    await page.click(tid('editor-node-answer'));
    await page.selectOption(tid('node-role-select'), 'verifier');
    await expect.poll(() => page.inputValue(tid('yaml-text')), WAIT).toMatch(/- id: answer\n\s+role: verifier\n/);
    await page.fill(tid('yaml-text'), (await page.inputValue(tid('yaml-text'))).replace('name: gsm8k-team', 'name: my-team'));
    await page.locator(`${tid('doc-state')}[data-dirty="true"]`).waitFor(WAIT);
    const edited = await page.inputValue(tid('yaml-text'));

    await page.click(tid('doc-save'));
    await expect.poll(() => page.inputValue(tid('doc-save-name')), WAIT).toBe('gsm8k-team.yaml');
    await page.fill(tid('doc-save-name'), 'my-team.yaml');
    await screenshot(page, 'editor-save-as');
    // The document bar and its Save as form fit the 1280 px window (no sideways scrolling).
    await expect(page.evaluate(() => document.documentElement.scrollWidth)).resolves.toBeLessThanOrEqual(1280);
    await page.click(tid('doc-save-confirm'));
    await expect.poll(() => page.locator(tid('doc-state')).textContent(), WAIT).toBe('saved: my-team.yaml');
    const onDisk = path.join(lab.ws.dir, 'flowlab-workflows', 'my-team.yaml');
    expect(existsSync(onDisk)).toBe(true);
    expect(readFileSync(onDisk, 'utf8')).toBe(edited);
    // The typing burst joins the undo history when the text goes quiet, and the draft is written
    // after its own quiet time: reload only once the stored draft holds both edits.
    await expect.poll(() => page.evaluate(() => (JSON.parse(localStorage.getItem('flowlab.editor.draft.v1') ?? '{}') as { undo?: unknown[] }).undo?.length ?? 0), WAIT).toBe(2);

    await page.reload();
    await page.click(tid('nav-editor'));
    await expect.poll(() => page.inputValue(tid('yaml-text')), WAIT).toBe(edited);
    await expect(page.locator(tid('doc-state')).textContent()).resolves.toBe('saved: my-team.yaml');
    await expect(page.locator(tid('doc-state')).getAttribute('data-dirty')).resolves.toBe('false');
    await page.locator(`${tid('doc-open-saved')} option[value="my-team.yaml"]`).waitFor({ state: 'attached', ...WAIT });
    // Undo still works after the reload (the history is kept as diffs in the draft).
    await page.click(tid('undo-edit'));
    await expect.poll(() => page.inputValue(tid('yaml-text')), WAIT).toContain('name: gsm8k-team');
    await page.click(tid('redo-edit'));
    await expect.poll(() => page.inputValue(tid('yaml-text')), WAIT).toBe(edited);
  }, 120_000);

  it('the unsaved-work prompt: a reload keeps the draft, Open example asks before replacing it', async () => {
    const draft = `${await page.inputValue(tid('yaml-text'))}# not saved yet\n`;
    await page.fill(tid('yaml-text'), draft);
    await page.locator(`${tid('doc-state')}[data-dirty="true"]`).waitFor(WAIT);
    await page.reload();
    await page.click(tid('nav-editor'));
    await expect.poll(() => page.inputValue(tid('yaml-text')), WAIT).toBe(draft);
    await expect(page.locator(tid('doc-state')).textContent()).resolves.toBe('● unsaved changes');

    await page.locator(`${tid('example-select')} option[value="examples/gsm8k-team.yaml"]`).waitFor({ state: 'attached', ...WAIT });
    await page.selectOption(tid('example-select'), 'examples/gsm8k-team.yaml');
    await page.click(tid('example-open'));
    const prompt = page.locator(tid('unsaved-prompt'));
    await prompt.waitFor(WAIT);
    await screenshot(page, 'editor-unsaved-prompt');
    await expect(prompt.textContent()).resolves.toMatch(/my-team\.yaml has changes that are not saved\. Opening examples\/gsm8k-team\.yaml replaces them/);
    await page.click(tid('unsaved-keep'));
    await expect(prompt.count()).resolves.toBe(0);
    expect(await page.inputValue(tid('yaml-text'))).toBe(draft);

    await page.click(tid('example-open'));
    await page.click(tid('unsaved-discard'));
    await expect.poll(() => page.inputValue(tid('yaml-text')), WAIT).toContain('name: gsm8k-team');
    await expect(page.locator(tid('doc-state')).textContent()).resolves.toBe('opened: examples/gsm8k-team.yaml');
  }, 120_000);

  it('a CLI run on the served database appears in the open lab without Refresh', async () => {
    await page.click(tid('nav-rollouts'));
    await page.locator(tid('rollouts-empty')).waitFor(WAIT);
    const started = Date.now();
    const run = await cli(['rollouts', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--split', 'test', '--limit', '1', '--group', '2', '--model', TINY_MODEL, '--threads', '1', '--db', lab.ws.db, '--json']);
    expect(run.code, run.out).toBe(0);
    const ended = Date.now();
    const id = /"experimentId":\s*"([^"]+)"/.exec(run.out)?.[1] ?? /(exp-[\w-]+)/.exec(run.out)?.[1];
    expect(id, run.out).toBeTruthy();
    // No click on Refresh: the host saw the database change and pushed a `stored` event (the page
    // then reloads the list; on a loaded 2-core machine that takes seconds, so wait as long as elsewhere).
    await page.locator(`${tid('rollouts-experiment')} option[value="${id}"]`).waitFor({ state: 'attached', ...WAIT });
    // And its finished rollouts too (the runs were stored after the experiment row appeared).
    await expect.poll(() => page.locator(`${tid('rollouts-experiment')} option[value="${id}"]`).textContent(), WAIT).toMatch(/ 2\/2 rollouts$/);
    const seen = Date.now();
    process.stdout.write(`[e2e workbench] CLI rollouts ${id}: ran ${((ended - started) / 1000).toFixed(1)} s, in the open Rollouts view ${((seen - ended) / 1000).toFixed(1)} s after it exited\n`);
    await page.click(tid('nav-experiments'));
    await page.locator(tid(`experiment-row-${id}`)).waitFor(WAIT);
  }, 240_000);

  it('the server stopped mid-run: a banner, Start disabled, backoff; recovery when it returns', async () => {
    await page.click(tid('nav-editor'));
    await page.locator(`${tid('validation')}[data-valid="true"]`).waitFor(WAIT);
    await selectByText(tid('default-model'), 'stories260K.gguf');
    await page.click(tid('nav-run'));
    await page.selectOption(tid('run-dataset'), 'gsm8k');
    await page.selectOption(tid('run-split'), 'test');
    await page.fill(tid('run-limit'), '40');
    await expect.poll(() => page.locator(tid('run-start')).isEnabled(), WAIT).toBe(true);
    await page.click(tid('run-start'));
    await expect.poll(async () => Number(await page.locator(tid('run-progress')).getAttribute('value')), { timeout: 90_000 }).toBeGreaterThanOrEqual(1);
    const experiment = (await page.locator(tid('run-status')).locator('code').first().textContent()) ?? '';
    expect(experiment).toMatch(/^exp-/);

    const { port, token } = serve;
    await serve.stop();
    const stoppedAt = Date.now();
    const banner = page.locator(tid('connection-banner'));
    await banner.waitFor(WAIT);
    await screenshot(page, 'run-connection-lost');
    await expect(banner.textContent()).resolves.toMatch(/Lost the connection to the Flowlab server/);
    await expect(page.locator(tid('run-start')).isDisabled()).resolves.toBe(true);
    // Eight seconds without a server: retries at 1, 2, 4 s waits, not one a second.
    const before = consoleErrors.length;
    await page.waitForTimeout(8000);
    const during = consoleErrors.slice(before).length;
    expect(during).toBeLessThanOrEqual(4);

    serve = await startServe(lab.ws, 30_000, { port, token });
    await banner.waitFor({ state: 'detached', timeout: 45_000 });
    const back = Date.now();
    process.stdout.write(`[e2e workbench] server down ${((back - stoppedAt) / 1000).toFixed(1)} s; ${during} console errors in the 8 s outage window\n`);
    // The run was cancelled by the stop (resumable); the page says so without a reload.
    await expect.poll(() => page.locator(tid('run-status')).getAttribute('data-status'), WAIT).toMatch(/cancelled|completed|failed/);
    await expect.poll(() => page.locator(tid('run-start')).isEnabled(), WAIT).toBe(true);
    await page.click(tid('nav-experiments'));
    await page.locator(tid(`experiment-row-${experiment}`)).waitFor(WAIT);
    expect(lab.pageErrors).toEqual([]);
  }, 240_000);
});
