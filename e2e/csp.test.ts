/**
 * The page keeps its Content-Security-Policy: every view, with a real graph drawn (the designed
 * run of core/api/designedRun.fixture.ts, a SIMULATED scripted designer) and charts, opened in
 * Debian Chromium against `flowlab serve`, raises no `securitypolicyviolation` event and no
 * console message about a refused style, script, image, font or connection. The policy the host
 * sends is `PRODUCTION_CSP` (host/security.ts): no inline scripts and no inline styles
 * (`style-src 'self'`), so a `<style>` element or a `style="..."` attribute in markup would be
 * refused and reported here. Styles set through the CSSOM (React's `style` prop, cytoscape,
 * Chart.js) are not governed by `style-src` and stay allowed. Skips, saying why, without Chromium
 * (unless FLOWLAB_E2E_REQUIRED=1). Needs no model.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDesignedExperiment } from '../core/api/designedRun.fixture.ts';
import { PRODUCTION_CSP } from '../host/security.ts';
import { ALL_VIEWS } from '../renderer/lib/shortcuts.ts';
import { browserMissing, openLab, REQUIRED, type OpenLab, type ServeProcess } from './harness.ts';

const noBrowser = browserMissing();
if (noBrowser && REQUIRED) throw new Error(`e2e: ${noBrowser} (FLOWLAB_E2E_REQUIRED=1: the browser tests must run here)`);
if (noBrowser) process.stdout.write(`[e2e csp] SKIPPED: ${noBrowser}\n`);

const WAIT = { timeout: 30_000 } as const;
const tid = (id: string) => `[data-testid="${id}"]`;

/** Records every CSP violation the page sees, before any of its scripts run. */
const RECORD_VIOLATIONS = `(() => {
  window.__cspViolations = [];
  document.addEventListener('securitypolicyviolation', (e) => {
    window.__cspViolations.push(e.violatedDirective + ' ' + (e.blockedURI || 'inline') + ' ' + (e.sourceFile || '') + ':' + e.lineNumber);
  });
})();`;

let lab: OpenLab<string>;
let serve: ServeProcess;
let page: Page;
let experiment = '';
const refusals: string[] = [];
let pageErrors: string[] = [];

describe.skipIf(!!noBrowser)('the page under its CSP in Chromium against flowlab serve', () => {
  beforeAll(async () => {
    lab = await openLab((store) => seedDesignedExperiment(store));
    ({ serve, page, pageErrors, seeded: experiment } = lab);
    await page.addInitScript(RECORD_VIOLATIONS);
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) refusals.push(m.text());
    });
  }, 120_000);

  afterAll(() => lab?.close(), 60_000);

  it('is served with the strict policy: no inline scripts, no inline styles', async () => {
    const res = await page.goto(serve.url);
    expect(res?.headers()['content-security-policy']).toBe(PRODUCTION_CSP);
    expect(PRODUCTION_CSP).toContain("style-src 'self';");
    expect(PRODUCTION_CSP).not.toContain('unsafe-inline');
  });

  it('opens every view, a drawn graph included, without one violation', async () => {
    await page.click(tid('nav-trace'));
    await page.selectOption(tid('pick-experiment'), experiment, WAIT);
    await page.click(tid('pick-run-0'), WAIT);
    await page.locator(`${tid('graph')}[data-nodes="3"][data-ready="true"]`).waitFor(WAIT);
    await page.click(tid('trace-row-b'));
    for (const view of ALL_VIEWS) {
      await page.click(tid(`nav-${view}`));
      await page.waitForTimeout(300);
    }
    const violations = await page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations);
    expect(violations).toEqual([]);
    expect(refusals).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 120_000);
});
