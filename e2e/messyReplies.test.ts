/**
 * The Trace view of a run against the messy test model (SIMULATED; test/oracle/server.ts), in
 * Chromium against `flowlab serve`: a solver reply whose JSON sat in prose after a `<think>` block
 * and whose call stopped at max_tokens shows both tags and its thinking apart. The run is made
 * through the real service and engine over loopback HTTP before the server starts. Needs the
 * shared GSM8K test split.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExperiment } from '../core/experiments/index.ts';
import type { Store } from '../core/store/index.ts';
import { getDataset } from '../core/tasks/index.ts';
import { defaultTools } from '../core/tools/index.ts';
import { parseWorkflow } from '../core/workflow/index.ts';
import { fileModelPort } from '../models/factory.ts';
import { resolveModels } from '../models/resolve.ts';
import { noteSkip, sharedPath } from '../test/fixtures.ts';
import { serveTestModel } from '../test/oracle/server.ts';
import { browserMissing, openLab, REQUIRED, screenshot, type OpenLab } from './harness.ts';

const noBrowser = browserMissing();
if (noBrowser && REQUIRED) throw new Error(`e2e: ${noBrowser} (FLOWLAB_E2E_REQUIRED=1: the browser tests must run here)`);
if (noBrowser) process.stdout.write(`[e2e messy] SKIPPED: ${noBrowser}\n`);
const haveData = existsSync(sharedPath('data/gsm8k/test.jsonl'));
if (!haveData) noteSkip('e2e messy', 'the messy-reply trace', sharedPath('data/gsm8k/test.jsonl'));

const WAIT = { timeout: 30_000 } as const;
const tid = (id: string) => `[data-testid="${id}"]`;
let lab: OpenLab<string>;
let page: Page;

/** Runs examples/notations/steps.yaml on GSM8K test task 0 against the messy model into `store`. */
async function seed(store: Store): Promise<string> {
  const file = path.resolve('examples/notations/steps.yaml');
  const text = readFileSync(file, 'utf8');
  const tools = defaultTools();
  const graph = parseWorkflow(text, { tools }).graph;
  const dataset = getDataset('gsm8k');
  const tasks = dataset.load({ split: 'test', limit: 1 });
  const server = await serveTestModel({ style: 'messy', tasks });
  try {
    const h = await startExperiment(
      { kind: 'run', workflow: { graph, text, file }, dataset: 'gsm8k', split: 'test', limit: 1, seed: 1, models: resolveModels(graph, { default: server.ref }).config },
      { store, models: fileModelPort(), tools, datasets: () => dataset },
      {},
    );
    return (await h.done).experimentId;
  } finally {
    await server.close();
  }
}

describe.skipIf(!!noBrowser || !haveData)('a messy model\'s run in the Trace view (SIMULATED test model)', () => {
  beforeAll(async () => {
    process.env.FLOWLAB_PROBES ??= path.join(process.cwd(), 'artifacts', 'e2e-probes.json');
    lab = await openLab((store) => seed(store));
    page = lab.page;
  }, 120_000);
  afterAll(() => lab?.close(), 60_000);

  it('the solver node: repaired and cut tags, its thinking apart from the completion', async () => {
    await page.goto(lab.serve.url);
    await page.click(tid('nav-trace'));
    await page.selectOption(tid('pick-experiment'), lab.seeded, WAIT);
    await page.click(tid('pick-run-0'), WAIT);
    await page.click(tid('trace-row-solve'), WAIT);
    const detail = page.locator(tid('node-detail'));
    await detail.waitFor(WAIT);
    await expect(detail.locator(tid('repair-marker')).textContent()).resolves.toBe('repaired: JSON from prose');
    await expect(detail.locator(tid('cut-marker')).textContent()).resolves.toBe('cut at max_tokens');
    await expect(detail.locator(tid('node-thinking')).textContent()).resolves.toContain('Let me work this out step by step.');
    await expect(detail.locator(tid('node-completion')).textContent()).resolves.not.toContain('<think>');
    await screenshot(page, 'trace-messy-repaired');
  });
});
