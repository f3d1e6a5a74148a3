/**
 * bin/flowlab.js's code cache for out/cli/vendor.cjs (loadVendor): run against a stand-in bundle
 * in a temporary folder (the bin copied there, a main.js that reports what vendor.cjs gives it).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const BIN = path.resolve(import.meta.dirname, '../bin/flowlab.js');

let root = '';
const cacheDir = () => path.join(root, 'out/cli/cache');

function writeVendor(answer: number): void {
  writeFileSync(path.join(root, 'out/cli/vendor.cjs'), `exports.answer = ${answer}; exports.twice = (n) => n * 2;\n`);
}

function run(...args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [path.join(root, 'bin/flowlab.js'), ...args], { encoding: 'utf8', env: { ...process.env, FLOWLAB_DEV: '' } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'flowlab-bin-cache-'));
  mkdirSync(path.join(root, 'bin'));
  mkdirSync(path.join(root, 'out/cli'), { recursive: true });
  copyFileSync(BIN, path.join(root, 'bin/flowlab.js'));
  writeFileSync(path.join(root, 'out/cli/package.json'), '{ "type": "module" }\n');
  writeFileSync(path.join(root, 'out/cli/sources.txt'), '');
  writeFileSync(path.join(root, 'out/cli/main.js'), [
    'export async function main(argv) {',
    "  const v = globalThis[Symbol.for('flowlab.vendor')]();",
    "  process.stdout.write(`${argv[0]} ${v.answer} ${v.twice(v.answer)}\\n`);",
    '  return 3;',
    '}',
  ].join('\n'));
  writeVendor(41);
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('bin/flowlab.js vendor code cache', () => {
  it('writes one cache per command on the first run and reuses it after', () => {
    expect(run('replay')).toEqual({ code: 3, out: 'replay 41 82\n', err: '' });
    const files = readdirSync(cacheDir());
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(new RegExp(`^vendor-replay-[0-9a-f]{20}-${process.version.replace(/\./g, '\\.')}-${process.arch}\\.bin$`));
    const written = statSync(path.join(cacheDir(), files[0]!)).mtimeMs;
    expect(run('replay')).toEqual({ code: 3, out: 'replay 41 82\n', err: '' });
    expect(statSync(path.join(cacheDir(), files[0]!)).mtimeMs).toBe(written);
    expect(run('--help').out).toBe('--help 41 82\n');
    expect(readdirSync(cacheDir()).sort()).toEqual([files[0], files[0]!.replace('vendor-replay-', 'vendor-other-')].sort());
  });

  it('never runs a stale cache: an edit of the same length gets its own', () => {
    run('replay');
    writeVendor(57); // same text length: V8's own check alone would accept the old cache
    expect(run('replay')).toEqual({ code: 3, out: 'replay 57 114\n', err: '' });
    expect(readdirSync(cacheDir())).toHaveLength(2);
  });

  it('writes no more caches once the folder holds 48 files', () => {
    mkdirSync(cacheDir());
    for (let i = 0; i < 48; i++) writeFileSync(path.join(cacheDir(), `vendor-typo${i}.bin`), '');
    expect(run('replay')).toEqual({ code: 3, out: 'replay 41 82\n', err: '' });
    expect(readdirSync(cacheDir()).filter((f) => f.startsWith('vendor-replay-'))).toEqual([]);
  });

  it('runs without a cache where none can be written', () => {
    writeFileSync(cacheDir(), 'not a folder'); // mkdir fails, as in a read-only install
    expect(run('replay')).toEqual({ code: 3, out: 'replay 41 82\n', err: '' });
    expect(run('replay')).toEqual({ code: 3, out: 'replay 41 82\n', err: '' });
  });
});
