/**
 * The Learning view's held-out change (issue 29: "held-out changes with the same intervals and tests
 * that `compare` and studies give"): a train loop's held-out before/after evaluations are compared
 * paired, and every figure the view shows equals `flowlab compare <before> <after> --json`, run on
 * the same database. The evaluations are hand-made (SIMULATED runs, no model), with figures worked
 * out by hand: 6 tasks; correct before on tasks 0-1, after on 0-4 (differences 0,0,1,1,1,0: mean
 * +0.5, sign 3/0/3, p = 2·(1/2)^3 = 0.25); the solver's h 0.2 everywhere before, 0.6 on tasks 0-3
 * after (mean +1.6/6, sign 4/0/2, p = 2·(1/2)^4 = 0.125).
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../cli/main.ts';
import type { CompareReport, PairedDelta } from '../../core/api/client.ts';
import { computeWorkflowHash, type Store } from '../../core/store/index.ts';
import { capture, roleLadder, runRecord, tempDir } from '../../test/fixtures.ts';
import { LearningView } from './LearningView.tsx';
import { closeViewStores, renderView, storeLab } from './viewTest.fixture.tsx';

afterEach(closeViewStores);

const YAML = 'name: learn\nsteps: []\n';

function fill(s: Store): void {
  for (const [id, phase, correct, h] of [
    ['exp-heldout-before', 'heldout-before', [0, 1], [0.2, 0.2, 0.2, 0.2, 0.2, 0.2]],
    ['exp-heldout-after', 'heldout-after', [0, 1, 2, 3, 4], [0.6, 0.6, 0.6, 0.6, 0.2, 0.2]],
  ] as const) {
    s.createExperiment({ id, kind: 'run', workflowName: 'learn', workflowYaml: YAML, workflowHash: computeWorkflowHash(YAML), dataset: 'learn-word', split: 'heldout', seed: 3, config: { trainLoop: { loopId: 'tl-1', phase } }, tasks: h.map((_, i) => ({ taskIndex: i, taskId: `t${i}#s0`, input: {}, expected: 'yes' })) });
    h.forEach((reward, i) => {
      const ok = (correct as readonly number[]).includes(i);
      s.saveRun(runRecord(id, i, { taskId: `t${i}#s0`, seed: 3, answer: ok ? 'yes' : `no${i}`, expected: 'yes', score: ok ? 1 : 0, correct: ok, ladder: { solver: roleLadder('solver', reward) } }), []);
    });
  }
  s.weights.save({ id: 'wv-1', role: 'solver', basePath: '/b.gguf', path: '/v/iter-001.gguf', iteration: 1, hyper: { loopId: 'tl-1' }, metrics: { reward: 0.3 }, createdAt: 1 });
}

/** The cells of the view's row `name` of the held-out change table, as text. */
function rowCells(html: string, name: string): string[] {
  const block = html.slice(html.indexOf('data-testid="learning-heldout-change"'));
  const row = new RegExp(`<tr data-testid="compare-row-${name.replace(/[()]/g, '\\$&')}">(.*?)</tr>`).exec(block)?.[1];
  if (!row) throw new Error(`no row ${name} in the held-out change`);
  return [...row.matchAll(/<t[hd][^>]*>(.*?)<\/t[hd]>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, '').trim());
}

/** A paired delta as the window prints it (ExperimentParts.tsx CompareTable). */
const cellsOf = (name: string, d: PairedDelta) => [
  name, d.a.toFixed(3), d.b.toFixed(3), `${d.delta >= 0 ? '+' : '−'}${Math.abs(d.delta).toFixed(3)}`, `[${d.ci.low.toFixed(3)}, ${d.ci.high.toFixed(3)}]`,
  `${d.signTest.positive} / ${d.signTest.negative} / ${d.signTest.ties}`, d.signTest.p.toFixed(4),
];

describe('the Learning view\'s held-out change', () => {
  it('shows each measure\'s paired change with the interval and sign test flowlab compare --json gives', async () => {
    const file = path.join(tempDir('learning-heldout'), 'lab.db');
    const lab = await storeLab(fill, file);
    await lab.getState().loadLearning();
    const html = renderView(lab, <LearningView />);
    expect(html).toContain('flowlab compare exp-heldout-before exp-heldout-after');

    const io = capture();
    expect(await main(['compare', 'exp-heldout-before', 'exp-heldout-after', '--json', '--db', file], io)).toBe(0);
    const cli = JSON.parse(io.out) as CompareReport;
    // The hand figures (see the file's comment), then the window equal to the CLI's JSON, cell by cell.
    expect(cli.pairs).toBe(6);
    expect([cli.score.a, cli.score.b, cli.score.delta]).toEqual([2 / 6, 5 / 6, 0.5]);
    expect(cli.score.signTest).toEqual({ positive: 3, negative: 0, ties: 3, p: 0.25 });
    expect(cli.roles.solver!.delta).toBeCloseTo(1.6 / 6, 12);
    expect(cli.roles.solver!.signTest).toEqual({ positive: 4, negative: 0, ties: 2, p: 0.125 });
    expect(cli.score.ci.low).toBeGreaterThan(0);
    expect(cli.score.ci.high).toBeLessThanOrEqual(1);
    expect(rowCells(html, 'score (accuracy)')).toEqual(cellsOf('score (accuracy)', cli.score));
    expect(rowCells(html, 'h solver')).toEqual(cellsOf('h solver', cli.roles.solver!));
    // The view's numbers are the API's, which are the CLI's (not only the same when printed to 3 decimals).
    const key = Object.keys(lab.getState().heldoutChanges)[0]!;
    const view = lab.getState().heldoutChanges[key]!;
    expect(view.status === 'ready' && { score: view.data.score, roles: view.data.roles, pairs: view.data.pairs }).toEqual({ score: cli.score, roles: cli.roles, pairs: cli.pairs });
  });
});
