import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxError } from '../../core/sandbox/index.ts';
import { PyodideSandbox, workerArgs } from './index.ts';

describe('workerArgs', () => {
  it('grants read access to the pyodide folder only, no code generation, a heap cap', () => {
    expect(workerArgs('/opt/pyodide', 128, '20.18.0')).toEqual([
      '--experimental-permission', '--allow-fs-read=/opt/pyodide/', '--disallow-code-generation-from-strings',
      '--max-old-space-size=128', '--no-warnings',
    ]);
    expect(workerArgs('/opt/pyodide', 128, '24.1.0')[0]).toBe('--permission');
  });
});

describe('PyodideSandbox', () => {
  let sb: PyodideSandbox;
  beforeAll(async () => {
    sb = new PyodideSandbox({ size: 1, timeoutMs: 3_000 });
    await sb.warm();
  }, 120_000);
  afterAll(async () => { await sb?.close(); });

  it('runs a program and returns its output', async () => {
    const r = await sb.run({ code: 'import sys\nprint(sum(range(10)))\nprint("warn", file=sys.stderr)' });
    expect(r).toMatchObject({ status: 'ok', stdout: '45\n', stderr: 'warn\n' });
    expect(r.error).toBeUndefined();
    expect(r.ms).toBeGreaterThan(0);
  });

  it('reports an exception as error with its type, and exit statuses', async () => {
    expect(await sb.run({ code: 'assert 1 == 2, "nope"' })).toMatchObject({ status: 'error', error: { type: 'AssertionError', message: 'AssertionError: nope' } });
    expect((await sb.run({ code: 'import sys\nsys.exit(0)' })).status).toBe('ok');
    expect(await sb.run({ code: 'import sys\nsys.exit(3)' })).toMatchObject({ status: 'error', error: { type: 'SystemExit', message: 'exit status 3' } });
    expect(await sb.run({ code: 'def f(:\n  pass' })).toMatchObject({ status: 'error', error: { type: 'SyntaxError' } });
  });

  it('gives each run fresh globals: nothing a run defines is seen by the next', async () => {
    await sb.run({ code: 'secret = 42\nimport builtins\nbuiltins.leak = 1\nimport sys\nsys.path.append("/x")' });
    const r = await sb.run({ code: 'import sys\nprint("secret" in globals(), hasattr(__builtins__, "leak") if not isinstance(__builtins__, dict) else "leak" in __builtins__, "/x" in sys.path)' });
    expect(r.stdout).toBe('False False False\n');
  });

  it('replaces a worker whose standard module a run changed, so the next run sees the original', async () => {
    const started = sb.started;
    expect((await sb.run({ code: 'import math\nmath.pi = 3' })).status).toBe('ok');
    expect(sb.started).toBe(started + 1);
    expect((await sb.run({ code: 'import math\nprint(math.pi)' })).stdout).toBe('3.141592653589793\n');
  });

  it('kills a run past its wall-clock limit, scores it timeout, and runs on with a fresh worker', async () => {
    const started = sb.started;
    const r = await sb.run({ code: 'while True:\n    pass', timeoutMs: 300 });
    expect(r).toMatchObject({ status: 'timeout', error: { type: 'Timeout', message: 'killed after 300 ms' } });
    expect(r.ms).toBeGreaterThanOrEqual(300);
    expect(sb.started).toBe(started + 1);
    expect(await sb.run({ code: 'print("next")' })).toMatchObject({ status: 'ok', stdout: 'next\n' });
  });

  it('caps memory (MemoryError inside the interpreter) and output', async () => {
    expect(await sb.run({ code: 'x = bytearray(400 * 2**20)', memoryMb: 128 })).toMatchObject({ status: 'memory', error: { type: 'MemoryError' } });
    const out = await sb.run({ code: 'print("a" * 5000)', outputBytes: 1000 });
    expect(out.status).toBe('output_limit');
    expect(out.stdout).toBe('a'.repeat(1000));
  });

  it('queues runs beyond the pool size and answers each', async () => {
    const rs = await Promise.all([1, 2, 3, 4].map((i) => sb.run({ code: `print(${i} * ${i})` })));
    expect(rs.map((r) => r.stdout)).toEqual(['1\n', '4\n', '9\n', '16\n']);
  });

  it('rejects bad limits, and a cancelled run with ABORTED (killing its worker)', async () => {
    await expect(sb.run({ code: 'print(1)', timeoutMs: -1 })).rejects.toMatchObject({ code: 'BAD_REQUEST', location: { field: 'timeoutMs' } });
    const controller = new AbortController();
    const run = sb.run({ code: 'while True:\n    pass', timeoutMs: 10_000 }, controller.signal);
    setTimeout(() => controller.abort(), 200);
    await expect(run).rejects.toBeInstanceOf(SandboxError);
    await expect(run).rejects.toMatchObject({ code: 'ABORTED' });
    expect((await sb.run({ code: 'print(2)' })).stdout).toBe('2\n');
  });

  it('after close, runs reject with CLOSED', async () => {
    const other = new PyodideSandbox({ size: 1 });
    await other.close();
    await expect(other.run({ code: 'print(1)' })).rejects.toMatchObject({ code: 'CLOSED' });
  });
});
