/**
 * Every evaluation the CLI prints, in the window (issue 29), in Debian Chromium against `flowlab
 * serve`: a blame evaluation run by the real CLI (`flowlab blame-eval --json`, the tiny shared
 * model stories260K with SIMULATED faults in three roles) is opened in the Experiments view, and
 * every figure of its evaluation panel (precision, recall, injected, blamed per role; per fault
 * kind; cascades, unseen faults, natural failures) equals the CLI's JSON. The Ladder view's
 * trends per role chart that experiment beside three hand-made ones (test/fixtures.ts
 * `seedRoleTrends`, SIMULATED rows with figures worked out by hand): each role's mean h and runs
 * blamed per experiment, equal to the hand figures and to `flowlab show <id> --json`'s per-role
 * `reward` and `blamed`. Skips, saying why, without Chromium or the shared model and data.
 */
import { spawnSync } from 'node:child_process';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BlameEvalView } from '../core/api/client.ts';
import { seedRoleTrends } from '../test/fixtures.ts';
import { browserMissing, openLab, REQUIRED, ROOT, screenshot, SHARED, sharedMissing, TINY_MODEL, type OpenLab } from './harness.ts';

const noBrowser = browserMissing();
const noShared = sharedMissing();
if (noBrowser && REQUIRED) throw new Error(`e2e: ${noBrowser} (FLOWLAB_E2E_REQUIRED=1: the browser tests must run here)`);
const skip = noBrowser ?? noShared;
if (skip) process.stdout.write(`[e2e evaluations] SKIPPED: ${skip}\n`);

const WAIT = { timeout: 30_000 } as const;
const tid = (id: string) => `[data-testid="${id}"]`;
/** Faults in three roles: one the structure cannot see (wrong), two it can (error, malformed). */
const INJECT = ['solver=wrong@0.5', 'planner=error@0.4', 'verifier=malformed@0.5'];

let lab: OpenLab<BlameEvalView>;
let page: Page;

