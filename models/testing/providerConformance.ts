/**
 * One conformance suite for every adapter of the `ModelProvider` port (`core/model/provider.ts`),
 * in the manner of LangGraph.js's `libs/checkpoint-validation`: one spec, run against each
 * adapter by one call. It checks what the port promises:
 * - `generate` returns `text`, real token counts, `ms`, the request's `seed` and a model name;
 * - the same seed, prompt and params give the same text (also from a fresh provider);
 * - a `jsonSchema` request returns JSON valid under the schema;
 * - an aborted signal rejects with `ModelError` `ABORTED`, before work and during a call, within
 *   a bounded time (never a hang);
 * - failures are `ModelError`s with a code of `ModelErrorCode`;
 * - `modelsLoaded()` counts loaded files (0 before any call);
 * - `load()`, where present, reports a file that is not a model, naming it;
 * - `dispose()` can be called twice.
 *
 * Adding a provider is one call in a test file:
 * `describeProviderConformance('openai-compatible', () => new OpenAiProvider(...), { loadsModels: false })`.
 * Providers that answer from fixed material (replay, scripted) answer the suite's own calls:
 * {@link conformanceRequests} lists them and {@link conformanceAnswer} gives a reply that
 * satisfies every check.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asRoleName } from '../../core/ids.ts';
import { ModelError, type GenerateRequest, type JsonSchema, type ModelErrorCode, type ModelProvider } from '../../core/model/index.ts';

/** The calls the suite makes, by name. */
export type ConformanceCall = 'plain' | 'json' | 'long';

/** Options of {@link describeProviderConformance}. */
export interface ProviderConformanceOptions {
  /**
   * Why the suite cannot run here (e.g. `"stories260K.gguf not found"`): printed, and every test
   * skipped. Falsy: run.
   */
  skip?: string | false;
  /** The model ref every request names. Defaults to `"default"`. */
  model?: string;
  /** True when the provider loads model files: `modelsLoaded()` is then 1 after the first call (one file), else always 0. */
  loadsModels: boolean;
  /**
   * True when a call can be cut short: the `long` call (up to 900 tokens), aborted 1 ms after
   * it starts, must reject with `ABORTED`. False (providers that answer at once): it must
   * settle, with a result or `ABORTED`, within {@link timeoutMs}.
   */
  abortsMidCall: boolean;
  /**
   * The code a call naming an unknown model ref (under a key nothing was recorded for) is
   * refused with: `MODEL_UNKNOWN_REF` for providers with a model map, `REPLAY_MISSING` for
   * replay. Undefined: the provider answers every request (scripted); the check is skipped.
   */
  unknownRefCode?: ModelErrorCode;
  /**
   * For providers with `load()`: a provider of the same kind whose model (ref {@link model})
   * is `file`. The suite passes a file that is not a GGUF; `load()` must reject with
   * `MODEL_INVALID` naming it.
   */
  withModelFile?: (file: string) => ModelProvider | Promise<ModelProvider>;
  /** Bound on any one call of the suite, in ms ("not a hang"). Defaults to 20,000. */
  timeoutMs?: number;
}

/** The JSON schema of the `json` call. */
export const CONFORMANCE_SCHEMA: JsonSchema = {
  type: 'object',
  properties: { answer: { type: 'number' } },
  required: ['answer'],
};

/** The task key of every conformance call (replay fixtures record under it). */
export const CONFORMANCE_TASK_KEY = 'conformance';
/** The ref the unknown-ref check names. */
const UNKNOWN_REF = 'conformance-unknown-ref';

/** Every code of the port's closed union: a rejection must carry one of these. */
const MODEL_ERROR_CODES: Record<ModelErrorCode, true> = {
  MODEL_NOT_FOUND: true,
  MODEL_INVALID: true,
  MODEL_LOAD_FAILED: true,
  MODEL_UNKNOWN_REF: true,
  GENERATION_FAILED: true,
  REPLAY_MISSING: true,
  REPLAY_PROMPT_MISMATCH: true,
  ABORTED: true,
};

