import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../test/fixtures.ts';
import { cli, haveShared, tinyModel } from '../test/cli.ts';

const args = (db: string, out: string) => ['train-optimizer', 'learn-design', '--model', tinyModel, '--threads', '1', '--states', '2', '--samples', '3', '--tasks', '2', '--sft-passes', '2', '--db', db, '--out', out, '--json'];
const sha = (f: string) => createHash('sha256').update(readFileSync(f)).digest('hex');

describe.skipIf(!haveShared)('flowlab train-optimizer on stories260K (learn-design)', () => {
  it('every proposal is a valid edit; the same command into a fresh store gives the same proposals, the same kept set and the same weights', async () => {
    const dir = tempDir('train-optimizer');
    const a = await cli(args(path.join(dir, 'a.db'), path.join(dir, 'a.gguf')));
    expect(a.code, a.err).toBe(0);
    const ra = JSON.parse(a.out);
    expect(ra.proposals).toHaveLength(6);
    // The grammar of the valid new edits: every reply is one of them.
    expect(ra.valid).toBe(6);
    for (const p of ra.proposals) expect(p.kept).toBe(Number.isFinite(p.gain) && p.gain >= 0.1);
    const b = await cli(args(path.join(dir, 'b.db'), path.join(dir, 'b.gguf')));
    expect(b.code, b.err).toBe(0);
    const rb = JSON.parse(b.out);
    expect(rb.proposals).toEqual(ra.proposals);
    if (ra.kept > 0) {
      // The kept calls are trained on (their chosen tokens only) and the weights written, bit for bit the same.
      expect(ra.sft.sequences).toBe(ra.kept);
      expect(ra.chosenTokens).toBeGreaterThan(0);
      expect(sha(path.join(dir, 'a.gguf'))).toBe(sha(path.join(dir, 'b.gguf')));
    } else {
      expect(existsSync(path.join(dir, 'a.gguf'))).toBe(false);
    }
  }, 600_000);
});
