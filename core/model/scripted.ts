import { ModelError } from './errors.ts';
import type { GenerateRequest, GenerateResult, ModelProvider } from './provider.ts';

/** Produces the text of a scripted reply; may throw to simulate a failing call. */
export type Script = (request: GenerateRequest) => string | Promise<string>;

/**
 * A simulated model: replies come from a script, not from a model.
 * Used only by tests, benchmarks and fault-injection teaching material; its name says so
 * ("scripted (simulated)") wherever a run records it. Token counts are whitespace word counts.
 *
 * `request.signal`, as the port asks: an already aborted signal rejects with `ModelError`
 * `ABORTED` before the script runs, and a signal that aborts while a script's promise is pending
 * rejects the call with `ABORTED` at once (the script's own promise is left to settle unobserved).
 */
export class ScriptedProvider implements ModelProvider {
  readonly name = 'scripted (simulated)';
  calls = 0;
  constructor(private readonly script: Script) {}

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const started = performance.now();
    const { signal } = request;
    if (signal?.aborted) throw aborted(request, signal);
    this.calls++;
    const reply = this.script(request);
    const text = signal && typeof reply !== 'string' ? await untilAborted(reply, request, signal) : await reply;
    return {
      text,
      tokens: { prompt: countWords(request.prompt), completion: countWords(text) },
      ms: performance.now() - started,
      seed: request.seed,
      model: this.name,
      stopReason: 'eos',
    };
  }

  modelsLoaded(): number {
    return 0;
  }

  async dispose(): Promise<void> {}
}

function aborted(request: GenerateRequest, signal: AbortSignal): ModelError {
  return new ModelError('ABORTED', `Scripted call (ref "${request.model}") was aborted`, request.model, { cause: signal.reason });
}

/** `reply`, or `ABORTED` as soon as `signal` aborts, whichever comes first. */
function untilAborted(reply: Promise<string>, request: GenerateRequest, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(aborted(request, signal));
    signal.addEventListener('abort', onAbort, { once: true });
    reply.then(
      (text) => {
        signal.removeEventListener('abort', onAbort);
        resolve(text);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

function countWords(s: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < s.length; i++) {
    const space = s.charCodeAt(i) <= 32;
    if (!space && !inWord) n++;
    inWord = !space;
  }
  return n;
}