/**
 * The requests the suite sends, by name, for model ref `model`: `plain` (a short story opening,
 * temperature 0.8, 16 tokens, seed 7), `json` (constrained by {@link CONFORMANCE_SCHEMA}, 120
 * tokens, seed 3) and `long` (900 tokens, seed 11; the abort checks). Keys: task
 * {@link CONFORMANCE_TASK_KEY}, node `conformance`, attempt 1, call index 0, 1, 2.
 */
export function conformanceRequests(model = 'default'): Record<ConformanceCall, GenerateRequest> {
  const base = (callIndex: number, seed: number, maxTokens: number): GenerateRequest => ({
    role: asRoleName('writer'),
    model,
    prompt: 'Once upon a time',
    params: { temperature: 0.8, maxTokens },
    seed,
    key: { taskKey: CONFORMANCE_TASK_KEY, nodeId: 'conformance', attempt: 1, callIndex },
  });
  return {
    plain: base(0, 7, 16),
    json: { ...base(1, 3, 120), jsonSchema: CONFORMANCE_SCHEMA },
    long: base(2, 11, 900),
  };
}

/** A reply to a conformance request that passes every check: `{"answer": 42}` for a schema request, a sentence otherwise. */
export function conformanceAnswer(request: GenerateRequest): string {
  return request.jsonSchema ? '{"answer": 42}' : ', there was a little girl named Lily.';
}

/**
 * Registers the conformance tests of one provider under `describe('<name> conformance')`.
 *
 * @param makeProvider a new, unused provider per call (the suite disposes each one it makes).
 */
