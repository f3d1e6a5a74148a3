import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxResult } from '../../core/sandbox/index.ts';
import { ESCAPES, type EscapeAttempt } from './escapes.fixture.ts';
import { PyodideSandbox } from './index.ts';

/** Everything under `dir`: relative path -> size and mtime, to show the host was not touched. */
function listing(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const st = statSync(path.join(dir, name));
    out[name] = `${st.size}:${st.mtimeMs}`;
  }
  return out;
}

/**
 * An attempt's wall-clock limit: the pool's short 2.5 s where the clock is what stops it (or may),
 * and a generous one where a timeout is not a contained outcome. Those attempts must end on their
 * own (an error, a crash, a memory refusal or a clean run); on a loaded machine (two interpreters,
 * a CPU-bound attempt beside them) a 2.5 s clock could end them first and report `timeout` for a
 * machine that was slow.
 */
const wallClockOf = (a: EscapeAttempt): number => (a.status.includes('timeout') ? 2_500 : 60_000);

describe('the escape corpus is contained and the host is untouched', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'flowlab-escape-'));
  const file = path.join(dir, 'sentinel.txt');
  const SENTINEL = 'sentinel: the sandbox must never change this file\n';
  let server: net.Server;
  let port = 0;
  let connections = 0;
  let sandbox: PyodideSandbox;
  let before: Record<string, string>;
  const results = new Map<string, SandboxResult>();

  beforeAll(async () => {
    writeFileSync(file, SENTINEL);
    before = listing(dir);
    server = net.createServer((s) => { connections++; s.destroy(); });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
    sandbox = new PyodideSandbox({ size: 2, timeoutMs: 2_500, memoryMb: 256 });
    await sandbox.warm();
    const fill = (code: string) => code.replaceAll('{{FILE}}', file).replaceAll('{{DIR}}', dir).replaceAll('{{PORT}}', String(port));
    await Promise.all(ESCAPES.map(async (a) => results.set(a.id, await sandbox.run({ code: fill(a.code), timeoutMs: wallClockOf(a) }))));
  }, 300_000);

  afterAll(async () => {
    await sandbox?.close();
    server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('has at least 20 attempts covering every kind of harm', () => {
    expect(ESCAPES.length).toBeGreaterThanOrEqual(20);
    expect(new Set(ESCAPES.map((a) => a.kind))).toEqual(new Set(['read host file', 'write host file', 'spawn process', 'socket', 'memory', 'time', 'recursion', 'native module', 'output', 'js host']));
  });

  it.each(ESCAPES.map((a) => [a.id, a] as const))('%s is contained', (_id, attempt) => {
    const r = results.get(attempt.id)!;
    expect(r.stdout).not.toContain('ESCAPED');
    expect(attempt.status).toContain(r.status);
    if (attempt.error && r.status !== 'ok') expect(`${r.error?.type}: ${r.error?.message}`).toMatch(attempt.error);
  });

  it('leaves the host untouched: the sentinel file and folder, no connection to the host port, the parent alive', () => {
    // The recorded result of every attempt, for docs/sandbox.md.
    const rows = ESCAPES.map((a) => {
      const r = results.get(a.id)!;
      return `${a.id.padEnd(26)} ${r.status.padEnd(12)} ${`${r.error?.type ?? ''}: ${(r.error?.message ?? '').split('\n').pop()!.slice(0, 70)}`.padEnd(84)} ${a.stoppedBy}`;
    });
    console.log(`[escapes] ${ESCAPES.length} attempts, ${sandbox.started} interpreters started\n${rows.join('\n')}`);
    expect(readFileSync(file, 'utf8')).toBe(SENTINEL);
    expect(listing(dir)).toEqual(before);
    expect(connections).toBe(0);
  });

  it('runs on after the corpus with pristine state (the poisoned builtins and math are gone)', async () => {
    const r = await sandbox.run({ code: 'import math\nprint(len([1, 2]), math.sqrt(16.0))' });
    expect(r).toMatchObject({ status: 'ok', stdout: '2 4.0\n' });
  });
});

describe('the corpus can fail: with every layer off, an attempt really escapes', () => {
  it('import js writes the host sentinel when the layers are switched off (measurement only)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'flowlab-escape-off-'));
    const file = path.join(dir, 'sentinel.txt');
    writeFileSync(file, 'untouched');
    const off = { permission: false, noCodeGen: false, jsHardening: false, emptyJsGlobals: false, unregisterJs: false, importGuard: false };
    const sb = new PyodideSandbox({ size: 1, layers: off });
    try {
      const attempt = ESCAPES.find((a) => a.id === 'import-js-fs')!;
      const r = await sb.run({ code: attempt.code.replaceAll('{{FILE}}', file) });
      expect(r).toMatchObject({ status: 'ok', stdout: 'ESCAPED\n' });
      expect(readFileSync(file, 'utf8')).toBe('pwned');
    } finally {
      await sb.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
