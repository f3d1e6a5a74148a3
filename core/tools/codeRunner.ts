import { SandboxError, type CodeSandbox } from '../sandbox/index.ts';
import { extractCode } from '../tasks/code.ts';
import { ToolError, typeName, type Tool } from './tool.ts';

/** Most characters of code the tool accepts. */
export const MAX_CODE_LENGTH = 20_000;
/** Most characters of stdout / stderr the tool returns to the agent (the rest is cut, `truncated` set). */
export const MAX_TOOL_OUTPUT = 4_000;
/** Wall-clock limit of one `code_runner` call, ms. */
export const CODE_RUNNER_TIMEOUT_MS = 5_000;

/** Output of the `code_runner` tool. */
export interface CodeRunnerOutput {
  /** How the program ended: `ok`, `error`, `timeout`, `memory`, `output_limit`, `crashed` (core/sandbox). */
  status: string;
  stdout: string;
  stderr: string;
  /** The exception as `Type: message`, or '' when there was none. */
  error: string;
  /** True when stdout or stderr was cut to `MAX_TOOL_OUTPUT` characters. */
  truncated: boolean;
}

/**
 * `code_runner`: runs Python in the code sandbox (the same `CodeSandbox` the HumanEval and MBPP
 * graders use: no host files, no network, no processes; a 5 s wall-clock limit) and returns what
 * it printed. A fenced ```python block in the input is taken out of the fence (core/tasks
 * `extractCode`). The program's own failures (an exception, a timeout) are results the agent
 * reads, not tool faults.
 * Errors (ToolError): `BAD_INPUT` (code missing, not a string, blank, longer than 20 000),
 * `ABORTED` (the run's signal), `NO_SANDBOX` (the registry was built without a sandbox).
 */
export function codeRunnerTool(sandbox: CodeSandbox | undefined): Tool {
  return {
    name: 'code_runner',
    description: 'Runs a Python 3 program in a sandbox (standard library only; no files, network or processes; 5 s limit) and returns {status, stdout, stderr, error}. Print what you need to see.',
    inputs: { code: { type: 'string', description: 'Python source (a ```python block is accepted).' } },
    output: {
      type: 'object',
      properties: {
        status: { type: 'string', enum: ['ok', 'error', 'timeout', 'memory', 'output_limit', 'crashed'] },
        stdout: { type: 'string' },
        stderr: { type: 'string' },
        error: { type: 'string' },
        truncated: { type: 'boolean' },
      },
      required: ['status', 'stdout', 'stderr', 'error', 'truncated'],
      additionalProperties: false,
    },
    async run(inputs, ctx): Promise<CodeRunnerOutput> {
      const tool = 'code_runner';
      if (ctx.signal?.aborted) throw new ToolError('ABORTED', 'code_runner was cancelled before it ran', { tool });
      const raw = inputs.code;
      if (raw === undefined) throw new ToolError('BAD_INPUT', "input 'code' is missing", { tool });
      if (typeof raw !== 'string') throw new ToolError('BAD_INPUT', `input 'code' must be a string, got ${typeName(raw)}`, { tool });
      if (raw.length > MAX_CODE_LENGTH) throw new ToolError('BAD_INPUT', `input 'code' is ${raw.length} characters; at most ${MAX_CODE_LENGTH}`, { tool });
      const code = extractCode(raw);
      if (code === null) throw new ToolError('BAD_INPUT', "input 'code' is blank", { tool });
      if (!sandbox) throw new ToolError('NO_SANDBOX', 'code_runner has no code sandbox here (the tool registry was built without one)', { tool });
      try {
        const r = await sandbox.run({ code, timeoutMs: CODE_RUNNER_TIMEOUT_MS, outputBytes: 64 * 1024 }, ctx.signal);
        const cut = (s: string) => (s.length > MAX_TOOL_OUTPUT ? s.slice(0, MAX_TOOL_OUTPUT) : s);
        return {
          status: r.status,
          stdout: cut(r.stdout),
          stderr: cut(r.stderr),
          error: r.error ? (r.error.message.startsWith(r.error.type) ? r.error.message : `${r.error.type}: ${r.error.message}`) : '',
          truncated: r.stdout.length > MAX_TOOL_OUTPUT || r.stderr.length > MAX_TOOL_OUTPUT,
        };
      } catch (err) {
        if (err instanceof SandboxError && err.code === 'ABORTED') throw new ToolError('ABORTED', 'code_runner was cancelled; its interpreter was stopped', { tool, cause: err });
        throw err;
      }
    },
  };
}
