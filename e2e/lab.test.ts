/**
 * The lab end to end: `flowlab serve` (a child process running the real core, store and
 * node-llama-cpp) driven from Debian Chromium through playwright-core.
 *
 * In order, on one server, one fresh database and one browser profile:
 * 1. security: the session token, other origins, the CSP header (no model needed);
 * 2. the 2,000-node trace benchmark (a scripted, SIMULATED run seeded into the database);
 * 3. the main flow with the tiny real model: open gsm8k-team.yaml, change a node's role in the
 *    graph and see the YAML follow, assign the model, watch a live run (listed in the header's Jobs
 *    menu while it runs, gone once it ends; then cancel it), run 3
 *    GSM8K tasks with one injected SIMULATED fault to the end, open the run, click the root
 *    failure, see its error, the blamed role and "simulated", the ladder, the experiments chart,
 *    the models view with a test generation; and no main-thread task over the budget meanwhile.
 * Screenshots (1280x800) go to artifacts/screenshots/. Skips, saying why, without Chromium (unless
 * FLOWLAB_E2E_REQUIRED=1, as in CI) and, for the model steps, without the shared model and data.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRODUCTION_CSP } from '../host/security.ts';
import { BIG_FAILING_NODE, BIG_NODES, seedBigTrace } from './bigTrace.ts';
import {
  browserMissing,
  createWorkspace,
  ensureRendererBuilt,
  LONGTASK_OBSERVER,
  launchBrowser,
  longestTaskSince,
  longestFrameSince,
  frameBreakdown,
  traceTasks,
  reportPerf,
  REQUIRED,
  screenshot,
  sharedMissing,
  startServe,
  type ServeProcess,
  type Workspace,
} from './harness.ts';

const noBrowser = browserMissing();
const noShared = sharedMissing();
if (noBrowser && REQUIRED) throw new Error(`e2e: ${noBrowser} (FLOWLAB_E2E_REQUIRED=1: the browser tests must run here)`);
if (noBrowser) process.stdout.write(`[e2e] SKIPPED: ${noBrowser}\n`);
else if (noShared) process.stdout.write(`[e2e] model steps SKIPPED: ${noShared}\n`);

/**
 * Budgets. The targets are reported (`[e2e perf]`, artifacts/e2e-perf.json) and judged there; the
 * assertions are loose, since they are wall time on whatever machine runs the suite. On a 2-core
 * machine with two busy processes beside the e2e files the 2,000-node draw took 4.6 s, a hair under
 * the 5 s limit it had; the limit is 20 s.
 */
const DRAW_TARGET_MS = 1500;
const DRAW_LIMIT_MS = 20_000;
const LONGTASK_TARGET_MS = 200;
const LONGTASK_LIMIT_MS = 1000;
/** Tasks of the live run that is watched mid-way and cancelled. */
const LIVE_TASKS = 40;
/** Tasks stored before the live run is photographed and cancelled. */
const LIVE_WATCH_TASKS = 5;
const WAIT = { timeout: 30_000 } as const;

let ws: Workspace;
let serve: ServeProcess;
let context: BrowserContext;
let page: Page;
let bigExperiment = '';
const pageErrors: string[] = [];
const consoleErrors: string[] = [];
/** performance.now() in the page when the first run started; long tasks after it count. */
let runsStartedAt = -1;
/** The live (then cancelled) run and the finished 3-task run. */
let liveExperiment = '';
let faultExperiment = '';

const tid = (id: string) => `[data-testid="${id}"]`;

