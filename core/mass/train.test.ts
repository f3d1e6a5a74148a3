import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/fixtures.ts';
import { sweepDeadTemps } from './train.ts';

describe('sweepDeadTemps', () => {
  it("removes only the target's temp files whose writer process is gone", () => {
    const dir = tempDir('mass-sweep');
    const out = path.join(dir, 'c1-self.gguf');
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!; // exited: its pid names no process
    const names = [`.c1-self.gguf.${dead}.a1b2c3d4.tmp`, `.c1-self.gguf.${process.pid}.00ff00ff.tmp`, `.c1-verifier.gguf.${dead}.a1b2c3d4.tmp`, 'c1-self.gguf', `.c1-self.gguf.${dead}.tmp`];
    for (const n of names) writeFileSync(path.join(dir, n), 'x');
    expect(sweepDeadTemps(out)).toEqual([path.join(dir, names[0]!)]);
    expect(readdirSync(dir).sort()).toEqual(names.slice(1).sort());
    expect(sweepDeadTemps(path.join(dir, 'none', 'x.gguf'))).toEqual([]); // no folder: nothing to sweep
  });
});
