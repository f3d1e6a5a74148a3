/**
 * Annotations in the window (issue 29, "a person can score or tag a run and a node (stored,
 * exported, filterable)"), in Debian Chromium against `flowlab serve`: a run is opened from the Runs
 * table, scored and tagged in the Trace view, one of its nodes tagged, a bad tag refused naming the
 * field; the page is reloaded and the Runs table's tag filter finds the run with its tags, its trace
 * lists both annotations; the panel's JSON download equals `flowlab annotations <experiment> --json`
 * and `flowlab export --format jsonl` writes them. The runs are hand-made (examples/gsm8k-single.yaml,
 * three stored runs, no model), so it needs only Chromium; skips, saying why, without it.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeWorkflowHash } from '../core/store/index.ts';
import { agentEvent, modelCall, newExperiment, runRecord } from '../test/fixtures.ts';
import { browserMissing, openLab, REQUIRED, ROOT, screenshot, type OpenLab } from './harness.ts';

const noBrowser = browserMissing();
if (noBrowser && REQUIRED) throw new Error(`e2e: ${noBrowser} (FLOWLAB_E2E_REQUIRED=1: the browser tests must run here)`);
if (noBrowser) process.stdout.write(`[e2e annotations] SKIPPED: ${noBrowser}\n`);

const WAIT = { timeout: 60_000 } as const;
const tid = (id: string) => `[data-testid="${id}"]`;
const EXP = 'exp-annotate';

let lab: OpenLab<null>;
let page: Page;

/** `flowlab <args> --db <the served database>`: exit code and stdout. */
function cli(args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, ['bin/flowlab.js', ...args, '--db', lab.ws.db], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** Opens run `runId` from the Runs table (the rows of experiment EXP, by task). */
async function openRun(runId: string): Promise<void> {
  await page.click(tid('nav-runs'));
  await page.selectOption(tid('runs-experiment'), EXP, WAIT);
  await page.locator(`[data-run="${runId}"]`).click(WAIT);
  await page.locator(tid('annotations')).waitFor(WAIT);
}

describe.skipIf(!!noBrowser)('annotations: made in the Trace view, reloaded, filtered, exported', () => {
  beforeAll(async () => {
    lab = await openLab((store) => {
      const yaml = readFileSync(path.join(ROOT, 'examples/gsm8k-single.yaml'), 'utf8');
      store.createExperiment(newExperiment({ id: EXP, workflowName: 'gsm8k-single', workflowYaml: yaml, workflowHash: computeWorkflowHash(yaml) }));
      for (const i of [0, 1, 2]) {
        const r = runRecord(EXP, i, { correct: i === 0, score: i === 0 ? 1 : 0, answer: i === 0 ? '4' : '5', startedAt: Date.UTC(2026, 11, 1) + 1000 * i, endedAt: Date.UTC(2026, 11, 1) + 1000 * i + 300 });
        store.saveRun(r, [agentEvent(r.runId, 'solve', 'solver', [modelCall({ completion: `{"answer": "${r.answer}"}` })], { output: { answer: r.answer } })]);
      }
      store.finishExperiment(EXP, 'completed');
      return null;
    });
    page = lab.page;
    await page.goto(lab.serve.url);
  }, 180_000);

  afterAll(async () => {
    await lab?.close();
  }, 60_000);

  it('scores and tags the run and its node, refuses a bad tag by field, and keeps them across a reload', async () => {
    await openRun(`${EXP}-r1`);
    await expect(page.locator(tid('annotations')).textContent()).resolves.toContain('No one has scored or tagged this run yet.');
    // The whole run.
    await page.fill(tid('annotation-score'), '0.25');
    await page.fill(tid('annotation-tags'), 'silent, arith');
    await page.fill(tid('annotation-note'), 'right plan, wrong sum');
    await page.fill(tid('annotation-author'), 'ada');
    await page.click(tid('annotation-save'));
    const runNote = page.locator('[data-testid^="annotation-ann-"][data-node=""]');
    await runNote.waitFor(WAIT);
    await expect(runNote.locator(tid('annotation-text')).textContent()).resolves.toBe('score 0.25 · arith, silent · “right plan, wrong sum”');
    // A bad tag: refused, the field named, nothing stored.
    await page.fill(tid('annotation-tags'), 'ok bad!');
    await page.click(tid('annotation-save'));
    await expect(page.locator(tid('annotation-error')).textContent({ timeout: 30_000 })).resolves.toMatch(/addAnnotation: payload field "tags\.1": a tag is letters, digits and - _ \. : \/ \(no spaces\)/);
    // The selected node: the form follows it.
    await page.click(tid('trace-row-solve'));
    await expect(page.locator(tid('annotation-target')).inputValue()).resolves.toBe('solve');
    await page.fill(tid('annotation-tags'), 'extraction');
    await page.click(tid('annotation-save'));
    const nodeNote = page.locator('[data-testid^="annotation-ann-"][data-node="solve"]');
    await nodeNote.waitFor(WAIT);
    await expect(nodeNote.locator(tid('annotation-text')).textContent()).resolves.toBe('extraction');
    await expect(page.locator(tid('annotation-error')).count()).resolves.toBe(0);
    await screenshot(page, 'trace-annotations');

    // Reload: the page starts again from the server; both are stored.
    await page.reload();
    await page.click(tid('nav-runs'));
    await page.fill(tid('runs-tag'), 'silent');
    await page.press(tid('runs-tag'), 'Enter');
    await page.waitForFunction((sel) => document.querySelector(sel)?.textContent?.trim() === '1 run', tid('runs-total'), WAIT);
    const row = page.locator(`[data-run="${EXP}-r1"]`);
    await expect(row.locator(tid('runs-tags')).textContent()).resolves.toBe('arith, extraction, silent');
    await page.fill(tid('runs-tag'), 'extraction');
    await page.press(tid('runs-tag'), 'Enter');
    await page.waitForFunction((sel) => document.querySelector(sel)?.textContent?.trim() === '1 run', tid('runs-total'), WAIT);
    await row.click();
    await page.locator('[data-testid^="annotation-ann-"][data-node="solve"]').waitFor(WAIT);
    await expect(page.locator('[data-testid^="annotation-ann-"]').count()).resolves.toBe(2);
  });

  it('exports them: the panel\'s JSON download equals flowlab annotations --json, and flowlab export writes them', async () => {
    const listed = cli(['annotations', EXP, '--json']);
    expect(listed.code, listed.err).toBe(0);
    const stored = JSON.parse(listed.out) as Array<{ id: string; runId: string; nodeId?: string; score?: number; tags: string[]; note: string; author: string }>;
    expect(stored.map((a) => [a.runId, a.nodeId ?? null, a.score ?? null, a.tags, a.note, a.author])).toEqual([
      [`${EXP}-r1`, null, 0.25, ['arith', 'silent'], 'right plan, wrong sum', 'ada'],
      [`${EXP}-r1`, 'solve', null, ['extraction'], '', 'ada'],
    ]);
    const [download] = await Promise.all([page.waitForEvent('download', WAIT), page.click(tid('annotations-download'))]);
    expect(download.suggestedFilename()).toBe(`annotations-${EXP}.json`);
    const file = await download.path();
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(stored);

    const out = path.join(lab.ws.dir, 'export');
    const ex = cli(['export', EXP, '--format', 'jsonl', '--out', out, '--json']);
    expect(ex.code, ex.err).toBe(0);
    expect(JSON.parse(ex.out)).toMatchObject({ annotations: 2 });
    const rows = readFileSync(path.join(out, 'annotations.jsonl'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { annotation_id: string; node_id?: string; tags: string[] });
    expect(rows.map((r) => [r.annotation_id, r.node_id ?? null, r.tags])).toEqual(stored.map((a) => [a.id, a.nodeId ?? null, a.tags]));
    expect(lab.pageErrors).toEqual([]);
  });
});
