/**
 * `flowlab probe` and endpoint references through the real CLI, without a model: a malformed
 * reference is a usage error naming the flag and the part at fault; an endpoint nobody serves
 * gets "failed" verdicts and exit 1, and nothing is stored.
 */
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../test/cli.ts';
import { scratchDir } from '../test/fixtures.ts';

const dir = scratchDir('probe');

describe('endpoint references on the command line', () => {
  it('run --model with a malformed reference is a usage error naming --model and the fault', async () => {
    const r = await cli(['run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--limit', '1', '--model', 'openai:http://127.0.0.1:9/v1', '--db', path.join(dir(), 'x.db')]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--model: role "planner": endpoint "http:\/\/127\.0\.0\.1:9\/v1" at offset 7 names no model: add #<model-id>/);
  }, 60_000);

  it('probe of an endpoint nobody serves: failed verdicts naming the connection, exit 1, nothing stored', async () => {
    const probes = path.join(dir(), 'probes.json');
    const port = await freePort();
    const r = await cli(['probe', `openai:http://127.0.0.1:${port}/v1#m`, '--no-store'], { ...process.env, FLOWLAB_PROBES: probes });
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/schema {2}schema check failed/);
    expect(r.out).toContain(`schema: failed: cannot reach http://127.0.0.1:${port}/v1: ECONNREFUSED`);
    expect(existsSync(probes)).toBe(false);
  }, 60_000);

  it('probe refuses a malformed endpoint with a usage error', async () => {
    const r = await cli(['probe', 'http://127.0.0.1:9/v1#m&form=xml']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/<endpoint>: option "form=xml" at offset \d+: form is one of json_schema/);
  }, 60_000);
});

/** A loopback port nothing listens on (bound, then released). */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describe('serve-model refuses what is not a GGUF file before it listens', () => {
  it('a missing path, a folder and a text file: exit 2, the file named, nothing served', async () => {
    const r1 = await cli(['serve-model', path.join(dir(), 'absent.gguf'), '--port', '0']);
    expect([r1.code, r1.out]).toEqual([2, '']);
    expect(r1.err).toContain('absent.gguf: cannot be read (ENOENT)');
    const r2 = await cli(['serve-model', dir(), '--port', '0']);
    expect(r2.err).toContain('not a file (serve-model serves GGUF files)');
    const r3 = await cli(['serve-model', path.resolve('README.md'), '--port', '0']);
    expect(r3.code).toBe(2);
    expect(r3.err).toContain('README.md: not a GGUF file (its first bytes are not "GGUF")');
  }, 60_000);
});
