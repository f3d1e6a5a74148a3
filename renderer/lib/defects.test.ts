/**
 * The defects seen while using the lab as a new user, one test each, named after what was seen
 * (pure logic; the layout ones are browser tests in e2e/defects.test.ts).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { WeightVersionView } from '../../core/api/client.ts';
import type { ExperimentLabEvent } from '../../core/api/lab.ts';
import { curveHits, type RouteNode } from './edgeRoutes.ts';
import { emptyNodeIssues, withEditorLints } from './editorLints.ts';
import { workflowElements } from './elements.ts';
import { applyGraphEdit, graphOf } from './graphEdits.ts';
import { graphStyle, traceStateColor } from './graphStyle.ts';
import { rungText } from './ladderBars.ts';
import { lineageRows } from './learning.ts';
import { applyLabEvents, runTally, startLiveRun, tallyText } from './liveRun.ts';
import { countOf, userMessage } from './messages.ts';
import { blameRoleLabel } from './traceModel.ts';

const TEAM = readFileSync(new URL('../../examples/gsm8k-team.yaml', import.meta.url), 'utf8');

const run = (i: number, status: 'completed' | 'failed' | 'cancelled', correct: boolean, total = 300): ExperimentLabEvent => ({
  type: 'run', experimentId: 'e', runId: `r${i}`, taskIndex: i, done: i + 1, total, status, correct,
});

describe('counters that do not add up', () => {
  it('"9 / 300 tasks · ✗ 10 failed" after a cancel: done = correct + wrong + failed + cancelled', () => {
    let live = startLiveRun('e', 300);
    // Nine runs end wrong, then the cancel ends a tenth run; the host's final count says 9 stored.
    live = applyLabEvents(live, [...Array.from({ length: 9 }, (_, i) => run(i, 'completed', false)), run(9, 'cancelled', false)])!;
    live = applyLabEvents(live, [{ type: 'experiment', experimentId: 'e', status: 'cancelled', done: 9, total: 300 }])!;
    const t = runTally(live);
    expect(t).toMatchObject({ done: 10, correct: 0, wrong: 9, failed: 0, cancelled: 1, earlier: 0 });
    expect(t.correct + t.wrong + t.failed + t.cancelled + t.earlier).toBe(t.done);
    expect(tallyText(t)).toBe('10 / 300 runs · ✓ 0 correct · ✗ 9 wrong · ⚠ 0 failed · ⊘ 1 cancelled');
  });

  it('"4/4 · ✓ 1 correct · ✗ 2 failed": the wrong run is counted too', () => {
    let live = startLiveRun('e', 4);
    live = applyLabEvents(live, [run(0, 'completed', true, 4), run(1, 'failed', false, 4), run(2, 'failed', false, 4), run(3, 'completed', false, 4)])!;
    const t = runTally(live);
    expect(t).toMatchObject({ done: 4, total: 4, correct: 1, wrong: 1, failed: 2, cancelled: 0 });
    expect(tallyText(t)).toBe('4 / 4 runs · ✓ 1 correct · ✗ 1 wrong · ⚠ 2 failed · ⊘ 0 cancelled');
  });

  it('runs the host counted before the page watched (a reload mid-run) are "earlier", so the parts still add up', () => {
    const live = { ...startLiveRun('e', 10), done: 6, runsCorrect: 1, runsWrong: 1 };
    expect(runTally(live)).toMatchObject({ done: 6, earlier: 4 });
    expect(tallyText(runTally(live))).toContain('4 earlier');
  });
});

describe('internal names in messages', () => {
  it('"✗ startRun: Model file not found … [BAD_REQUEST]" reads without the method and the code', () => {
    expect(userMessage({ code: 'BAD_REQUEST', message: 'startRun: Model file not found: /m/gone.gguf [BAD_REQUEST]' })).toBe('Model file not found: /m/gone.gguf');
    expect(userMessage({ code: 'BAD_REQUEST', message: 'startRun: Model file not found: /m/gone.gguf' })).toBe('Model file not found: /m/gone.gguf');
  });

  it('"addModel: payload field "path": must be an absolute path" names the field in words', () => {
    expect(userMessage({ code: 'BAD_REQUEST', message: 'addModel: payload field "path": must be an absolute path' })).toBe('The model file path must be an absolute path');
    expect(userMessage({ code: 'BAD_REQUEST', message: 'startRun: payload field "seed": must be at least 0 [BAD_REQUEST seed]' })).toBe('The seed must be at least 0');
  });

  it('a code alone becomes a sentence saying what to do', () => {
    expect(userMessage({ code: 'UNAVAILABLE', message: '' })).toMatch(/cannot be reached.*still running/);
    expect(userMessage({ code: 'UNAVAILABLE', message: 'listModels: [UNAVAILABLE]' })).not.toMatch(/listModels|UNAVAILABLE/);
  });
});

describe('"1 nodes"', () => {
  it('a count takes its noun in the right number', () => {
    expect(countOf(1, 'node')).toBe('1 node');
    expect(countOf(0, 'node')).toBe('0 nodes');
    expect(countOf(2000, 'node')).toBe('2,000 nodes');
  });
});

describe('the silent node\'s border purple in the graph but amber in the legend', () => {
  it('the legend colour of each trace state is the graph stylesheet\'s border colour, in both themes', () => {
    for (const theme of ['light', 'dark'] as const) {
      const sheet = graphStyle(theme) as Array<{ selector: string; style: Record<string, unknown> }>;
      for (const state of ['ok', 'root', 'cascade', 'skipped', 'silent'] as const) {
        expect(sheet.find((r) => r.selector === `node.st-${state}`)!.style['border-color']).toBe(traceStateColor(theme, state));
      }
    }
    // And the CSS variable of the marker and swatch is the same purple, not the SIMULATED amber.
    const css = readFileSync(new URL('../styles.css', import.meta.url), 'utf8');
    expect(css).toMatch(/\.swatch\.st-silent \{[^}]*var\(--silent\)/);
    expect(css).toContain(`--silent: ${traceStateColor('light', 'silent')};`);
    expect(css).toContain(`--silent: ${traceStateColor('dark', 'silent')};`);
  });
});

describe('an edge drawn through an unrelated node', () => {
  it('no edge of gsm8k-team crosses a node other than its ends (solve -> verify passed through calculate)', () => {
    const els = workflowElements(graphOf(TEAM)!);
    const nodes: RouteNode[] = els.filter((e) => e.group === 'nodes').map((n) => ({ id: String(n.data.id), x: n.position!.x, y: n.position!.y, halfW: 60, halfH: 25 }));
    const byId = new Map(nodes.map((n) => [n.id, n]));
    const edges = els.filter((e) => e.group === 'edges' && !String(e.classes).includes('loop'));
    expect(edges.length).toBeGreaterThan(4);
    const crossing = edges.filter((e) => curveHits(byId.get(String(e.data.source))!, byId.get(String(e.data.target))!, Number(e.data.cpd ?? 0), nodes, 0) > 0).map((e) => `${e.data.source}->${e.data.target}`);
    expect(crossing).toEqual([]);
    // The edge that skipped a column is the one bent.
    expect(edges.some((e) => e.data.source === 'solve' && e.data.target === 'verify' && String(e.classes).includes('detour'))).toBe(true);
  });
});

describe('a node added with no prompt and no inputs counts as valid', () => {
  it('is flagged by the editor, with its line, and makes the validation fail', () => {
    const added = applyGraphEdit(TEAM, { op: 'addNode', node: { id: 'extra', kind: 'agent', role: 'solver' } });
    if (!added.ok) throw new Error(added.message);
    const issues = emptyNodeIssues(added.text);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ code: 'MISSING_PORT', path: ['nodes', 5] });
    expect(issues[0]!.message).toMatch(/"extra" has no prompt and no inputs/);
    expect(issues[0]!.line).toBeGreaterThan(70);
    expect(withEditorLints({ ok: true, summary: {} as never }, added.text).ok).toBe(false);
    // The example itself (every node fed) stays valid.
    expect(emptyNodeIssues(TEAM)).toEqual([]);
  });
});

describe('the weight-version list repeats the same hyper-parameter string 20 times', () => {
  it('prints the hyper-parameters once, and again only where they change', () => {
    const version = (i: number, lr: number): WeightVersionView => ({
      id: `wv-${i}`, role: 'solver', basePath: '/b', path: `/v/${i}.gguf`, iteration: i, ...(i > 1 ? { parentId: `wv-${i - 1}` } : {}),
      hyper: { loopId: 'tl', lr, kl: 0.02, group: 8 }, metrics: {}, createdAt: i,
    });
    const rows = lineageRows([...Array.from({ length: 20 }, (_, i) => version(i + 1, 3e-4)), version(21, 1e-4)], 'solver');
    expect(rows.filter((r) => r.hyperChanged).map((r) => r.id)).toEqual(['wv-1', 'wv-21']);
    expect(rows[0]!.hyper).toBe('lr 0.0003 · kl 0.02 · group 8');
  });
});

describe('roles that never ran show rung 0/5 like roles that produced garbage', () => {
  it('a role with no node run or wired is "not reached"; one that ran and scored 0 is rung 0/5', () => {
    expect(rungText({ highestRung: 0, nodesRun: 0, nodesWired: 0 })).toBe('not reached');
    expect(rungText({ highestRung: 0, nodesRun: 2, nodesWired: 0 })).toBe('rung 0/5');
    expect(rungText({ highestRung: 3, nodesRun: 1 })).toBe('rung 3/5');
    // A designer that only wired nodes was reached.
    expect(rungText({ highestRung: 1, nodesRun: 0, nodesWired: 3 })).toBe('rung 1/5');
  });
});

describe('the blame table\'s "human (hand-written wiring, not trainable)" row confuses', () => {
  it('names the row after the workflow file and says what to do', () => {
    const human = blameRoleLabel('human');
    expect(human.name).toBe('the workflow file (wired by hand)');
    expect(human.note).toMatch(/fix the file/);
    expect(`${human.name} ${human.note}`).not.toMatch(/not trainable/);
    expect(blameRoleLabel('solver')).toEqual({ name: 'solver' });
  });
});
