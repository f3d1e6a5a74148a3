/**
 * Workshop mode in real Chromium: `flowlab workshop --room` over a rehearsed scenario, one
 * presenter page and three attendee pages (one phone-sized). Predictions appear in the presenter
 * view live; the reveal scores them. With FLOWLAB_SCREENSHOTS=1 it writes
 * docs/screenshots/workshop-{presenter,attendee}-{1280,390}.png.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { API_METHODS } from '../core/api/index.ts';
import { openStore } from '../core/store/index.ts';
import { ATTENDEE_METHODS, TOKEN_HEADER } from '../host/index.ts';
import { parseScenario, rehearse, type StepRunner } from '../core/workshop/index.ts';
import { newExperiment, runRecord } from '../test/fixtures.ts';
import { browserMissing, createWorkspace, ensureRendererBuilt, launchBrowser, ROOT, type Workspace } from './harness.ts';
import { readFileSync } from 'node:fs';

const skip = browserMissing();
const SHOTS = process.env.FLOWLAB_SCREENSHOTS === '1';
/**
 * How long a page may take to show what another page did: both poll `getWorkshop` once a second,
 * four pages and the workshop server share the machine, and a loaded 2-core CI box runs them
 * seconds late.
 */
const POLLED = { timeout: 30_000 } as const;

