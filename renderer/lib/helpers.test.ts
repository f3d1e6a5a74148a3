import { describe, expect, it } from 'vitest';
import { experimentPoints, failuresByClass, isSimulated, shortId } from './experimentStats.ts';
import { faultSpecs } from './faults.ts';
import { graphOf } from './graphEdits.ts';
import { formatDocPath, issueTargets, lineOf, locateIssues, offsetOf } from './issues.ts';
import { ALL_VIEWS, shortcutFor, SHORTCUTS, viewKeyOf, type KeyPress } from './shortcuts.ts';

const key = (p: Partial<KeyPress>): KeyPress => ({ key: '', code: '', altKey: false, ctrlKey: false, metaKey: false, shiftKey: false, inTextField: false, ...p });

describe('shortcuts', () => {
  it('reaches every view from the keyboard: Alt+0 opens Studies, Alt+[ / Alt+] step through all (Alt+1…9 could not reach Studies or MASS)', () => {
    expect(shortcutFor(key({ altKey: true, code: 'Digit0' }), 'editor')).toEqual({ type: 'view', view: 'studies' });
    expect(shortcutFor(key({ altKey: true, code: 'BracketRight' }), 'studies')).toEqual({ type: 'view', view: 'mass' });
    expect(shortcutFor(key({ altKey: true, code: 'BracketRight' }), 'mass')).toEqual({ type: 'view', view: 'runs' });
    expect(shortcutFor(key({ altKey: true, code: 'BracketRight' }), 'runs')).toEqual({ type: 'view', view: 'editor' });
    expect(shortcutFor(key({ altKey: true, code: 'BracketLeft' }), 'editor')).toEqual({ type: 'view', view: 'runs' });
    // Walking with Alt+] from the Editor visits every view once.
    const seen: string[] = [];
    let v: Parameters<typeof shortcutFor>[1] = 'editor';
    for (let i = 0; i < ALL_VIEWS.length; i++) {
      seen.push(v);
      v = (shortcutFor(key({ altKey: true, code: 'BracketRight' }), v) as { view: typeof v }).view;
    }
    expect([...seen].sort()).toEqual([...ALL_VIEWS].sort());
    expect(viewKeyOf(9)).toBe('Alt+0');
    expect(viewKeyOf(10)).toBe('Alt+[ / Alt+]');
  });

  it('switches views with Alt+digit, even while typing', () => {
    expect(shortcutFor(key({ altKey: true, code: 'Digit3', key: '£', inTextField: true }), 'editor')).toEqual({ type: 'view', view: 'trace' });
    expect(shortcutFor(key({ altKey: true, code: 'Digit6' }), 'run')).toEqual({ type: 'view', view: 'models' });
  });
  it('keeps plain keys for the text field', () => {
    expect(shortcutFor(key({ key: 'Delete', inTextField: true }), 'editor')).toBeNull();
    expect(shortcutFor(key({ key: 'Delete' }), 'editor')).toEqual({ type: 'removeSelected' });
    expect(shortcutFor(key({ key: 'j', inTextField: true }), 'trace')).toBeNull();
    expect(shortcutFor(key({ key: 'j' }), 'trace')).toEqual({ type: 'nextNode', delta: 1 });
  });
  it('scopes view actions to their view', () => {
    expect(shortcutFor(key({ ctrlKey: true, key: 'Enter' }), 'run')).toEqual({ type: 'startRun' });
    expect(shortcutFor(key({ ctrlKey: true, key: 'Enter' }), 'editor')).toBeNull();
    expect(shortcutFor(key({ altKey: true, code: 'KeyN' }), 'editor')).toEqual({ type: 'addNode' });
    expect(shortcutFor(key({ altKey: true, code: 'KeyN' }), 'trace')).toBeNull();
    expect(shortcutFor(key({ key: 'Escape', inTextField: true }), 'trace')).toEqual({ type: 'escape' });
  });
  it('lists in the help exactly the Alt+letter keys it answers, with the view they need', () => {
    const help = SHORTCUTS.filter((s) => /^Alt\+[A-Z]$/.test(s.keys));
    expect(help.map((s) => `${s.keys}: ${s.what}`)).toEqual([
      'Alt+T: switch light / dark theme',
      'Alt+O: open an example workflow (Editor)',
      'Alt+N: add a node (Editor)',
      'Alt+Z: undo the last graph edit (Editor)',
      'Alt+C: cancel the running experiment',
      'Alt+R: refresh lists',
    ]);
    const answered = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'.split('').filter((c) => shortcutFor(key({ altKey: true, code: `Key${c}` }), 'editor') !== null);
    expect(answered.map((c) => `Alt+${c}`).sort()).toEqual(help.map((s) => s.keys).sort());
    expect(SHORTCUTS[0]).toEqual({ keys: 'Alt+1 … Alt+9', what: 'Editor, Run, Trace, Ladder, Experiments, Models, Rollouts, Prior library, Learning' });
  });
});