export function describeProviderConformance(
  name: string,
  makeProvider: () => ModelProvider | Promise<ModelProvider>,
  options: ProviderConformanceOptions,
): void {
  const skip = options.skip || undefined;
  const timeoutMs = options.timeoutMs ?? 20_000;
  const requests = conformanceRequests(options.model);
  if (skip) console.log(`[${name} conformance] skipped: ${skip}`);

  describe.skipIf(skip !== undefined)(`${name} conformance (ModelProvider port)`, () => {
    let provider: ModelProvider;
    let tmp: string;
    beforeAll(async () => {
      tmp = await mkdtemp(path.join(os.tmpdir(), 'flowlab-conformance-'));
      provider = await makeProvider();
    });
    afterAll(async () => {
      await provider?.dispose();
      if (tmp) await rm(tmp, { recursive: true, force: true });
    });

    it('a fresh provider has loaded nothing; modelsLoaded() counts the file loaded by the first call', async () => {
      expect(provider.modelsLoaded()).toBe(0);
      await within(provider.generate(requests.plain), timeoutMs, 'generate');
      expect(provider.modelsLoaded()).toBe(options.loadsModels ? 1 : 0);
    });

    it('generate returns text, real token counts, ms, the seed and a model name', async () => {
      const out = await within(provider.generate(requests.plain), timeoutMs, 'generate');
      expect(typeof out.text).toBe('string');
      expect(out.text.length).toBeGreaterThan(0);
      expect(Number.isInteger(out.tokens.prompt) && out.tokens.prompt > 0).toBe(true);
      expect(Number.isInteger(out.tokens.completion) && out.tokens.completion > 0).toBe(true);
      expect(out.tokens.completion).toBeLessThanOrEqual(requests.plain.params.maxTokens);
      expect(Number.isFinite(out.ms) && out.ms >= 0).toBe(true);
      expect(out.seed).toBe(requests.plain.seed);
      expect(typeof out.model).toBe('string');
      expect(out.model.length).toBeGreaterThan(0);
      if (out.stopReason !== undefined) expect(['eos', 'maxTokens', 'stop', 'abort', 'other']).toContain(out.stopReason);
    });

    it('the same seed, prompt and params give the same text, also from a fresh provider', async () => {
      const a = await within(provider.generate(requests.plain), timeoutMs, 'generate');
      const b = await within(provider.generate(requests.plain), timeoutMs, 'generate');
      expect(b.text).toBe(a.text);
      expect(b.tokens).toEqual(a.tokens);
      const fresh = await makeProvider();
      try {
        expect((await within(fresh.generate(requests.plain), timeoutMs, 'generate')).text).toBe(a.text);
      } finally {
        await fresh.dispose();
      }
    });

    it('a JSON-schema request returns JSON valid under the schema', async () => {
      const validate = new Ajv({ strict: false }).compile(CONFORMANCE_SCHEMA);
      const out = await within(provider.generate(requests.json), timeoutMs, 'generate');
      const value: unknown = JSON.parse(out.text);
      expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
    });

    it('an already aborted signal rejects with ModelError ABORTED', async () => {
      const err = await rejectionOf(provider.generate({ ...requests.long, signal: AbortSignal.abort() }), timeoutMs);
      expectModelError(err, 'ABORTED');
    });

    it(
      options.abortsMidCall
        ? 'aborting during a call rejects it with ModelError ABORTED, and the provider keeps working'
        : 'aborting during a call settles it (a result or ModelError ABORTED), and the provider keeps working',
      async () => {
        const ac = new AbortController();
        const pending = provider.generate({ ...requests.long, signal: ac.signal });
        setTimeout(() => ac.abort(new Error('conformance abort')), 1);
        const settled = await within(
          pending.then(
            (result) => ({ result }),
            (error: unknown) => ({ error }),
          ),
          timeoutMs,
          'an aborted generate',
        );
        if (options.abortsMidCall || 'error' in settled) {
          expect('error' in settled, 'the aborted call returned a result').toBe(true);
          expectModelError((settled as { error: unknown }).error, 'ABORTED');
        }
        const after = await within(provider.generate(requests.plain), timeoutMs, 'generate after an abort');
        expect(after.text.length).toBeGreaterThan(0);
      },
    );

    it.skipIf(options.unknownRefCode === undefined)('a call it cannot answer rejects with a typed ModelError naming the cause', async () => {
      const request: GenerateRequest = { ...requests.plain, model: UNKNOWN_REF, key: { ...requests.plain.key, callIndex: 99 } };
      const err = await rejectionOf(provider.generate(request), timeoutMs);
      expectModelError(err, options.unknownRefCode!);
      const where = (err as ModelError).where ?? '';
      expect(`${(err as ModelError).message} ${where}`).toMatch(new RegExp(`${UNKNOWN_REF}|call 99`));
    });

    it('load(), where present, reports a file that is not a model with MODEL_INVALID naming it', async () => {
      if (!provider.load) {
        expect(options.withModelFile, 'withModelFile is given, but the provider has no load()').toBeUndefined();
        return;
      }
      expect(options.withModelFile, 'the provider has load(): give withModelFile').toBeDefined();
      const junk = path.join(tmp, 'not-a-model.gguf');
      await writeFile(junk, 'this is not a GGUF file\n'.repeat(64));
      const bad = await options.withModelFile!(junk);
      try {
        const err = await rejectionOf(bad.load!(), timeoutMs);
        expectModelError(err, 'MODEL_INVALID');
        expect((err as ModelError).message).toContain(junk);
        expect(bad.modelsLoaded()).toBe(0);
      } finally {
        await bad.dispose();
      }
    });

    it('dispose() can be called twice', async () => {
      const p = await makeProvider();
      await within(p.generate(requests.plain), timeoutMs, 'generate');
      await within(p.dispose(), timeoutMs, 'dispose');
      await within(p.dispose(), timeoutMs, 'a second dispose');
    });
  });
}

/** Asserts `err` is a `ModelError` of the port's union with code `code`. */
function expectModelError(err: unknown, code: ModelErrorCode): void {
  expect(err).toBeInstanceOf(ModelError);
  const e = err as ModelError;
  expect(Object.hasOwn(MODEL_ERROR_CODES, e.code), `code ${e.code} is not a ModelErrorCode`).toBe(true);
  expect(e.code).toBe(code);
}

/** The rejection of `p` (fails the test when it resolves or does not settle within `ms`). */
async function rejectionOf(p: Promise<unknown>, ms: number): Promise<unknown> {
  const settled = await within(
    p.then(
      () => ({ resolved: true as const }),
      (error: unknown) => ({ resolved: false as const, error }),
    ),
    ms,
    'a call expected to fail',
  );
  if (settled.resolved) throw new Error('expected a rejection, got a result');
  return settled.error;
}

/** `p`, or a rejection naming `what` when it has not settled after `ms` milliseconds. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([p, hang]).finally(() => clearTimeout(timer));
}
