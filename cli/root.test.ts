import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './root.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const url = (rel: string) => pathToFileURL(path.join(ROOT, rel)).href;

describe('repoRoot', () => {
  it('finds the folder holding bin/flowlab.js from the sources and from the bundle, at any depth', () => {
    expect(repoRoot(url('cli/workshopRunner.ts'))).toBe(ROOT); // one folder down (was resolved as "..": right only here)
    expect(repoRoot(url('cli/commands/serve.ts'))).toBe(ROOT);
    expect(repoRoot(url('out/cli/chunk-ABC.js'))).toBe(ROOT); // the bundle: "..": from out/cli gave out/, without bin/
  });

  it('falls back to two folders up outside any checkout', () => {
    expect(repoRoot(pathToFileURL('/nowhere/a/b/c.js').href)).toBe(path.resolve('/nowhere'));
  });
});

describe('ensureRenderer', () => {
  it('never builds a renderer named by --renderer, nor one already built', async () => {
    const { ensureRenderer, DEFAULT_RENDERER } = await import('./commands/serve.ts');
    const notes: string[] = [];
    const io = { stdout: () => {}, stderr: (t: string) => void notes.push(t) } as unknown as Parameters<typeof ensureRenderer>[1];
    ensureRenderer('/nowhere/renderer', io, 'serve');
    expect(notes).toEqual([]);
    expect(DEFAULT_RENDERER).toBe(path.join(ROOT, 'out', 'renderer'));
  });
});
