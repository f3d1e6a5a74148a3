import { renderToStaticMarkup } from 'react-dom/server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ExperimentSummary, RunDiffView, RunRecord } from '../../core/api/client.ts';
import { createHandlers, type FlowlabApi } from '../../core/api/index.ts';
import { seedRunDiffPair, VERDICTS } from '../../core/api/runDiff.fixture.ts';
import { openStore, type Store } from '../../core/store/index.ts';
import { gate, hostOver } from '../../test/fixtures.ts';
import { clipAround, diffCandidates, differsText, sideValue } from '../lib/runDiff.ts';
import { createLabStore } from '../state.ts';
import { RunDiffBody } from './RunDiffPanel.tsx';

let store: Store;
let api: FlowlabApi;
let pair: { a: string; b: string };
let view: RunDiffView;

beforeEach(async () => {
  store = openStore(':memory:');
  pair = await seedRunDiffPair(store);
  api = createHandlers({ store, version: 'test' });
  // As the page receives it: across the wire, as JSON.
  view = JSON.parse(JSON.stringify(api.diffRuns(pair))) as RunDiffView;
});
afterEach(() => store.close());

const decode = (html: string) => html.replace(/&quot;/g, '"').replace(/&#x27;/g, "'").replace(/&gt;/g, '>').replace(/&lt;/g, '<').replace(/&amp;/g, '&');
const render = (selected: number | null = null) => decode(renderToStaticMarkup(<RunDiffBody view={view} selected={selected} onSelect={() => {}} />));

describe('the run-diff panel (scripted gsm8k-team pair, SIMULATED model)', () => {
  it('names the first diverging node with both values and highlights its row', () => {
    const html = render();
    expect(html).toMatch(/data-testid="diff-first"[^>]*><strong>First diverging node:<\/strong> <code>verify#1<\/code> <span class="muted">\(agent verifier\)<\/span> — sampled text, <code>call 0 completion<\/code>/);
    expect(html).toContain(`A: <code>${VERDICTS.accept}</code>`);
    expect(html).toContain(`B: <code>${VERDICTS.revise}</code>`);
    expect(html).toMatch(/<tr class="diff-first diff-differs" data-testid="diff-row-verify-1">/);
    expect(html.match(/class="diff-first/g)).toHaveLength(1);
    // The first divergence is behaviour already (no sampling setting differs): not named twice.
    expect(html).not.toContain('data-testid="diff-behaviour"');
    expect(html).toContain('8 node runs aligned: 4 differ (0 only in A, 3 only in B).');
  });

  it('puts the runs side by side: one row per aligned node run, B\'s loop marked as not run in A', () => {
    const html = render();
    const rows = [...html.matchAll(/data-testid="diff-row-([a-z]+-\d)"/g)].map((m) => m[1]);
    expect(rows).toEqual(['plan-1', 'solve-1', 'calculate-1', 'verify-1', 'solve-2', 'answer-1', 'calculate-2', 'verify-2']);
    expect(html).toMatch(/<tr class="diff-only" data-testid="diff-row-solve-2">.*?<td><span class="muted">— not run<\/span><\/td><td>ok<\/td><td class="small">ran in B only<\/td>/);
    expect(html).toMatch(/<tr class="diff-same" data-testid="diff-row-answer-1">/);
  });

  it('opens the first divergence\'s differences by default, another row\'s on request', () => {
    expect(render()).toMatch(/data-testid="diff-detail"[^>]*><h4>verify#1 <span class="muted small">2 differences, in data-flow order<\/span>/);
    const solve2 = view.diff.nodes.findIndex((n) => n.nodeId === 'solve' && n.attempt === 2);
    expect(render(solve2)).toContain('<tr class="selected diff-only" data-testid="diff-row-solve-2">');
    expect(render(solve2)).toMatch(/<h4>solve#2 <span class="muted small">1 difference, in data-flow order<\/span><\/h4><ol><li data-testid="diff-detail-0"><strong>ran in one run only<\/strong> <code>ran<\/code>/);
  });

  it('a run with itself: no divergence', () => {
    view = api.diffRuns({ a: pair.a, b: pair.a });
    expect(render()).toContain('<strong>No divergence:</strong> the 5 node runs are the same');
  });
});

describe('run-diff helpers', () => {
  it('differsText groups by aspect; sideValue shows each side\'s first difference', () => {
    const verify = view.diff.nodes[3]!;
    expect(differsText(verify)).toBe('sampled text (call 0 completion) · output');
    expect([sideValue(verify, 'a'), sideValue(verify, 'b', 20)]).toEqual([VERDICTS.accept, `…${VERDICTS.revise.slice(7, 27)}…`]);
    expect(differsText(view.diff.nodes[4]!)).toBe('ran in B only');
    expect(differsText(view.diff.nodes[5]!)).toBe('same');
  });

  it('clipAround keeps the text around the first difference', () => {
    expect(clipAround(undefined, 0)).toBe('(none)');
    expect(clipAround('short', 2)).toBe('short');
    expect(clipAround('x'.repeat(100) + 'DIFF' + 'y'.repeat(100), 100, 20)).toBe(`…${'x'.repeat(5)}DIFF${'y'.repeat(11)}…`);
  });

  it('diffCandidates: the same task in other experiments of the workflow first, then this experiment\'s other tasks', () => {
    const run = (exp: string, i: number, correct = true) => ({ runId: `${exp}/${i}`, experimentId: exp, taskIndex: i, taskId: `t${i}`, correct }) as RunRecord;
    const exp = (id: string, workflowName: string, seed: number) => ({ id, workflowName, seed }) as ExperimentSummary;
    const groups = diffCandidates(
      run('e1', 1),
      'team',
      [exp('e3', 'team', 3), exp('e2', 'other', 2), exp('e1', 'team', 1), exp('e4', 'team', 4)],
      { e3: { status: 'ready', data: [run('e3', 0), run('e3', 1, false)] }, e2: { status: 'ready', data: [run('e2', 1)] }, e4: { status: 'loading' } },
      [run('e1', 0), run('e1', 1), run('e1', 2, false)],
    );
    expect(groups).toEqual([
      { label: 'Task 1 in other experiments of team', runs: [{ runId: 'e3/1', label: 'e3 · task 1 · seed 3 · ✗' }] },
      { label: 'Other tasks of this experiment', runs: [{ runId: 'e1/0', label: 'task 0 (t0) · ✓' }, { runId: 'e1/2', label: 'task 2 (t2) · ✗' }] },
    ]);
  });
});

describe('the diff slice', () => {
  it('openDiff loads the diff of the pair; closeDiff clears it; a late answer for a left pair is dropped', async () => {
    const client = hostOver(api);
    const slow = gate();
    const lab = createLabStore({ ...client, diffRuns: async (p) => (p.b === pair.b ? slow.wait.then(() => client.diffRuns(p)) : client.diffRuns(p)) });
    const first = lab.getState().openDiff(pair.a, pair.b);
    expect(lab.getState().runDiff.status).toBe('loading');
    await lab.getState().openDiff(pair.a, pair.a);
    slow.open();
    await first;
    const d = lab.getState().runDiff;
    expect(lab.getState().diffPair).toEqual({ a: pair.a, b: pair.a });
    expect(d.status === 'ready' && d.data.diff.same).toBe(true);
    lab.getState().closeDiff();
    expect([lab.getState().diffPair, lab.getState().runDiff.status]).toEqual([null, 'idle']);
  });
});
