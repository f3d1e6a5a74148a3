/** `flowlab models list` without a model: its table is plain text (no ANSI colour codes) off a terminal. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { capture, scratchDir } from '../../test/fixtures.ts';
import { main } from '../main.ts';

const scratch = scratchDir('models-list');

describe('flowlab models list', () => {
  it('prints its table without colour codes when stdout is not a terminal, naming an unreadable file', async () => {
    const bad = path.join(scratch(), 'bad.gguf');
    writeFileSync(bad, 'junk\n');
    const io = capture();
    expect(await main(['models', 'list', scratch()], io)).toBe(0);
    expect(io.out).not.toMatch(/\x1b\[/);
    const lines = io.out.split('\n');
    expect(lines[1]).toMatch(/^│ file +│ architecture +│ parameters +│ quantisation +│ context +│ chat template +│ size +│$/);
    expect(io.out).toContain(`│ ${bad} │ unreadable: Not a GGUF file: ${bad} (expected the magic "GGUF" at the start) │`);
  });
});
