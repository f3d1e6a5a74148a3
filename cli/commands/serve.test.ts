import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../main.ts';
import type { Io } from '../io.ts';
import { parseServeArgs, DEFAULT_PORT } from './serve.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

function capture(): Io & { out: string; err: string } {
  const io = { out: '', err: '', isTTY: false, stdout: (s: string) => void (io.out += s), stderr: (s: string) => void (io.err += s) };
  return io;
}

describe('flowlab serve arguments', () => {
  it('defaults to 127.0.0.1, port 5177, out/renderer', () => {
    const o = parseServeArgs([]);
    expect([o.host, o.port, o.renderer]).toEqual(['127.0.0.1', DEFAULT_PORT, path.join(ROOT, 'out/renderer')]);
    expect(path.isAbsolute(o.models)).toBe(true);
  });

  it('allows private download hosts only when asked', () => {
    expect(parseServeArgs([]).allowPrivateDownloads).toBeUndefined();
    expect(parseServeArgs(['--allow-private-downloads']).allowPrivateDownloads).toBe(true);
  });

  it('refuses a non-loopback host other than 0.0.0.0, and bad ports (exit 2 with usage)', async () => {
    let io = capture();
    expect(await main(['serve', '--host', '192.168.1.5'], io)).toBe(2);
    expect(io.err).toContain('pass --host 0.0.0.0 to share the lab');
    expect(io.err).toContain('Usage: flowlab serve');
    io = capture();
    expect(await main(['serve', '--port', '70000'], io)).toBe(2);
    expect(io.err).toContain('--port must be at most 65535');
    io = capture();
    expect(await main(['serve', '--port', 'x'], io)).toBe(2);
    expect(parseServeArgs(['--host', '0.0.0.0']).host).toBe('0.0.0.0');
  });

  it('a port in use: exit 1 saying how to pick another', async () => {
    const { createServer } = await import('node:net');
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const io = capture();
      const dir = mkdtempSync(path.join(tmpdir(), 'flowlab-serve-'));
      expect(await main(['serve', '--port', String(port), '--db', path.join(dir, 'x.db')], io)).toBe(1);
      expect(io.err).toContain(`port ${port} on 127.0.0.1 is in use: pass --port <n>, or --port 0 for a free one`);
    } finally {
      blocker.close();
    }
  });

  it('is listed in the CLI usage', async () => {
    const io = capture();
    await main(['--help'], io);
    expect(io.out).toMatch(/^\s+serve\s+serve the lab in a browser/m);
  });
});

describe('flowlab serve as a process', () => {
  it('prints the URL on stdout, answers with the token, and stops cleanly on SIGTERM', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'flowlab-serve-'));
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/flowlab.js'), 'serve', '--port', '0', '--db', path.join(dir, 'x.db'), '--renderer', path.join(dir, 'no-renderer'), '--models', dir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (c: Buffer) => void (err += c.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /^(http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64})$/m.exec(out);
        if (m) resolve(m[1]!);
      });
      child.on('exit', (code) => reject(new Error(`serve exited early (${code}): ${err}`)));
    });
    const u = new URL(url);
    expect(Number(u.port)).toBeGreaterThan(0);
    expect(err).toContain('The renderer is not built');
    expect(err).toContain('npm run build');
    const token = u.searchParams.get('token')!;
    const noToken = await fetch(`${u.origin}/api/appInfo`, { method: 'POST' });
    expect(noToken.status).toBe(401);
    const info = await fetch(`${u.origin}/api/appInfo`, { method: 'POST', headers: { 'x-flowlab-token': token } });
    expect(await info.json()).toEqual({ ok: true, result: { version: expect.any(String), dbFile: path.join(dir, 'x.db'), modelDir: dir } });
    const code = await new Promise<number | null>((resolve) => {
      child.on('exit', (c) => resolve(c));
      child.kill('SIGTERM');
    });
    expect(code).toBe(0);
    expect(err).toContain('flowlab serve: stopping');
  });
});
