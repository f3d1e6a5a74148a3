import { describe, expect, it } from 'vitest';
import { SandboxError, type CodeSandbox, type SandboxRequest, type SandboxResult } from '../sandbox/index.ts';
import { MAX_TOOL_OUTPUT, codeRunnerTool, defaultTools } from './index.ts';

function fakeSandbox(result: Partial<SandboxResult> | Error): CodeSandbox & { requests: SandboxRequest[] } {
  const requests: SandboxRequest[] = [];
  return {
    requests,
    async run(req) {
      requests.push(req);
      if (result instanceof Error) throw result;
      return { status: 'ok', stdout: '', stderr: '', ms: 1, ...result };
    },
    async close() {},
  };
}

describe('code_runner', () => {
  it('runs the code (out of its fence) with a 5 s limit and returns what it printed', async () => {
    const sb = fakeSandbox({ stdout: '4\n' });
    const out = await codeRunnerTool(sb).run({ code: '```python\nprint(2 + 2)\n```' }, {});
    expect(out).toEqual({ status: 'ok', stdout: '4\n', stderr: '', error: '', truncated: false });
    expect(sb.requests).toEqual([{ code: 'print(2 + 2)\n', timeoutMs: 5000, outputBytes: 65536 }]);
  });

  it('returns the program\'s own failure as a result, cutting long output', async () => {
    const long = 'x'.repeat(MAX_TOOL_OUTPUT + 10);
    const out = await codeRunnerTool(fakeSandbox({ status: 'error', stdout: long, error: { type: 'ZeroDivisionError', message: 'ZeroDivisionError: division by zero' } })).run({ code: '1/0' }, {});
    expect(out).toEqual({ status: 'error', stdout: 'x'.repeat(MAX_TOOL_OUTPUT), stderr: '', error: 'ZeroDivisionError: division by zero', truncated: true });
    const t = await codeRunnerTool(fakeSandbox({ status: 'timeout', error: { type: 'Timeout', message: 'killed after 5000 ms' } })).run({ code: 'while 1: pass' }, {});
    expect(t).toMatchObject({ status: 'timeout', error: 'Timeout: killed after 5000 ms' });
  });

  it('rejects bad input, a missing sandbox and a cancelled run with typed errors', async () => {
    const tool = codeRunnerTool(fakeSandbox({}));
    await expect(tool.run({}, {})).rejects.toMatchObject({ code: 'BAD_INPUT', message: "BAD_INPUT: input 'code' is missing" });
    await expect(tool.run({ code: 3 }, {})).rejects.toMatchObject({ code: 'BAD_INPUT', message: "BAD_INPUT: input 'code' must be a string, got number" });
    await expect(tool.run({ code: '  ' }, {})).rejects.toMatchObject({ code: 'BAD_INPUT' });
    await expect(tool.run({ code: 'x'.repeat(20_001) }, {})).rejects.toMatchObject({ code: 'BAD_INPUT' });
    await expect(codeRunnerTool(undefined).run({ code: 'print(1)' }, {})).rejects.toMatchObject({ code: 'NO_SANDBOX' });
    await expect(codeRunnerTool(fakeSandbox(new SandboxError('ABORTED', 'stopped'))).run({ code: 'print(1)' }, {})).rejects.toMatchObject({ code: 'ABORTED', tool: 'code_runner' });
    const controller = new AbortController();
    controller.abort();
    await expect(tool.run({ code: 'print(1)' }, { signal: controller.signal })).rejects.toMatchObject({ code: 'ABORTED' });
  });

  it('is in the default registry only when a sandbox is given', () => {
    expect(defaultTools().has('code_runner')).toBe(false);
    const reg = defaultTools({ sandbox: fakeSandbox({}) });
    expect(reg.has('code_runner')).toBe(true);
    expect(reg.list().map((t) => t.name).filter((n) => !defaultTools().has(n))).toEqual(['code_runner']);
  });
});
