/**
 * The playground streaming a reply, end to end: `flowlab serve` over an empty database with the
 * tiny real model (stories260K) in its model folder, driven from Debian Chromium. The Models
 * view's playground generates with a seed: the prompt as the model sees it is shown, the reply
 * arrives over time (every state of the output recorded in the page by a MutationObserver, with
 * its time), and the end shows the completion tokens and tokens/s; the same seed again gives the
 * same text; Stop ends a long reply, keeping its text. Skips, saying why, without Chromium or the model.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserMissing, openLab, REQUIRED, reportPerf, screenshot, sharedMissing, type OpenLab, type ServeProcess } from './harness.ts';

const missing = browserMissing() ?? sharedMissing();
if (missing && REQUIRED) throw new Error(`e2e: ${missing} (FLOWLAB_E2E_REQUIRED=1: the browser tests must run here)`);
if (missing) process.stdout.write(`[e2e playground] SKIPPED: ${missing}\n`);

const tid = (id: string) => `[data-testid="${id}"]`;

let lab: OpenLab<void>;
let serve: ServeProcess;
let page: Page;
let pageErrors: string[] = [];

/** Records, in the page, every (time, output length, token count, status) the result shows, one entry per change. */
async function recordOutput(p: Page): Promise<() => Promise<Array<{ t: number; len: number; tokens: string; status: string }>>> {
  await p.evaluate(() => {
    const w = window as unknown as { __states: Array<{ t: number; len: number; tokens: string; status: string }> };
    w.__states = [];
    new MutationObserver(() => {
      const box = document.querySelector('[data-testid="playground-result"]');
      if (!box) return;
      const len = (box.querySelector('[data-testid="playground-output"]')?.textContent ?? '').replace('▍', '').length;
      const tokens = box.querySelector('[data-testid="playground-tokens"]')?.textContent ?? '';
      const status = box.getAttribute('data-status') ?? '';
      const last = w.__states.at(-1);
      if (!last || last.len !== len || last.tokens !== tokens || last.status !== status) w.__states.push({ t: performance.now(), len, tokens, status });
    }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
  });
  return () => p.evaluate(() => (window as unknown as { __states: Array<{ t: number; len: number; tokens: string; status: string }> }).__states);
}

describe.skipIf(!!missing)('the playground streaming a reply (flowlab serve, stories260K)', () => {
  beforeAll(async () => {
    lab = await openLab(() => {});
    ({ serve, page, pageErrors } = lab);
  }, 300_000);

  afterAll(async () => {
    await lab?.close();
  }, 60_000);

  it('streams tokens over time, then shows the token count and speed; the same seed gives the same text', async () => {
    await page.goto(serve.url);
    await page.click(tid('nav-models'));
    await page.locator(tid('models-table')).waitFor({ timeout: 30_000 });
    await page.locator(tid('playground')).waitFor({ timeout: 30_000 });
    await expect(page.locator(tid('playground-model')).inputValue()).resolves.toMatch(/stories260K\.gguf$/);
    await page.locator(tid('playground-prompt')).fill('Once upon a time');
    await page.locator(tid('playground-seed')).fill('7');
    await page.locator(tid('playground-maxTokens')).fill('200');
    const states = await recordOutput(page);
    await page.click(tid('playground-generate'));
    await page.locator(`${tid('playground-result')}[data-status="completed"]`).waitFor({ timeout: 120_000 });

    const seen = await states();
    const streaming = seen.filter((s) => s.status === 'running' && s.len > 0);
    const lengths = [...new Set(streaming.map((s) => s.len))];
    const span = streaming.length > 1 ? streaming.at(-1)!.t - streaming[0]!.t : 0;
    // Tokens arrived over time: many growing states of the output before it ended, at different times, each with its token count.
    expect(lengths.length).toBeGreaterThanOrEqual(5);
    expect(lengths.every((l, i) => i === 0 || l > lengths[i - 1]!)).toBe(true);
    expect(span).toBeGreaterThan(0);
    const liveCounts = streaming.map((s) => Number(s.tokens));
    expect(liveCounts.every((c) => Number.isInteger(c) && c > 0)).toBe(true);
    expect(liveCounts.at(-1)).toBeGreaterThan(liveCounts[0]!);

    // The end: the prompt as fed (stories260K has no chat template; 7 tokens with its BOS), the text, the counts and the speed.
    await expect(page.locator(tid('playground-rendered')).textContent()).resolves.toBe('Once upon a time');
    const text = (await page.locator(tid('playground-output')).textContent())!;
    const tokens = Number(await page.locator(tid('playground-tokens')).textContent());
    const speed = Number(await page.locator(tid('playground-speed')).textContent());
    const stats = (await page.locator(tid('playground-stats')).textContent())!;
    expect(text.length).toBeGreaterThan(20);
    expect(tokens).toBeGreaterThanOrEqual(liveCounts.at(-1)!);
    expect(tokens).toBeLessThanOrEqual(200);
    expect(speed).toBeGreaterThan(0);
    expect(stats).toMatch(new RegExp(`^${tokens} completion tokens · ${speed.toFixed(1)} tokens/s · first token \\d+ ms · \\d+ ms · 7 prompt tokens · stopped: (max tokens|end of text)$`));
    reportPerf('playgroundStream', { states: lengths.length, spanMs: Math.round(span), tokens, tokensPerSecond: speed }, `playground: ${lengths.length} growing states of the reply over ${Math.round(span)} ms; ${tokens} completion tokens at ${speed} tokens/s`);
    await screenshot(page, 'models-playground');

    // Same seed and settings: the same text. With the model loaded the second reply can run and end
    // between two polls of a locator, so the states recorded since the click must show it ran.
    await page.evaluate(() => {
      (window as unknown as { __states: unknown[] }).__states = [];
    });
    await page.click(tid('playground-generate'));
    await page.waitForFunction(
      () => {
        const w = window as unknown as { __states: Array<{ status: string }> };
        const box = document.querySelector('[data-testid="playground-result"]');
        return w.__states.some((x) => x.status === 'running') && box?.getAttribute('data-status') === 'completed';
      },
      undefined,
      { timeout: 120_000 },
    );
    await expect(page.locator(tid('playground-output')).textContent()).resolves.toBe(text);
    expect(pageErrors).toEqual([]);
  }, 300_000);

  it('stops a long reply with Stop: the text so far stays, and the window says it stopped', async () => {
    // 4,096 tokens asked: the tiny model's 2,048-token context ends it first, seconds away; Stop comes after the first tokens.
    await page.locator(tid('playground-maxTokens')).fill('4096');
    await page.click(tid('playground-generate'));
    await page.waitForFunction(() => Number(document.querySelector('[data-testid="playground-tokens"]')?.textContent) >= 20, undefined, { timeout: 60_000 });
    await page.click(tid('playground-stop'));
    await page.locator(`${tid('playground-result')}[data-status="cancelled"]`).waitFor({ timeout: 30_000 });
    await expect(page.locator(tid('playground-end')).textContent()).resolves.toBe('Stopped.');
    const tokens = Number(await page.locator(tid('playground-tokens')).textContent());
    expect(tokens).toBeGreaterThanOrEqual(20);
    expect(tokens).toBeLessThan(2048);
    expect((await page.locator(tid('playground-output')).textContent())!.length).toBeGreaterThan(20);
    // The model is free again: a new generation starts (no BUSY).
    await page.locator(tid('playground-maxTokens')).fill('8');
    await page.click(tid('playground-generate'));
    await page.locator(`${tid('playground-result')}[data-status="completed"]`).waitFor({ timeout: 60_000 });
    expect(pageErrors).toEqual([]);
  }, 300_000);
});
