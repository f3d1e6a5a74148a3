import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { applyGraphEdit } from './graphEdits.ts';
import { applyDiff, diffSize, diffText, EditDiffConflict, invertDiff, isEditDiff, isEmptyDiff } from './editDiff.ts';

const TEAM = readFileSync(new URL('../../examples/gsm8k-team.yaml', import.meta.url), 'utf8');

describe('edit diffs of the workflow text', () => {
  it('records a changed line as updated [from, to], and only that line', () => {
    const d = diffText('a\nb\nc', 'a\nB\nc');
    expect(d).toEqual({ at: 1, added: {}, updated: { 1: ['b', 'B'] }, removed: {} });
    expect(applyDiff('a\nb\nc', d)).toBe('a\nB\nc');
    expect(applyDiff('a\nB\nc', invertDiff(d))).toBe('a\nb\nc');
  });

  it('records inserted and deleted lines as added and removed, keyed by line index', () => {
    const ins = diffText('a\nc', 'a\nb1\nb2\nc');
    expect(ins).toEqual({ at: 1, added: { 1: 'b1', 2: 'b2' }, updated: {}, removed: {} });
    const del = invertDiff(ins);
    expect(del).toEqual({ at: 1, added: {}, updated: {}, removed: { 1: 'b1', 2: 'b2' } });
    expect(applyDiff('a\nb1\nb2\nc', del)).toBe('a\nc');
  });

  it('round-trips a real graph edit (a node added, then its role set) without keeping the text', () => {
    const added = applyGraphEdit(TEAM, { op: 'addNode', node: { id: 'check', kind: 'agent', role: 'verifier' } });
    if (!added.ok) throw new Error(added.message);
    const d = diffText(TEAM, added.text);
    expect(Object.values(d.added).join('\n')).toContain('- id: check');
    expect(diffSize(d)).toBeLessThan(80); // the two or three new lines, not the 2.5 kB document
    expect(applyDiff(TEAM, d)).toBe(added.text);
    expect(applyDiff(added.text, invertDiff(d))).toBe(TEAM);

    const role = applyGraphEdit(added.text, { op: 'setRole', id: 'answer', role: 'verifier' });
    if (!role.ok) throw new Error(role.message);
    const d2 = diffText(added.text, role.text);
    expect(Object.values(d2.updated)).toEqual([['    role: answerer', '    role: verifier']]);
    // Undo both, newest first, then redo both.
    const back = applyDiff(applyDiff(role.text, invertDiff(d2)), invertDiff(d));
    expect(back).toBe(TEAM);
    expect(applyDiff(applyDiff(back, d), d2)).toBe(role.text);
  });

  it('handles the empty document and a document replaced whole', () => {
    const d = diffText('', 'name: x\nroles: {}');
    expect(d).toEqual({ at: 0, added: { 1: 'roles: {}' }, updated: { 0: ['', 'name: x'] }, removed: {} });
    expect(applyDiff('', d)).toBe('name: x\nroles: {}');
    expect(applyDiff('name: x\nroles: {}', invertDiff(d))).toBe('');
    expect(isEmptyDiff(diffText(TEAM, TEAM))).toBe(true);
  });

  it('refuses a diff made from another text, naming the line', () => {
    const d = diffText('a\nb\nc', 'a\nB\nc');
    expect(() => applyDiff('a\nx\nc', d)).toThrow(EditDiffConflict);
    expect(() => applyDiff('a\nx\nc', d)).toThrow('line 2 reads "x", the edit expected "b"');
    expect(() => applyDiff('a', invertDiff(diffText('a\nc', 'a\nb\nc')))).toThrow(/line 2 reads nothing/);
  });

  it('recognises its own shape read back from storage, and nothing else', () => {
    const d = diffText('a\nb', 'a\nc\nd');
    expect(isEditDiff(JSON.parse(JSON.stringify(d)))).toBe(true);
    expect(isEditDiff({ at: 0, added: {}, updated: { 0: ['x'] }, removed: {} })).toBe(false);
    expect(isEditDiff({ at: -1, added: {}, updated: {}, removed: {} })).toBe(false);
    expect(isEditDiff('a\nb')).toBe(false);
  });
});