describe.skipIf(!!skip)('the Experiments view shows a blame evaluation as flowlab blame-eval prints it', () => {
  beforeAll(async () => {
    lab = await openLab((store, ws) => {
      const args = ['bin/flowlab.js', 'blame-eval', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--limit', '8', '--model', TINY_MODEL, '--threads', '1', '--json', '--db', ws.db];
      for (const i of INJECT) args.push('--inject', i);
      const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', env: { ...process.env, FLOWLAB_SHARED: SHARED }, timeout: 120_000 });
      if (r.status !== 0) throw new Error(`flowlab blame-eval failed (exit ${r.status}):\n${r.stderr}`);
      const view = JSON.parse(r.stdout) as BlameEvalView;
      seedRoleTrends(store);
      return view;
    });
    page = lab.page;
    await page.goto(lab.serve.url);
  }, 180_000);

  afterAll(async () => {
    await lab?.close();
  }, 60_000);

  it('every figure of the panel equals the CLI\'s JSON', async () => {
    const cli = lab.seeded;
    // The run the test stands on: faults in every role, one kind unseen by structure.
    expect(cli.runs).toBe(8);
    expect(Object.keys(cli.byRole).sort()).toEqual(['planner', 'solver', 'verifier']);
    expect(cli.unseen).toBe(cli.byKind.wrong!.injected);
    await page.click(tid('nav-experiments'));
    await page.click(tid(`open-blame-eval-${cli.experimentId}`), WAIT);
    await page.locator(`${tid('blame-eval-report')}[data-runs="${cli.runs}"]`).waitFor(WAIT);
    const value = (id: string) => page.locator(tid(id)).getAttribute('data-value');
    const text = async (id: string) => (await page.locator(tid(id)).textContent())?.trim();
    const asCli = (x: number | null) => (x === null ? '-' : x.toFixed(2));
    for (const [role, v] of Object.entries(cli.byRole)) {
      for (const f of ['precision', 'recall', 'injected', 'blamed'] as const) expect([role, f, await value(`blame-eval-role-${role}-${f}`)]).toEqual([role, f, String(v[f])]);
      expect(await text(`blame-eval-role-${role}-precision`)).toBe(asCli(v.precision));
      expect(await text(`blame-eval-role-${role}-recall`)).toBe(asCli(v.recall));
    }
    const injectedKinds = Object.entries(cli.byKind).filter(([, v]) => v.injected > 0);
    expect(await page.locator(`${tid('blame-eval-kinds')} tbody tr`).count()).toBe(injectedKinds.length);
    for (const [kind, v] of injectedKinds) {
      for (const f of ['precision', 'recall', 'injected', 'surfaced'] as const) expect([kind, f, await value(`blame-eval-kind-${kind}-${f}`)]).toEqual([kind, f, String(v[f])]);
    }
    expect(await value('blame-eval-cascades')).toBe(`${cli.cascadesNotBlamed}/${cli.cascadesTotal}`);
    expect(await value('blame-eval-unseen')).toBe(`${cli.unseen}/${cli.unseenShare}`);
    expect(await value('blame-eval-natural')).toBe(`${cli.natural.roots}/${cli.natural.ambiguous}/${cli.natural.infrastructure}`);
    expect(await text('blame-eval-command')).toContain(`npm run flowlab -- show ${cli.experimentId} --db`);
    await screenshot(page, 'experiments-blame-eval');
  });

  it('charts each role across experiments with the figures flowlab show prints', async () => {
    const cli = lab.seeded;
    await page.click(tid('nav-ladder'));
    await page.locator(tid('role-trends')).waitFor(WAIT);
    await page.locator(tid('role-trends-key')).waitFor(WAIT);
    // The key names every experiment by workflow, kind, date and id, oldest first (the CLI's blame evaluation was made first).
    const key = await page.locator(`${tid('role-trends-key')} li`).allTextContents();
    expect(key.map((k) => k.split(' · ').at(-1))).toEqual([cli.experimentId, 'exp-trend-1', 'exp-trend-2', 'exp-trend-3']);
    expect(key[1]).toMatch(/^gsm8k-team · run · \d{4}-\d\d-\d\d \d\d:\d\d/);
    expect(key[2]).toMatch(/^gsm8k-team · blame-eval \(SIMULATED faults\) · /);
    const h = (role: string, exp: string) => page.locator(tid(`role-trend-${role}-${exp}-h`)).getAttribute('data-value');
    const blamed = (role: string, exp: string) => page.locator(tid(`role-trend-${role}-${exp}-blamed`)).getAttribute('data-value');
    // The hand-made experiments: figures by hand (test/fixtures.ts seedRoleTrends).
    const hand: Array<[string, string, number, string]> = [
      ['solver', 'exp-trend-1', 0.5, '1/4'], ['planner', 'exp-trend-1', 1, '0/4'],
      ['solver', 'exp-trend-2', -0.2, '2/2'], ['planner', 'exp-trend-2', 0.6, '1/2'],
      ['solver', 'exp-trend-3', 0.95, '0/2'],
    ];
    for (const [role, exp, mean, b] of hand) {
      expect(Number(await h(role, exp))).toBeCloseTo(mean, 12);
      expect(await blamed(role, exp)).toBe(b);
    }
    expect(await page.locator(tid('role-trend-planner-exp-trend-3')).count()).toBe(0);
    // The CLI's experiment: what `flowlab show <id> --json` prints per role.
    const show = spawnSync(process.execPath, ['bin/flowlab.js', 'show', cli.experimentId, '--json', '--db', lab.ws.db], { cwd: ROOT, encoding: 'utf8' });
    expect(show.status).toBe(0);
    const roles = (JSON.parse(show.stdout) as { report: { runs: number; roles: Record<string, { reward: number; blamed: number }> } }).report;
    expect(Object.keys(roles.roles).length).toBeGreaterThan(0);
    for (const [role, r] of Object.entries(roles.roles)) {
      expect(Number(await h(role, cli.experimentId))).toBeCloseTo(r.reward, 12);
      expect(await blamed(role, cli.experimentId)).toBe(`${r.blamed}/${roles.runs}`);
    }
    await page.locator(tid('role-trends')).scrollIntoViewIfNeeded();
    await screenshot(page, 'ladder-role-trends');
    // Leaving the Experiments view with the panel open crashed the page (an effect returned scrollIntoView's Promise).
    expect(lab.pageErrors).toEqual([]);
  });

  it('labels the Experiments chart\'s points apart, in the table\'s order (every point read "gsm8k-team / gsm8k", oldest first)', async () => {
    await page.click(tid('nav-experiments'));
    const chart = page.locator(`${tid('experiments-chart')}[data-points="4"]`);
    await chart.waitFor(WAIT);
    const labels = JSON.parse((await chart.getAttribute('data-labels'))!) as string[][];
    const rows = await page.locator('[data-testid^="experiment-row-"]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-testid')!.slice('experiment-row-'.length)));
    expect(rows).toHaveLength(4);
    // The same experiments in the same order, each label ending with its id.
    expect(labels.map((l) => l.at(-1))).toEqual(rows);
    expect(new Set(labels.map((l) => l.join(' '))).size).toBe(4);
    // Three of them are gsm8k-team on gsm8k: the second line (kind and date) and the id tell them apart.
    expect(labels.filter((l) => l[0] === 'gsm8k-team / gsm8k')).toHaveLength(3);
    expect(labels.map((l) => l[1]!.split(' · ')[0])).toEqual(['run', 'blame-eval (SIMULATED faults)', 'run', 'blame-eval (SIMULATED faults)']);
  });

  it('the Learning form shows the workflow and models it trains and takes lr, KL, temperature, entropy and SFT with its pool (it lacked them and took both silently)', async () => {
    await page.click(tid('nav-learning'));
    await page.click(`${tid('train-loop-panel')} > summary`);
    await expect(page.locator(tid('loop-workflow')).textContent()).resolves.toContain('none open');
    // Open a workflow and choose a model: both named in the form.
    await page.click(tid('nav-editor'));
    await page.locator(`${tid('example-select')} option[value="examples/gsm8k-team.yaml"]`).waitFor({ state: 'attached', ...WAIT });
    await page.selectOption(tid('example-select'), 'examples/gsm8k-team.yaml');
    await page.click(tid('example-open'));
    await page.locator(`${tid('validation')}[data-valid="true"]`).waitFor(WAIT);
    await page.click(tid('nav-run'));
    await page.waitForFunction((sel) => [...(document.querySelector(sel) as HTMLSelectElement | null)?.options ?? []].some((o) => o.text.trim().startsWith('stories260K.gguf')), tid('default-model'), WAIT);
    const model = await page.locator(tid('default-model')).evaluate((el) => [...(el as HTMLSelectElement).options].find((o) => o.text.trim().startsWith('stories260K.gguf'))!.value);
    await page.selectOption(tid('default-model'), model);
    await page.click(tid('nav-learning'));
    // The panel opens closed again after a view change.
    await page.locator(tid('train-loop-panel')).evaluate((d) => ((d as HTMLDetailsElement).open = true));
    await expect(page.locator(tid('loop-workflow')).textContent()).resolves.toContain('gsm8k-team');
    await expect(page.locator(tid('loop-models')).textContent()).resolves.toContain('default stories260K.gguf');
    // The policy step's fields, then SFT: the printed command follows (the CLI's flags).
    await page.fill(tid('loop-lr'), '0.001');
    await page.fill(tid('loop-kl'), '0.05');
    await page.fill(tid('loop-temperature'), '0.7');
    let command = (await page.locator(tid('loop-command')).textContent()) ?? '';
    // The entropy bonus is off (0) by default and then left out, as the CLI's default.
    expect(command).not.toContain('--entropy');
    await page.fill(tid('loop-entropy'), '0.01');
    expect(await page.locator(tid('loop-sft-steps')).isDisabled()).toBe(true);
    expect(await page.locator(tid('loop-sft-pool')).isDisabled()).toBe(true);
    command = (await page.locator(tid('loop-command')).textContent()) ?? '';
    expect(command).toContain('--lr 0.001 --kl 0.05 --temperature 0.7 --entropy 0.01');
    expect(command).not.toContain('--sft');
    await page.fill(tid('loop-warm-start'), '2');
    await page.check(tid('loop-sft-mix'));
    await page.fill(tid('loop-sft-steps'), '3');
    await page.check(tid('loop-sft-role-solver'));
    await page.fill(tid('loop-sft-pool'), '8');
    command = (await page.locator(tid('loop-command')).textContent()) ?? '';
    expect(command).toContain('--warm-start 2 --sft-mix --sft-steps 3 --sft-lr 0.001 --sft-roles solver --sft-pool 8');
    expect(await page.locator(tid('loop-start')).isEnabled()).toBe(true);
    await screenshot(page, 'learning-form');
  });
});