/** POSTs an API method from Node (no browser) with the given headers. */
async function api(method: string, headers: Record<string, string>, body?: unknown): Promise<Response> {
  return fetch(`${serve.origin}/api/${method}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

/** Selects the option of a <select> whose visible text starts with `prefix`; returns its value. */
async function selectByText(selector: string, prefix: string): Promise<string> {
  const value = await page.locator(selector).evaluate((el, p) => {
    const opt = [...(el as HTMLSelectElement).options].find((o) => o.text.trim().startsWith(p) && !o.disabled);
    return opt?.value ?? null;
  }, prefix);
  if (value === null) throw new Error(`${selector} has no option starting with "${prefix}"`);
  await page.selectOption(selector, value);
  return value;
}

describe.skipIf(!!noBrowser)('the lab in Chromium against flowlab serve', () => {
  beforeAll(async () => {
    ensureRendererBuilt();
    ws = createWorkspace();
    bigExperiment = await seedBigTrace(ws.db);
    serve = await startServe(ws);
    context = await launchBrowser(ws);
    await context.addInitScript(LONGTASK_OBSERVER);
    page = await context.newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
    page.on('console', (msg: ConsoleMessage) => {
      if (msg.type() === 'error') consoleErrors.push(msg.text());
    });
  }, 120_000);

  afterAll(async () => {
    await context?.close().catch(() => {});
    const code = await serve?.stop();
    if (serve && code !== 0) process.stdout.write(`[e2e] flowlab serve exited with ${code}; stderr:\n${serve.stderr()}\n`);
    ws?.remove();
  }, 60_000);

  describe('security of the browser host', () => {
    it('answers 401 to the page and the API without the session token', async () => {
      expect((await fetch(`${serve.origin}/`)).status).toBe(401);
      expect((await fetch(`${serve.origin}/?token=${'0'.repeat(64)}`)).status).toBe(401);
      expect((await api('listExperiments', {})).status).toBe(401);
      expect((await api('listExperiments', { 'x-flowlab-token': 'wrong' })).status).toBe(401);
      expect((await fetch(`${serve.origin}/api/events`)).status).toBe(401);
      const ok = await api('listExperiments', { 'x-flowlab-token': serve.token });
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as { ok: boolean }).ok).toBe(true);
    });

    it('refuses a page of another origin, even one that knows the token', async () => {
      // Another loopback origin (127.0.0.1:<other port>): what a malicious local page would be.
      const other: Server = createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<!doctype html><title>other origin</title><p>not Flowlab</p>');
      });
      await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
      const otherOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
      const attacker = await context.newPage();
      try {
        await attacker.goto(otherOrigin);
        const before = ((await (await api('listExperiments', { 'x-flowlab-token': serve.token })).json()) as { result: unknown[] }).result.length;
        const outcome = await attacker.evaluate(
          async ({ origin, token }) => {
            const out: Record<string, string> = {};
            // A CORS request with the token header: the preflight is refused, so fetch rejects.
            try {
              const r = await fetch(`${origin}/api/listExperiments`, { method: 'POST', headers: { 'x-flowlab-token': token, 'content-type': 'application/json' } });
              out.cors = `answered ${r.status}`;
            } catch (err) {
              out.cors = `rejected: ${(err as Error).name}`;
            }
            // A "simple" cross-site POST (no preflight) that would start a run if it got through.
            try {
              await fetch(`${origin}/api/startRun?token=${token}`, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ workflowText: 'x', dataset: 'gsm8k', split: 'test', limit: 1, seed: 1, models: {} }) });
              out.simple = 'sent';
            } catch (err) {
              out.simple = `rejected: ${(err as Error).name}`;
            }
            return out;
          },
          { origin: serve.origin, token: serve.token },
        );
        expect(outcome.cors).toBe('rejected: TypeError');
        // The server refused it by its Origin header: the same request from Node says why.
        const refused = await api('listExperiments', { 'x-flowlab-token': serve.token, origin: otherOrigin });
        expect(refused.status).toBe(403);
        expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/origin .* refused/);
        const preflight = await fetch(`${serve.origin}/api/listExperiments`, { method: 'OPTIONS', headers: { origin: otherOrigin, 'access-control-request-method': 'POST' } });
        expect(preflight.status).toBe(403);
        expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
        // And nothing was started by the simple POST.
        const after = ((await (await api('listExperiments', { 'x-flowlab-token': serve.token })).json()) as { result: unknown[] }).result.length;
        expect(after).toBe(before);
      } finally {
        await attacker.close();
        await new Promise<void>((resolve) => {
          other.close(() => resolve());
          other.closeAllConnections();
        });
      }
    });

    it("serves the page with host/security.ts's PRODUCTION_CSP, and the browser enforces it", async () => {
      const csp = await context.newPage();
      try {
        const res = await csp.goto(serve.url);
        expect(res?.status()).toBe(200);
        const headers = res!.headers();
        expect(headers['content-security-policy']).toBe(PRODUCTION_CSP);
        expect(headers['referrer-policy']).toBe('no-referrer');
        expect(headers['x-frame-options']).toBe('DENY');
        // The page's own <meta> policy is the same string.
        expect(await csp.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content')).toBe(PRODUCTION_CSP);
        // An inline script is refused (script-src 'self').
        const ran = await csp.evaluate(() => {
          const s = document.createElement('script');
          s.textContent = 'window.__inlineRan = true';
          document.head.append(s);
          return (window as unknown as { __inlineRan?: boolean }).__inlineRan === true;
        });
        expect(ran).toBe(false);
      } finally {
        await csp.close();
      }
    });
  });

  describe('performance', () => {
    it(`lays out and draws a ${BIG_NODES}-node trace`, async () => {
      await page.goto(serve.url);
      await page.click(tid('nav-trace'));
      // Opening the trace: from choosing its experiment (its workflow's text arrives) to the graph drawn.
      const openFrom = await page.evaluate(() => performance.now());
      const stopTrace = await traceTasks(page);
      await page.selectOption(tid('pick-experiment'), bigExperiment, WAIT);
      const t0 = Date.now();
      const clickAt = await page.evaluate(() => performance.now());
      await page.click(tid('pick-run-0'), WAIT);
      const graph = page.locator(`${tid('graph')}[data-nodes="${BIG_NODES}"][data-ready="true"]`);
      await graph.waitFor(WAIT);
      const wallMs = Date.now() - t0;
      // The long-task observer (used for the budget during runs) is live: it sees this draw.
      expect(await page.evaluate(() => (window as unknown as { __flowlabLongTaskError?: string }).__flowlabLongTaskError)).toBeUndefined();
      const drawTasks = await longestTaskSince(page, openFrom);
      const drawMs = Number(await graph.getAttribute('data-draw-ms'));
      const totalMs = Number(await graph.getAttribute('data-total-ms'));
      reportPerf('trace2000', { nodes: BIG_NODES, layoutAndDrawMs: totalMs, drawMs, clickToDrawnMs: wallMs, targetMs: DRAW_TARGET_MS }, `${BIG_NODES}-node trace: layout+draw ${totalMs.toFixed(0)} ms (target < ${DRAW_TARGET_MS}: ${totalMs < DRAW_TARGET_MS ? 'MET' : 'MISSED'}); draw alone ${drawMs.toFixed(0)} ms; click to drawn, fetch included, ${wallMs} ms`);
      reportPerf('trace2000LongestTask', { longestMs: drawTasks.longest, count: drawTasks.count, targetMs: LONGTASK_TARGET_MS }, `${BIG_NODES}-node trace: longest main-thread task while opening it (experiment chosen to graph drawn) ${drawTasks.longest.toFixed(0)} ms, ${(drawTasks.at - clickAt).toFixed(0)} ms after the click on the run (${drawTasks.count} long task(s); target < ${LONGTASK_TARGET_MS}: ${drawTasks.longest < LONGTASK_TARGET_MS ? 'MET' : 'MISSED'})`);
      const times = await stopTrace();
      reportPerf('trace2000TaskCpu', { maxCpuMs: times.maxCpuMs, long: times.long.slice(0, 5), targetMs: LONGTASK_TARGET_MS }, `${BIG_NODES}-node trace, experiment chosen to graph drawn: the most CPU time one main-thread task took ${times.maxCpuMs.toFixed(0)} ms (bound < ${LONGTASK_TARGET_MS / 2}, half the ${LONGTASK_TARGET_MS} ms target: ${times.maxCpuMs < LONGTASK_TARGET_MS / 2 ? 'MET' : 'MISSED'}; ${times.count} tasks); longest tasks, wall / CPU ms: ${times.long.slice(0, 5).map((t) => `${t.wallMs.toFixed(0)}/${t.cpuMs.toFixed(0)}`).join(', ') || 'none over 50 ms'}`);
      process.stdout.write(`[e2e perf] ${BIG_NODES}-node trace: ${frameBreakdown(await longestFrameSince(page, openFrom))}\n`);
      expect(totalMs).toBeGreaterThan(0);
      expect(totalMs).toBeLessThan(DRAW_LIMIT_MS);
      // The graph comes in chunks, each styled in a task of its own and drawn in the next frame, and
      // the list is windowed: no task holds the whole draw. Wall time gets a loose bound (a loaded
      // 2-core machine stretches every task: at load average 12-14 the longest took 0.2-0.64 s of
      // wall time and 41-55 ms of CPU); the 200 ms target is reported above.
      expect(drawTasks.longest).toBeLessThan(2 * LONGTASK_LIMIT_MS);
      // The goal in CPU time, which the load beside the suite does not stretch (at load average 10
      // on 2 cores a task of 50 ms CPU took 357 ms of wall time): no task of opening the trace needs
      // half the 200 ms budget, so that one process's worth of load beside it (each task twice as
      // long) keeps it under 200 ms. Before the list was windowed, the workflow text left unparsed
      // and the graph styled apart from its frames, one task needed 170 ms of CPU.
      expect(times.count).toBeGreaterThan(20);
      expect(times.maxCpuMs).toBeLessThan(LONGTASK_TARGET_MS / 2);
      // The list below is windowed: of its 2,000 rows only those in view (and a margin) are in the
      // page, each 28 px high (the spacers stand for the others by that height).
      const table = page.locator(tid('trace-nodes-table'));
      await expect(table.getAttribute('data-windowed')).resolves.toBe('true');
      await expect(table.getAttribute('aria-rowcount')).resolves.toBe(String(BIG_NODES + 1));
      const heights = await table.locator('tbody tr[aria-rowindex]').evaluateAll((rows) => rows.map((r) => r.getBoundingClientRect().height));
      expect(heights.length).toBeGreaterThan(10);
      expect(heights.length).toBeLessThan(60);
      expect(new Set(heights)).toEqual(new Set([28]));
      await screenshot(page, 'trace-2000-nodes');
      // Scrolled a box at a time, like a reader, the rows in the page always cover the box, down to
      // the failing node's row (a root; its successors cascades).
      const scrollFrom = await page.evaluate(() => performance.now());
      const steps = await page.locator(tid('trace-nodes-scroll')).evaluate(async (box, id) => {
        const rowsCover = () => {
          const rows = box.querySelectorAll<HTMLElement>('tr[aria-rowindex]');
          const a = rows[0];
          const b = rows[rows.length - 1];
          return !!a && !!b && a.offsetTop <= box.scrollTop && b.offsetTop + b.offsetHeight >= box.scrollTop + box.clientHeight;
        };
        for (let step = 0; step < 500; step++) {
          if (box.querySelector(`[data-testid="trace-row-${id}"]`)) return step;
          const before = box.scrollTop;
          box.scrollTop += box.clientHeight - 28;
          if (box.scrollTop === before) return -1; // the end, and no such row
          let frames = 0;
          while (!rowsCover() && frames++ < 120) await new Promise((r) => requestAnimationFrame(r));
          if (!rowsCover()) return -2 - step; // the rows never caught up with the scroll
        }
        return -1;
      }, BIG_FAILING_NODE);
      expect(steps).toBeGreaterThan(0);
      const scrollTasks = await longestTaskSince(page, scrollFrom);
      reportPerf('trace2000ScrollLongestTask', { steps, longestMs: scrollTasks.longest, count: scrollTasks.count }, `${BIG_NODES}-node trace: scrolled its node list ${steps} boxes down to ${BIG_FAILING_NODE}; longest main-thread task meanwhile ${scrollTasks.longest.toFixed(0)} ms (${scrollTasks.count} long task(s))`);
      await expect(page.locator('tr', { has: page.locator(tid(`trace-row-${BIG_FAILING_NODE}`)) }).getAttribute('class')).resolves.toContain('row-st-root');
      // Selecting the root failure brings it into view, zoomed in enough for labels.
      await page.click(tid(`trace-row-${BIG_FAILING_NODE}`));
      await page.locator(tid('node-detail')).waitFor(WAIT);
      await expect(page.locator(tid('node-detail')).locator(tid('node-error')).textContent()).resolves.toMatch(/simulated/);
      await page.evaluate(() => window.scrollTo(0, 0)); // clicking the row scrolled the page
      await page.waitForTimeout(600); // the 250 ms centring animation
      await screenshot(page, 'trace-2000-nodes-root');
      // J with the selected row scrolled out of the list (and so out of the page): the next node is
      // selected, and the list scrolls to it, its row rendered and inside the list's box.
      const failingIndex = Number(await page.locator('tr', { has: page.locator(tid(`trace-row-${BIG_FAILING_NODE}`)) }).getAttribute('aria-rowindex'));
      await page.locator(tid('trace-nodes-scroll')).evaluate((box) => { box.scrollTop = 0; });
      await expect.poll(() => page.locator(tid(`trace-row-${BIG_FAILING_NODE}`)).count(), WAIT).toBe(0);
      await page.keyboard.press('j');
      const next = page.locator(`${tid('trace-nodes-table')} tr[aria-rowindex="${failingIndex + 1}"]`);
      await next.waitFor(WAIT);
      await expect(next.locator('button[aria-pressed="true"]').count()).resolves.toBe(1);
      const inBox = await page.locator(tid('trace-nodes-scroll')).evaluate((box, index) => {
        const row = box.querySelector(`tr[aria-rowindex="${index}"]`)!.getBoundingClientRect();
        const head = box.querySelector('thead')!.getBoundingClientRect();
        const outer = box.getBoundingClientRect();
        return row.top >= head.bottom - 0.5 && row.bottom <= outer.bottom + 0.5;
      }, failingIndex + 1);
      expect(inBox).toBe(true);
      await page.keyboard.press('k');
      await expect(page.locator(tid(`trace-row-${BIG_FAILING_NODE}`)).getAttribute('aria-pressed')).resolves.toBe('true');
      // Its successors, a layer (40 rows) further down, are cascades.
      const cascades = await page.locator(tid('trace-nodes-scroll')).evaluate(async (box) => {
        for (let step = 0; step < 10; step++) {
          const n = box.querySelectorAll('tr.row-st-cascade').length;
          if (n) return n;
          box.scrollTop += box.clientHeight - 28;
          await new Promise((r) => setTimeout(r, 100));
        }
        return 0;
      });
      expect(cascades).toBeGreaterThan(0);
    }, 120_000);
  });

  describe.skipIf(!!noShared)('the main flow with the tiny real model', () => {
    it('opens the lab and loads examples/gsm8k-team.yaml', async () => {
      await page.goto(serve.url);
      await page.click(tid('nav-editor'));
      await page.locator(`${tid('example-select')} option[value="examples/gsm8k-team.yaml"]`).waitFor({ state: 'attached', ...WAIT });
      await page.selectOption(tid('example-select'), 'examples/gsm8k-team.yaml');
      await page.click(tid('example-open'));
      // The example's text comes from the host (a fetch): poll as long as the other waits (expect.poll's own default is 1 s).
      await expect.poll(() => page.inputValue(tid('yaml-text')), WAIT).toContain('name: gsm8k-team');
      await page.locator(`${tid('validation')}[data-valid="true"]`).waitFor(WAIT);
      await page.locator(`${tid('graph')}[data-nodes="5"][data-ready="true"]`).waitFor(WAIT);
    });

    it("changes a node's role in the graph and the YAML text follows", async () => {
      const before = await page.inputValue(tid('yaml-text'));
      expect(before).toMatch(/- id: answer\n\s+role: answerer\n/);
      await page.click(tid('editor-node-answer'));
      await page.selectOption(tid('node-role-select'), 'verifier');
      await expect.poll(() => page.inputValue(tid('yaml-text')), WAIT).toMatch(/- id: answer\n\s+role: verifier\n/);
      const after = await page.inputValue(tid('yaml-text'));
      // Only that line changed: comments and layout of the rest are kept.
      expect(after.split('\n').filter((l, i) => l !== before.split('\n')[i])).toEqual(['    role: verifier']);
      await page.locator(`${tid('validation')}[data-valid="true"]`).waitFor(WAIT);
      await expect(page.locator(tid('editor-node-answer')).textContent()).resolves.toContain('verifier');
    });

    it('assigns the tiny model to the roles', async () => {
      const model = await selectByText(tid('default-model'), 'stories260K.gguf');
      expect(model).toMatch(/stories260K\.gguf$/);
      await selectByText(tid('role-model-solver'), 'stories260K.gguf');
      await page.click(tid('editor-node-answer'));
      await screenshot(page, 'editor');
    });

    it('starts a run, watches it live mid-way, and cancels it', async () => {
      await page.click(tid('nav-run'));
      await page.selectOption(tid('run-dataset'), 'gsm8k');
      await page.selectOption(tid('run-split'), 'test');
      await page.fill(tid('run-limit'), String(LIVE_TASKS));
      await page.fill(tid('run-seed'), '1');
      await expect.poll(() => page.locator(tid('run-start')).isEnabled(), WAIT).toBe(true);
      runsStartedAt = await page.evaluate(() => performance.now());
      await page.click(tid('run-start'));
      const status = page.locator(tid('run-status'));
      await status.waitFor(WAIT);
      // Mid-run: a few tasks stored (the page has been updating for a while), not all.
      await expect
        .poll(async () => Number(await page.locator(tid('run-progress')).getAttribute('value')), { timeout: 60_000 })
        .toBeGreaterThanOrEqual(LIVE_WATCH_TASKS);
      liveExperiment = (await status.locator('code').first().textContent()) ?? '';
      const live = await status.getAttribute('data-status');
      let ended: string | null = live;
      if (live === 'running') {
        // The header's Jobs menu lists it from the one `job` event: kind `run`, its experiment id, a progress bar.
        await page.click(tid('jobs-toggle'));
        await page.locator(`[data-job="run:${liveExperiment}"] progress`).waitFor(WAIT);
        await page.click(tid('jobs-toggle'));
        await page.locator('.live-graph .graph[data-ready="true"]').waitFor(WAIT);
        await screenshot(page, 'run-live');
        // The run may end on its own between the check and the click: then there is nothing to cancel.
        // The click may wait for the page (busy drawing the live run on a loaded machine) as long as the
        // other waits: given up after 5 s, the 40-task run would go on past the 30 s wait for its end.
        await page.click(tid('run-cancel'), WAIT).catch(() => undefined);
        await page.locator(`${tid('run-status')}:is([data-status="cancelled"], [data-status="completed"])`).waitFor(WAIT);
        ended = await status.getAttribute('data-status');
      }
      if (ended !== 'cancelled') process.stdout.write(`[e2e] the live run ended (${ended}) before it could be cancelled\n`);
      expect(['cancelled', 'completed']).toContain(ended);
      // Ended: it leaves the Jobs list.
      await page.click(tid('jobs-toggle'));
      await page.locator(`[data-job="run:${liveExperiment}"]`).waitFor({ state: 'detached', ...WAIT });
      await page.click(tid('jobs-toggle'));
      const done = Number(await page.locator(tid('run-progress')).getAttribute('value'));
      expect(done).toBeGreaterThanOrEqual(1);
      expect(liveExperiment).toMatch(/^exp-/);
    }, 120_000);

    it('runs 3 GSM8K tasks with one injected SIMULATED fault to the end', async () => {
      await page.fill(tid('run-limit'), '3');
      await page.click(tid('fault-add'));
      await page.selectOption(tid('fault-role-0'), 'solver');
      await page.selectOption(tid('fault-kind-0'), 'error');
      await page.fill(tid('fault-rate-0'), '1');
      await expect.poll(() => page.locator(tid('run-start')).isEnabled(), WAIT).toBe(true);
      await page.click(tid('run-start'));
      const status = page.locator(tid('run-status'));
      await expect.poll(async () => (await status.locator('code').first().textContent()) ?? '', WAIT).not.toBe(liveExperiment);
      faultExperiment = (await status.locator('code').first().textContent()) ?? '';
      await page.locator(`${tid('run-status')}[data-status="completed"]`).waitFor({ timeout: 120_000 });
      const progress = page.locator(tid('run-progress'));
      expect(await progress.getAttribute('value')).toBe('3');
      expect(await progress.getAttribute('max')).toBe('3');
      await expect(status.textContent()).resolves.toMatch(/SIMULATED faults: \d+/);
      const longest = await longestTaskSince(page, runsStartedAt);
      reportPerf(
        'longTaskDuringRuns',
        { longestMs: longest.longest, count: longest.count, targetMs: LONGTASK_TARGET_MS },
        `longest main-thread task while experiments ran: ${longest.count ? `${longest.longest.toFixed(0)} ms` : 'none over 50 ms'} (${longest.count} long task(s); target < ${LONGTASK_TARGET_MS}: ${longest.longest < LONGTASK_TARGET_MS ? 'MET' : 'MISSED'})`,
      );
      expect(longest.longest).toBeLessThan(LONGTASK_LIMIT_MS);
    }, 180_000);

    it("opens the run, clicks the root failure and sees its error, the blamed role and 'simulated'", async () => {
      await page.click(tid('run-open-trace'));
      await expect.poll(() => page.locator(tid('pick-experiment')).inputValue(), WAIT).toBe(faultExperiment);
      // Open its traces selects the first wrong run (task 0: the solver fails every run); it opened Trace with no run selected.
      await page.locator(`${tid('pick-run-0')}[aria-pressed="true"]`).waitFor(WAIT);
      await page.locator(`${tid('graph')}[data-nodes="5"][data-ready="true"]`).waitFor(WAIT);
      await page.click(tid('trace-row-solve'), WAIT);
      await page.evaluate(() => window.scrollTo(0, 0));
      const detail = page.locator(tid('node-detail'));
      await detail.waitFor(WAIT);
      await expect(detail.locator(tid('node-error')).textContent()).resolves.toMatch(/simulated/i);
      await expect(detail.locator(tid('blame-badge')).textContent()).resolves.toMatch(/blamed: solver/);
      await expect(detail.locator(tid('simulated-marker')).textContent()).resolves.toMatch(/SIMULATED/);
      // The rest of the run: solve is the root, its successors cascades (not blamed).
      await expect(page.locator('tr.row-st-root').count()).resolves.toBe(1);
      await expect.poll(() => page.locator('tr.row-st-cascade').count(), WAIT).toBeGreaterThan(0);
      await expect(page.locator(tid('blame-summary')).locator(tid('blame-role-solver')).textContent()).resolves.toContain('solve');
      // The edited workflow is the one that ran: node answer has the role set in the graph.
      await expect(page.locator('tr', { has: page.locator(tid('trace-row-answer')) }).locator('td').nth(2).textContent()).resolves.toBe('verifier');
      await screenshot(page, 'trace-root-failure');
    }, 60_000);

    it("shows the run's reward ladder and the experiment's mean", async () => {
      await page.click(tid('nav-ladder'));
      const ladder = page.locator(tid('ladder'));
      await ladder.waitFor(WAIT);
      await ladder.locator(tid('ladder-chart')).waitFor(WAIT);
      await expect(ladder.locator(`${tid('ladder-role-solver')}`).count()).resolves.toBe(1);
      await expect(ladder.textContent()).resolves.toContain('SIMULATED');
      await page.locator(tid('ladder-mean')).locator(tid('ladder-mean-chart')).waitFor(WAIT);
      await screenshot(page, 'ladder');
    });

    it('lists the experiments with a chart', async () => {
      await page.click(tid('nav-experiments'));
      await page.locator(tid('experiments-table')).waitFor(WAIT);
      for (const id of [bigExperiment, liveExperiment, faultExperiment]) await page.locator(tid(`experiment-row-${id}`)).waitFor(WAIT);
      const chart = page.locator(`${tid('experiments-chart')}[data-points="3"]`);
      await chart.waitFor(WAIT);
      await expect(chart.locator('canvas').count()).resolves.toBe(1);
      await expect(page.locator(tid(`experiment-row-${faultExperiment}`)).textContent()).resolves.toContain('SIMULATED');
      await screenshot(page, 'experiments');
    });

    it('shows the model with its metadata and runs a one-click test generation', async () => {
      await page.click(tid('nav-models'));
      const row = page.locator(tid('model-row-0'));
      await row.waitFor(WAIT);
      const text = (await row.textContent()) ?? '';
      // File, architecture, parameters, quantisation, context length (read from the GGUF header).
      expect(text).toContain('stories260K.gguf');
      const cells = (await row.locator('td').allTextContents()).map((c) => c.trim());
      expect(cells[1]).toBe('llama');
      expect(cells[2]).toMatch(/^\d+(\.\d+)?K$/);
      expect(cells[3]).toMatch(/^(F32|F16|Q\w+)$/);
      expect(cells[4]).toMatch(/^[\d,]+$/);
      await page.click(tid('model-test'));
      const result = row.locator(tid('model-test-result'));
      await result.waitFor({ timeout: 60_000 });
      const out = (await result.textContent()) ?? '';
      expect(out).not.toMatch(/✗/);
      const tokens = /(\d+) prompt \+ (\d+) completion tokens/.exec(out);
      expect(tokens).not.toBeNull();
      expect(Number(tokens![1])).toBeGreaterThan(0);
      expect(Number(tokens![2])).toBeGreaterThan(0);
      expect((await result.locator('strong').textContent())?.trim().length).toBeGreaterThan(0);
      await screenshot(page, 'models');
    }, 90_000);
  });

  it('raised no uncaught error in the page', () => {
    expect(pageErrors).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});
