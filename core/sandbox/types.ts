import { FlowlabError } from '../errors.ts';

/**
 * The code-sandbox port: runs untrusted, model-written Python and reports what happened.
 * Adapters live in `models/sandbox` (Pyodide in permission-restricted child processes); core
 * code (graders, the `code_runner` tool) depends on this interface only.
 */

/** One program to run. Limits left out take the adapter's defaults. */
export interface SandboxRequest {
  /** Python source, run as a `__main__` module in fresh globals. */
  code: string;
  /** Wall-clock limit in milliseconds; past it the run is killed and scored `timeout`. */
  timeoutMs?: number;
  /** Memory cap in MiB for the interpreter (its WebAssembly heap); past it `memory`. */
  memoryMb?: number;
  /** Most bytes of stdout + stderr kept; past it the program is stopped and scored `output_limit`. */
  outputBytes?: number;
}

/**
 * How a run ended:
 * `ok` the program finished (exit status 0 or no `SystemExit`); `error` it raised (the exception is in `error`);
 * `timeout` it passed its wall-clock limit and was killed; `memory` it passed its memory cap
 * (`MemoryError` in the interpreter, or the process grew past its resident-size cap and was killed);
 * `output_limit` it wrote more than `outputBytes`; `crashed` the interpreter or its process died
 * for another reason (the adapter replaces it).
 */
export type SandboxStatus = 'ok' | 'error' | 'timeout' | 'memory' | 'output_limit' | 'crashed';

/** What one run did. */
export interface SandboxResult {
  status: SandboxStatus;
  /** What the program wrote to stdout (UTF-8, cut at the output cap). */
  stdout: string;
  stderr: string;
  /** The exception (`type` is its class name, e.g. `AssertionError`) or the crash, when there was one. */
  error?: { type: string; message: string };
  /** Wall-clock milliseconds of the run itself (not the wait for a free interpreter). */
  ms: number;
}

/** A sandbox: run programs, then close it (kills its processes). */
export interface CodeSandbox {
  /**
   * Runs one program. Resolves for every way the program itself can end (see `SandboxStatus`);
   * rejects only for the sandbox's own failures.
   * @throws SandboxError `ABORTED` (the signal fired; the program was killed), `CLOSED`,
   *   `START_FAILED` (no interpreter could be started), `BAD_REQUEST` (a limit is not a positive number).
   */
  run(req: SandboxRequest, signal?: AbortSignal): Promise<SandboxResult>;
  /** Kills every interpreter; runs in flight reject with `CLOSED`. Idempotent. */
  close(): Promise<void>;
}

/** Stable codes of sandbox failures (not of the programs it runs: those are `SandboxStatus`). */
export type SandboxErrorCode =
  | 'ABORTED' // the caller's signal fired
  | 'CLOSED' // the sandbox was closed
  | 'START_FAILED' // an interpreter process could not be started (message says why)
  | 'BAD_REQUEST'; // a request field is out of range (field named)

/** A sandbox failure; `location.field` names the request field for `BAD_REQUEST`. */
export class SandboxError extends FlowlabError<SandboxErrorCode> {
  override readonly name = 'SandboxError';
}

/**
 * Checks a request's fields: `code` a string, each limit (when given) a positive finite number.
 * @throws SandboxError `BAD_REQUEST` naming the field.
 */
export function checkSandboxRequest(req: SandboxRequest): void {
  if (typeof req.code !== 'string') throw new SandboxError('BAD_REQUEST', `sandbox request 'code' must be a string, got ${typeof req.code}`, { field: 'code' });
  for (const field of ['timeoutMs', 'memoryMb', 'outputBytes'] as const) {
    const v = req[field];
    if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v > 0)) {
      throw new SandboxError('BAD_REQUEST', `sandbox request '${field}' must be a positive number, got ${String(v)}`, { field });
    }
  }
}
