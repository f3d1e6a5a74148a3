/**
 * The improvement loop from the window, end to end: `flowlab serve` over a fresh database with
 * the tiny real model (stories260K.gguf, one thread), driven from Debian Chromium.
 *
 * In order: open examples/gsm8k-single.yaml; start a rollouts experiment from the Run form
 * (2 GSM8K tasks x G = 2) and watch its progress bar and counters move live to the end, then see
 * it opened by default in Rollouts; run the same 2 tasks twice as plain runs (seeds 1 and 2) and
 * compare them from the Experiments view (2 paired tasks; the printed command names the served
 * database); cancel a run and resume it from its Resume button; open examples/learn-word.yaml
 * and start a train loop from the Learning view (2 iterations of 2 tasks x G = 2, 2 held-out
 * tasks x 2 samples), following its iterations live to `completed`; the loop's experiments are
 * one entry of the Experiments list, opened by its toggle, with the model column; a SIMULATED
 * hint card is flagged in the Run form and the Prior library, exported as a download and deleted. Skips, saying
 * why, without Chromium (unless FLOWLAB_E2E_REQUIRED=1) or without the shared model and data.
 */
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserMissing, openLab, REQUIRED, screenshot, sharedMissing, type OpenLab } from './harness.ts';

const noBrowser = browserMissing();
const noShared = sharedMissing();
if (noBrowser && REQUIRED) throw new Error(`e2e: ${noBrowser} (FLOWLAB_E2E_REQUIRED=1: the browser tests must run here)`);
if (noBrowser) process.stdout.write(`[e2e loop] SKIPPED: ${noBrowser}\n`);
else if (noShared) process.stdout.write(`[e2e loop] SKIPPED: ${noShared}\n`);

const WAIT = { timeout: 30_000 } as const;
const LONG = { timeout: 240_000 } as const;
const tid = (id: string) => `[data-testid="${id}"]`;

let lab: OpenLab<void>;
let page: Page;
/** The first plain run (2 GSM8K tasks, seed 1). */
let plainRun = '';

/** Opens an example in the Editor and waits until it validates. */
async function openExample(file: string, name: string): Promise<void> {
  await page.click(tid('nav-editor'));
  await page.locator(`${tid('example-select')} option[value="${file}"]`).waitFor({ state: 'attached', ...WAIT });
  await page.selectOption(tid('example-select'), file);
  await page.click(tid('example-open'));
  // Replacing edited text may ask first (an unsaved-work prompt): accept it.
  await expect.poll(() => page.inputValue(tid('yaml-text')), WAIT).toContain(`name: ${name}`);
  await page.locator(`${tid('validation')}[data-valid="true"]`).waitFor(WAIT);
}

/** Starts the Run form as it stands and returns the experiment id shown. */
async function startFromRunForm(): Promise<string> {
  await expect.poll(() => page.locator(tid('run-start')).isEnabled(), WAIT).toBe(true);
  const code = page.locator(`${tid('run-status')} code`).first();
  const before = (await code.count()) ? await code.textContent() : null;
  await page.click(tid('run-start'));
  // The previous experiment stays shown until the new one's id comes back.
  await expect.poll(async () => ((await code.count()) ? await code.textContent() : '') ?? '', WAIT).toMatch(/^exp-/);
  await expect.poll(async () => await code.textContent(), WAIT).not.toBe(before);
  return (await code.textContent())!;
}

/** Samples `value` of the run's progress bar until the run ends; returns the values seen, in order. */
async function followRun(id: string): Promise<number[]> {
  const seen: number[] = [];
  const status = page.locator(`${tid('run-status')}`);
  for (const t0 = Date.now(); Date.now() - t0 < LONG.timeout; ) {
    expect(await status.locator('code').first().textContent()).toBe(id);
    const value = Number(await page.locator(tid('run-progress')).getAttribute('value'));
    if (seen.at(-1) !== value) seen.push(value);
    const s = await status.getAttribute('data-status');
    if (s && s !== 'running') return seen;
    await page.waitForTimeout(100);
  }
  throw new Error(`run ${id} did not end within ${LONG.timeout} ms`);
}