describe('issues', () => {
  const text = 'name: x\nroles:\n  r: { kind: executor }\nnodes:\n  - { id: a, role: r }\n  - { id: b, role: ghost }\nedges:\n  - { from: a, to: b, condition: "?" }\n';
  it('locates issues on nodes and edges with line:column and path', () => {
    const located = locateIssues([
      { code: 'UNKNOWN_ROLE', path: ['nodes', 1, 'role'], message: 'no role ghost', line: 6, column: 21 },
      { code: 'BAD_CONDITION', path: ['edges', 0, 'condition'], message: 'bad', line: 8 },
      { code: 'SCHEMA', path: [], message: 'x' },
    ], graphOf(text));
    expect(located.map((l) => [l.where, l.pathText, l.nodeId, l.edgeId])).toEqual([
      ['6:21', 'nodes[1].role', 'b', undefined],
      ['8', 'edges[0].condition', undefined, 'edges:edges.0'],
      ['', '', undefined, undefined],
    ]);
    const t = issueTargets(located);
    expect([...t.nodes]).toEqual(['b']);
    expect([...t.edges]).toEqual(['edges:edges.0']);
    expect(formatDocPath(['nodes', 2, 'inputs', 'plan'])).toBe('nodes[2].inputs.plan');
  });
  it('converts line:column to an offset and back', () => {
    const off = offsetOf(text, 5, 5);
    expect(text.slice(off, off + 5)).toBe('{ id:');
    expect(lineOf(text, off)).toBe(5);
    expect(offsetOf(text, 99)).toBe(text.length);
    expect(offsetOf('ab\ncd', 1, 50)).toBe(2);
  });
});

describe('experiment stats', () => {
  it('sums failures by class and spots simulated experiments', () => {
    expect(failuresByClass([{ failures: { wiring: 1, cascade: 2 } }, { failures: { cascade: 1, execution: 4 } }])).toEqual({ wiring: 1, execution: 4, cascade: 3, infrastructure: 0 });
    expect(isSimulated({ kind: 'blame-eval' })).toBe(true);
    expect(isSimulated({ kind: 'run', config: { inject: ['solver=error@1'] } })).toBe(true);
    expect(isSimulated({ kind: 'run', config: {} }, [{ simulated: false }])).toBe(false);
    expect(isSimulated({ kind: 'run', config: null }, [{ simulated: true }])).toBe(true);
  });
  it('builds chart points oldest first', () => {
    const points = experimentPoints(
      [
        { id: 'exp-20250102-101500-ab12', workflowName: 'w', accuracy: 0.5, kind: 'run' },
        { id: 'old', workflowName: 'w', accuracy: null, kind: 'run' },
      ],
      (id) => (id === 'old' ? undefined : [{ failures: { execution: 1 } }]),
    );
    expect(points.map((p) => [p.id, p.label, p.accuracyPct, p.failures?.execution ?? null])).toEqual([
      ['old', 'w · old', null, null],
      ['exp-20250102-101500-ab12', 'w · 0102-1015', 50, 1],
    ]);
    expect(shortId('a-very-long-experiment-name')).toBe('a-very-long-exp…');
  });
});

describe('fault rows', () => {
  it('turns rows into role=kind@rate specs and names bad rows', () => {
    const r = faultSpecs([
      { role: 'solver', kind: 'error', rate: 0.5 },
      { role: 'ghost', kind: 'timeout', rate: 1 },
      { role: 'solver', kind: 'wrong', rate: 2 },
    ], ['solver', 'planner']);
    expect(r.specs).toEqual(['solver=error@0.5']);
    expect(r.problems.map((p) => p.index)).toEqual([1, 2]);
  });
});
