import { existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loopDebris, loopFolder, sweepLoopFolder } from './recover.ts';

describe('sweepLoopFolder', () => {
  it("removes temp files and unrecorded version files of the loop's role folders, and nothing else", () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'flowlab-sweep-'));
    const role = path.join(dir, 'tl-a', 'writer');
    mkdirSync(role, { recursive: true });
    const kept = path.join(role, 'iter-001.gguf');
    const unrecorded = path.join(role, 'iter-002.gguf');
    const temp = path.join(role, '.iter-003.gguf.123.abcd.tmp');
    const notOurs = path.join(role, 'notes.txt');
    const otherLoop = path.join(dir, 'tl-b', 'writer', '.iter-001.gguf.9.tmp');
    const topLevel = path.join(dir, 'tl-a', 'iter-009.gguf'); // not in a role folder
    mkdirSync(path.dirname(otherLoop), { recursive: true });
    for (const f of [kept, unrecorded, temp, notOurs, otherLoop, topLevel]) writeFileSync(f, 'x');
    const outside = path.join(dir, 'precious.gguf');
    writeFileSync(outside, 'x');
    symlinkSync(outside, path.join(role, 'iter-004.gguf')); // a link is never followed nor removed
    expect(loopDebris(dir, 'tl-a', new Set([kept]))).toEqual({ temps: [temp], unrecorded: [unrecorded] });
    expect(sweepLoopFolder(dir, 'tl-a', new Set([kept]))).toEqual({ temps: [temp], unrecorded: [unrecorded] });
    expect([kept, unrecorded, temp, notOurs, otherLoop, topLevel, outside, path.join(role, 'iter-004.gguf')].map((f) => existsSync(f))).toEqual([true, false, false, true, true, true, true, true]);
    expect(sweepLoopFolder(dir, 'tl-none', new Set())).toEqual({ temps: [], unrecorded: [] }); // no folder: nothing to do
  });

  it('refuses a loop id that is not one folder name', () => {
    for (const id of ['..', '../x', 'a/b', '', '.hidden']) expect(() => loopFolder('/v', id), id).toThrow(/is not a loop id/);
    expect(loopFolder('/v', 'tl-20261201-101010-ab12')).toBe(path.join('/v', 'tl-20261201-101010-ab12'));
  });
});