describe.skipIf(!!noBrowser || !!noShared)('the improvement loop from the window (stories260K, --threads 1)', () => {
  beforeAll(async () => {
    // Two cards for gsm8k-single's solver: one SIMULATED, one plain (no source runs stored).
    lab = await openLab((store) => {
      const card = { role: 'solver', appliesWhen: 'a word problem', advice: 'Add the numbers.', sourceRuns: [], teacher: 'stories260K.gguf', shots: 2, onlySuccesses: false, createdAt: 1 };
      store.improve.saveCard({ ...card, id: 'card-sim', title: 'Simulated advice', simulated: true });
      store.improve.saveCard({ ...card, id: 'card-plain', title: 'Plain advice', simulated: false });
    });
    page = lab.page;
    page.on('dialog', (d) => void d.accept());
    await page.goto(lab.serve.url);
  }, 120_000);

  afterAll(() => lab?.close(), 60_000);

  it('starts rollouts from the Run form and sees them progress live, then opened in Rollouts', async () => {
    await openExample('examples/gsm8k-single.yaml', 'gsm8k-single');
    await page.click(tid('nav-run'));
    await page.locator(`${tid('default-model')} option`).filter({ hasText: 'stories260K.gguf' }).waitFor({ state: 'attached', ...WAIT });
    const model = await page.locator(`${tid('default-model')} option`).filter({ hasText: 'stories260K.gguf' }).getAttribute('value');
    await page.selectOption(tid('default-model'), model!);
    await page.selectOption(tid('run-dataset'), 'gsm8k');
    await page.selectOption(tid('run-split'), 'test');
    await page.fill(tid('run-limit'), '2');
    await page.fill(tid('run-seed'), '1');
    await page.selectOption(tid('run-kind-select'), 'rollouts');
    await page.fill(tid('run-group'), '2');
    await screenshot(page, 'run-rollouts-form');
    const id = await startFromRunForm();
    const seen = await followRun(id);
    await expect(page.locator(tid('run-status')).getAttribute('data-status')).resolves.toBe('completed');
    // 2 tasks x G = 2 rollouts, counted as they were stored (the count reaches 4 once the last
    // run's event is folded; under load it can trail the end by a frame).
    await expect.poll(async () => Number(await page.locator(tid('run-progress')).getAttribute('value')), WAIT).toBe(4);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    await expect(page.locator(`${tid('run-status')} p.small`).textContent()).resolves.toMatch(/^4 \/ 4 runs/);
    await page.click(tid('nav-rollouts'));
    await expect.poll(() => page.inputValue(tid('rollouts-experiment')), WAIT).toBe(id);
    await page.locator(tid('rollouts-group-panel')).waitFor(WAIT);
    // The view may first show rollouts loaded before the last group was stored; a later reload brings it.
    await page.locator(tid('rollouts-meta')).filter({ hasText: /2 \/ 2 groups complete/ }).waitFor(WAIT);
    expect(lab.pageErrors).toEqual([]);
  }, 300_000);

  it('runs the same 2 tasks twice and compares them from the Experiments view', async () => {
    await page.click(tid('nav-run'));
    await page.selectOption(tid('run-kind-select'), 'run');
    const a = await startFromRunForm();
    plainRun = a;
    await followRun(a);
    await page.fill(tid('run-seed'), '2');
    const b = await startFromRunForm();
    await followRun(b);
    await page.click(tid('nav-experiments'));
    await page.locator(tid(`experiment-row-${b}`)).waitFor(WAIT);
    await expect(page.locator(tid(`experiment-model-${a}`)).textContent()).resolves.toBe('stories260K.gguf');
    await page.locator(`${tid('compare-panel')} > summary`).click();
    await page.selectOption(tid('compare-a'), a);
    await page.selectOption(tid('compare-b'), b);
    await expect(page.locator(tid('compare-command')).textContent()).resolves.toBe(`npm run flowlab -- compare ${a} ${b} --db ${lab.ws.db}`);
    await page.click(tid('compare-run'));
    const result = page.locator(tid('compare-result'));
    await result.waitFor(WAIT);
    await expect(result.textContent()).resolves.toMatch(/2 paired tasks/);
    await page.locator(tid('compare-row-score (accuracy)')).waitFor(WAIT);
    await screenshot(page, 'experiments-compare');
    expect(lab.pageErrors).toEqual([]);
  }, 300_000);

  it('distils a card from the Prior library; distilled from failed runs, it is flagged', async () => {
    await page.click(tid('nav-cards'));
    await page.locator(`${tid('distill-form')} > summary`).click();
    await page.selectOption(tid('distill-experiment'), plainRun);
    await expect.poll(() => page.inputValue(tid('distill-role')), WAIT).toBe('solver');
    await page.fill(`${tid('distill-form')} input[type="number"]`, '2');
    await expect(page.locator(tid('distill-command')).textContent()).resolves.toBe(`npm run flowlab -- distill --experiment ${plainRun} --role solver --shots 2 --db ${lab.ws.db}`);
    await page.click(tid('distill-start'));
    const note = page.locator(tid('distill-note'));
    await note.waitFor(LONG);
    const text = (await note.textContent()) ?? '';
    const id = /Distilled card (card-[0-9a-z-]+) /.exec(text)?.[1];
    expect(id, text).toBeTruthy();
    // The tiny model answers no GSM8K task correctly: every source run failed, and the card says so.
    await expect(page.locator(tid(`card-trust-${id}`)).textContent()).resolves.toMatch(/distilled from \d failed runs? \(every one of its sources was graded wrong\)/);
    expect(lab.pageErrors).toEqual([]);
  }, 300_000);

  it('cancels a run and resumes it from the Experiments view', async () => {
    await page.click(tid('nav-run'));
    await page.fill(tid('run-limit'), '8');
    await page.fill(tid('run-seed'), '3');
    const id = await startFromRunForm();
    // As long as the other waits (the page may be slow to take the click on a loaded machine); a run that ended first has nothing to cancel.
    await page.click(tid('run-cancel'), WAIT).catch(() => undefined);
    await page.locator(`${tid('run-status')}:is([data-status="cancelled"], [data-status="completed"])`).waitFor(LONG);
    if ((await page.locator(tid('run-status')).getAttribute('data-status')) !== 'cancelled') {
      process.stdout.write(`[e2e loop] run ${id} ended before it could be cancelled: nothing to resume\n`);
      return;
    }
    await page.click(tid('nav-experiments'));
    // The host records the end once the models are unloaded: Refresh until the row says cancelled.
    const resume = page.locator(tid(`resume-${id}`));
    await expect.poll(async () => {
      if (await resume.count()) return true;
      await page.locator('.experiments-view .view-head').getByRole('button', { name: 'Refresh' }).click();
      return false;
    }, WAIT).toBe(true);
    await resume.click();
    // Resumed: it runs again and finishes all 8 tasks.
    await expect.poll(async () => page.locator(tid(`experiment-row-${id}`)).textContent(), LONG).toMatch(/8 \/ 8.*completed/);
    expect(lab.pageErrors).toEqual([]);
  }, 300_000);

  it('starts a train loop from the Learning view and follows its iterations live', async () => {
    await openExample('examples/learn-word.yaml', 'learn-word');
    await page.click(tid('nav-learning'));
    await page.locator(`${tid('train-loop-panel')} > summary`).click();
    // The form starts at flowlab train-loop's defaults (10 iterations of 4 tasks x G 8, 32 held-out x 4); a short loop here.
    await expect(page.locator(tid('loop-iterations')).inputValue()).resolves.toBe('10');
    await expect(page.locator(tid('loop-group')).inputValue()).resolves.toBe('8');
    for (const [field, value] of [['loop-iterations', '2'], ['loop-limit', '2'], ['loop-group', '2'], ['loop-heldout', '2'], ['loop-heldout-samples', '2']] as const) await page.fill(tid(field), value);
    await expect.poll(() => page.locator(tid('loop-start')).isEnabled(), WAIT).toBe(true);
    await page.click(tid('loop-start'));
    const status = page.locator(tid('loop-status'));
    await status.waitFor(WAIT);
    const loopId = (await status.locator('code').first().textContent())!;
    expect(loopId).toMatch(/^tl-/);
    // Live: the iterations done go 0 -> 1 -> 2 while the page stays open.
    const done: number[] = [];
    for (const t0 = Date.now(); Date.now() - t0 < LONG.timeout; ) {
      const d = Number(await status.getAttribute('data-done'));
      if (done.at(-1) !== d) done.push(d);
      const s = await status.getAttribute('data-status');
      if (s === 'completed' || s === 'failed' || s === 'cancelled') break;
      await page.waitForTimeout(100);
    }
    await expect(status.getAttribute('data-status')).resolves.toBe('completed');
    expect(done.at(-1)).toBe(2);
    expect(done).toContain(1);
    await expect(page.locator(tid('loop-line')).textContent()).resolves.toMatch(/^completed: 2 of 2 iterations/);
    await expect(page.locator(`${tid('loop-iterations-list')} li`).count()).resolves.toBe(2);
    await screenshot(page, 'learning-train-loop');

    // Its experiments (2 iterations, held-out before and after) are one entry of the Experiments list.
    await page.click(tid('nav-experiments'));
    const group = page.locator(tid(`experiment-group-${loopId}`));
    await group.waitFor(WAIT);
    // The list may first come from a reload during the loop (its held-out-after experiment not yet stored).
    await group.filter({ hasText: /4 experiments/ }).waitFor(WAIT);
    await page.click(tid(`group-toggle-${loopId}`));
    await expect(page.locator('tr.member-row').count()).resolves.toBe(4);
    await page.selectOption(tid('filter-kind'), 'train-loop');
    await expect(page.locator('[data-testid^="experiment-row-"]').count()).resolves.toBe(4);
    await screenshot(page, 'experiments-grouped');
    expect(lab.pageErrors).toEqual([]);
  }, 300_000);

  it('flags a SIMULATED card where it is offered, exports it and deletes it', async () => {
    await openExample('examples/gsm8k-single.yaml', 'gsm8k-single');
    await page.click(tid('nav-run'));
    await page.selectOption(tid('run-kind-select'), 'run');
    await expect(page.locator(tid('run-card-flag-card-sim')).textContent()).resolves.toContain('SIMULATED');
    await expect(page.locator(tid('run-card-flag-card-plain')).count()).resolves.toBe(0);
    await expect(page.locator('[data-testid^="run-card-flag-card-2"]').textContent()).resolves.toContain('from failed runs');
    await page.check(tid('run-card-card-sim'));
    await expect(page.locator(tid('run-card-warning-solver')).textContent()).resolves.toContain('card-sim: SIMULATED');
    await page.uncheck(tid('run-card-card-sim'));

    await page.click(tid('nav-cards'));
    await expect(page.locator(tid('card-trust-card-sim')).textContent()).resolves.toMatch(/^⚠ SIMULATED: distilled from simulated trajectories/);
    const download = page.waitForEvent('download', WAIT);
    await page.click(tid('card-export-card-sim'));
    const file = await (await download).path();
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { format: string; cards: Array<{ id: string; simulated: boolean }> };
    expect(doc.cards).toEqual([expect.objectContaining({ id: 'card-sim', simulated: true })]);
    await page.click(tid('card-delete-card-sim'));
    await page.click(tid('card-delete-confirm-card-sim'));
    await page.locator(tid('card-card-sim')).waitFor({ state: 'detached', ...WAIT });
    await page.locator(tid('card-card-plain')).waitFor(WAIT);
    expect(lab.pageErrors).toEqual([]);
  }, 120_000);
});