describe.skipIf(skip !== undefined)('workshop: one presenter, several attendees', () => {
  let ws: Workspace;
  let context: BrowserContext;
  let child: ReturnType<typeof spawn>;
  let presenterUrl = '';
  let attendeeUrl = '';
  let other = '';
  /** The experiment the rehearsed steps wrote (one run, task 0). */
  let exp = '';
  /** The presenter's page, kept for the trace-link test. */
  let presenterPage: Page;
  /** Requests of attendee pages to the event stream (the attendee token is refused there). */
  const eventStreamRequests: string[] = [];

  beforeAll(async () => {
    ensureRendererBuilt();
    ws = createWorkspace();
    const scenario = parseScenario(readFileSync(path.join(ROOT, 'workshops/designer-or-worker.yaml'), 'utf8'));
    const store = openStore(ws.db);
    exp = store.createExperiment(newExperiment({ limit: 1 })).id;
    const runId0 = runRecord(exp, 0).runId;
    store.saveRun(runRecord(exp, 0), []);
    other = store.createExperiment(newExperiment({ limit: 1 })).id; // not one of the workshop's
    const runner: StepRunner = { run: async (step) => ({ stepId: step.id, truth: step.id === 'bad-wire' ? 'designer' : 'executor', headline: 'Structure blames the designer: 5 of 5 root failures (5 wiring).', facts: [{ label: 'Root failures blamed', value: 'designer 5' }, { label: 'Model', value: '/home/presenter/models/stories260K.gguf' }], chart: null, experimentIds: [exp], runIds: [runId0], command: 'npm run flowlab -- blame-eval examples/designer-team.yaml --inject designer=dangling_edge@1', seconds: 10, recordedAt: 1 }) };
    await rehearse(store, scenario, runner);
    store.close();
    child = spawn(process.execPath, ['bin/flowlab.js', 'workshop', 'workshops/designer-or-worker.yaml', '--room', '--port', '0', '--db', ws.db, '--model', path.join(ws.dir, 'absent.gguf')], { cwd: ROOT, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('flowlab workshop printed no URLs')), 60_000);
      child.stdout!.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        const lines = out.split('\n');
        if (lines.length > 2) {
          clearTimeout(t);
          presenterUrl = lines[0]!;
          attendeeUrl = lines[1]!;
          resolve();
        }
      });
      child.once('exit', (code) => reject(new Error(`flowlab workshop exited ${code}`)));
    });
    context = await launchBrowser(ws);
  }, 180_000);

  afterAll(async () => {
    await context?.close().catch(() => {});
    child?.kill('SIGTERM');
    ws?.remove();
  });

  it('predictions from attendee pages appear live in the presenter view; the reveal scores them', async () => {
    const presenter = await context.newPage();
    await presenter.goto(presenterUrl);
    await presenter.getByTestId('ws-presenter').waitFor();
    expect(await presenter.getByTestId('ws-url').textContent()).toBe(attendeeUrl);
    // Served on 127.0.0.1 (the default --host): no QR code of an address phones cannot open, but how to share it.
    expect(attendeeUrl).toMatch(/^http:\/\/127\.0\.0\.1:/);
    await expect(presenter.getByTestId('ws-loopback-warning').textContent()).resolves.toContain('--host 0.0.0.0');
    expect(await presenter.getByTestId('ws-qr').count()).toBe(0);
    const attendees = await Promise.all([0, 1, 2].map(() => context.newPage()));
    await attendees[2]!.setViewportSize({ width: 390, height: 844 });
    const picks = ['designer', 'designer', 'executor'];
    for (const [i, page] of attendees.entries()) {
      // One browser profile holds the pages, so one cookie jar: each attendee joins with an empty
      // jar and gets an identity of its own (three phones would each have their own jar).
      await context.clearCookies();
      page.on('request', (r) => {
        if (new URL(r.url()).pathname === '/api/events') eventStreamRequests.push(r.url());
      });
      await page.goto(attendeeUrl);
      await page.getByTestId(`ws-choice-${picks[i]}`).click();
      await page.getByTestId('ws-sent').waitFor();
      await presenter.getByTestId('ws-count').filter({ hasText: `${i + 1} prediction` }).waitFor(POLLED);
    }
    if (SHOTS) {
      for (const [w, h] of [[1280, 800], [390, 844]] as const) {
        await presenter.setViewportSize({ width: w, height: h });
        await presenter.screenshot({ path: path.join(ROOT, `docs/screenshots/workshop-presenter-${w}.png`) });
        const a = w === 390 ? attendees[2]! : attendees[0]!;
        await a.screenshot({ path: path.join(ROOT, `docs/screenshots/workshop-attendee-${w}.png`) });
      }
      await presenter.setViewportSize({ width: 1280, height: 800 });
    }
    await presenter.getByTestId('ws-reveal-btn').click();
    await presenter.getByTestId('ws-score').filter({ hasText: 'The room: 2 of 3 right (67%).' }).waitFor(POLLED);
    expect(await presenter.getByTestId('ws-truth').textContent()).toBe('designer');
    await attendees[0]!.getByTestId('ws-verdict').filter({ hasText: 'You were right!' }).waitFor(POLLED);
    await attendees[2]!.getByTestId('ws-verdict').filter({ hasText: 'Not this time: your prediction was wrong.' }).waitFor(POLLED);
    // The phone page fits its width.
    expect(await attendees[2]!.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    // A wrong prediction in red, a right one in green (a wrong one was coloured green).
    const colour = (p: Page) => p.getByTestId('ws-verdict').evaluate((el) => getComputedStyle(el).color.match(/\d+/g)!.slice(0, 3).map(Number));
    const [right, wrong] = [await colour(attendees[0]!), await colour(attendees[2]!)];
    expect(right[1]!).toBeGreaterThan(right[0]!);
    expect(wrong[0]!).toBeGreaterThan(wrong[1]!);
    // The room sees the model's file name, not the presenter's path.
    const facts = (await attendees[0]!.locator('.ws-facts').textContent()) ?? '';
    expect(facts).toContain('stories260K.gguf');
    expect(facts).not.toContain('/home/presenter');
    // No attendee page asked for the event stream (it retried /api/events into 403s).
    expect(eventStreamRequests).toEqual([]);
    // The trace links are the presenter's (the attendee token cannot open the lab).
    expect(await attendees[0]!.getByTestId('ws-traces').count()).toBe(0);
    presenterPage = presenter;
    // Their polling would count against the room's rate limit in the tests below.
    for (const a of attendees) await a.close();
  }, 120_000);

  it("the reveal opens a run's trace in the lab (it could not): the link opens Trace with that run selected", async () => {
    const link = presenterPage.getByTestId('ws-trace-0');
    await expect(link.textContent()).resolves.toBe(runRecord(exp, 0).runId);
    const [lab] = await Promise.all([context.waitForEvent('page'), link.click()]);
    await lab.getByTestId('pick-experiment').waitFor(POLLED);
    await lab.locator('[data-testid="pick-run-0"][aria-pressed="true"]').waitFor(POLLED);
    expect(await lab.inputValue('[data-testid="pick-experiment"]')).toBe(exp);
    expect(await lab.locator('[data-testid="nav-trace"]').getAttribute('aria-current')).toBe('page');
    await lab.close();
  }, 60_000);

  it('from an attendee page, the attendee token is refused every other method and experiments outside the workshop', async () => {
    const page = await context.newPage();
    await page.goto(attendeeUrl);
    const token = new URL(attendeeUrl).searchParams.get('token')!;
    const refused = API_METHODS.filter((m) => !ATTENDEE_METHODS.includes(m));
    const answers = await page.evaluate(async ({ methods, header, token, other }) => {
      const call = async (m: string, body?: unknown) => {
        const r = await fetch(`/api/${m}`, { method: 'POST', headers: { 'content-type': 'application/json', [header]: token }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
        return [m, r.status, r.status === 403 ? "" : await r.text()] as const;
      };
      const out = [];
      for (const m of methods) out.push(await call(m));
      out.push(await call('getExperiment', { id: other }));
      out.push(await call('startRun', { workflowText: 'name: x\n', dataset: 'gsm8k', models: { default: '/m/x.gguf' } }));
      return out;
    }, { methods: refused, header: TOKEN_HEADER, token, other });
    expect(refused).toContain('startRun');
    expect(answers.length).toBe(refused.length + 2);
    for (const [m, status, text] of answers) expect([m, status, text]).toEqual([m, 403, ""]);
    await page.close();
  });
});
