/**
 * `validateWorkflow` off the lab host's event loop: a 1 MiB workflow takes seconds to parse, and
 * parsed inline it stalled every other request and event stream (issue 30). One worker thread
 * (host/validateWorker.ts) parses documents in turn; each is bounded in time (`timeoutMs`: the
 * worker is ended and restarted, the caller gets BAD_REQUEST) and the queue in length (`maxQueue`:
 * BUSY past it). Without the worker's file (an embedding that did not build it) documents are
 * validated inline, as before.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ApiError, validateWorkflowText, type ValidateWorkflowResult } from '../core/api/index.ts';

/** Options of {@link createWorkflowValidator}. */
export interface WorkflowValidatorOptions {
  /** Longest one validation may take, in ms. Default 20000. */
  timeoutMs?: number;
  /** Most documents waiting or in work at once. Default 8. */
  maxQueue?: number;
  /** Start the worker at once (default true), rather than at the first document. */
  eager?: boolean;
}

/** A validator that answers like core/api `validateWorkflowText`, asynchronously. */
export interface WorkflowValidator {
  /** The document's outline or located issues. Rejects ApiError `BUSY` (queue full) or `BAD_REQUEST` (over the time limit). */
  validate(text: string, file?: string): Promise<ValidateWorkflowResult>;
  /** The same answer as JSON text (what the worker sends; the host writes it on without parsing it). */
  validateJson(text: string, file?: string): Promise<string>;
  /** Whether documents go to a worker (false: inline). */
  readonly offThread: boolean;
  /** Ends the worker. Idempotent. */
  close(): Promise<void>;
}

/**
 * The worker's entry: the bundle's `validateWorker.js` beside the chunk; under tsx (tests,
 * FLOWLAB_DEV) the TypeScript source, loaded by a small script that registers tsx's ESM hooks in
 * the worker first (Node 20 does not apply `--import` hooks to a worker's own entry).
 */
function workerEntry(): { url: URL } | { code: string } | undefined {
  const here = import.meta.url;
  if (here.endsWith('.ts')) {
    const require = createRequire(here);
    const tsxDir = path.dirname(require.resolve('tsx/package.json'));
    const api = pathToFileURL(path.join(tsxDir, 'dist/esm/api/index.mjs')).href;
    const source = new URL('./validateWorker.ts', here).href;
    return { code: `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(source)}); });` };
  }
  const built = new URL('./validateWorker.js', here);
  return existsSync(fileURLToPath(built)) ? { url: built } : undefined;
}

/** Starts the worker (unless `eager: false`); see the module comment. */
export function createWorkflowValidator(opts: WorkflowValidatorOptions = {}): WorkflowValidator {
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const maxQueue = opts.maxQueue ?? 8;
  const entry = workerEntry();
  type Job = { id: number; text: string; file: string | undefined; resolve: (json: string) => void; reject: (e: unknown) => void };
  const queue: Job[] = [];
  let worker: Worker | undefined;
  let ready = false;
  let current: { job: Job; timer: NodeJS.Timeout | undefined } | undefined;
  let nextId = 1;
  let closed = false;

  /** The time limit counts the validation, not the worker's start (loading the parser). */
  const startClock = (): void => {
    if (!current || current.timer || !ready) return;
    const { job } = current;
    current.timer = setTimeout(() => {
      const w = worker;
      worker = undefined;
      current = undefined;
      job.reject(new ApiError('BAD_REQUEST', `validateWorkflow: the document took longer than ${timeoutMs / 1000} s to validate; split it or shorten it`, 'validateWorkflow', 'text'));
      void w?.terminate();
      pump();
    }, timeoutMs);
  };

  const spawnWorker = (): Worker => {
    const w = 'url' in entry! ? new Worker(entry.url) : new Worker(entry!.code, { eval: true });
    ready = false;
    w.unref();
    w.on('message', (m: { ready?: true; id?: number; json?: string; error?: string }) => {
      if (worker !== w) return;
      if (m.ready) {
        ready = true;
        return startClock();
      }
      if (!current || current.job.id !== m.id) return;
      clearTimeout(current.timer);
      const { job } = current;
      current = undefined;
      if (m.error !== undefined) job.reject(new ApiError('INTERNAL', `validateWorkflow: ${m.error}`, 'validateWorkflow'));
      else job.resolve(m.json!);
      pump();
    });
    const lost = (why: string) => {
      if (worker !== w) return; // a worker ended on purpose (time limit, close): its job is answered already
      worker = undefined;
      if (current) {
        clearTimeout(current.timer);
        current.job.reject(new ApiError('INTERNAL', `validateWorkflow: the validation worker ${why}`, 'validateWorkflow'));
        current = undefined;
      }
      pump();
    };
    w.on('error', (e) => lost(`failed (${e.message})`));
    w.on('exit', (code) => lost(`exited (code ${code})`));
    return w;
  };

  const pump = (): void => {
    if (current || closed) return;
    const job = queue.shift();
    if (!job) return;
    worker ??= spawnWorker();
    current = { job, timer: undefined };
    worker.postMessage({ id: job.id, text: job.text, file: job.file });
    startClock();
  };

  // Started now, not at the first document: loading the parser in the worker takes a moment of CPU
  // that should not fall inside a request.
  if (entry && opts.eager !== false) worker = spawnWorker();

  const validateJson = (text: string, file?: string): Promise<string> => {
    if (!entry) return Promise.resolve(JSON.stringify(validateWorkflowText(text, file)));
    if (closed) return Promise.reject(new ApiError('UNAVAILABLE', 'validateWorkflow: the lab host is closing', 'validateWorkflow'));
    if (queue.length + (current ? 1 : 0) >= maxQueue) return Promise.reject(new ApiError('BUSY', `validateWorkflow: ${maxQueue} documents are being validated; try again shortly`, 'validateWorkflow'));
    return new Promise((resolve, reject) => {
      queue.push({ id: nextId++, text, file, resolve, reject });
      pump();
    });
  };

  return {
    offThread: entry !== undefined,
    validateJson,
    async validate(text, file) {
      return JSON.parse(await validateJson(text, file)) as ValidateWorkflowResult;
    },
    async close() {
      closed = true;
      for (const j of queue.splice(0)) j.reject(new ApiError('UNAVAILABLE', 'validateWorkflow: the lab host is closing', 'validateWorkflow'));
      if (current) {
        clearTimeout(current.timer);
        current.job.reject(new ApiError('UNAVAILABLE', 'validateWorkflow: the lab host is closing', 'validateWorkflow'));
        current = undefined;
      }
      const w = worker;
      worker = undefined;
      await w?.terminate();
    },
  };
}
