/**
 * Shared pieces of the node-llama-cpp adapter's tests: the shared tiny models' paths, their
 * known greedy continuation, a request builder and a typed-error assertion.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { asRoleName } from '../../core/ids.ts';
import { ModelError, type GenerateRequest, type ModelErrorCode } from '../../core/model/index.ts';
import { shared } from '../../test/cli.ts';

/** stories260K (F32, no chat template) as given, symlinks not resolved. */
export const STORIES = path.join(shared, 'models', 'stories260K.gguf');
/** llama-2-tiny-random (F16, 32k vocabulary) as given. */
export const RANDOM = path.join(shared, 'models', 'llama-2-tiny-random.gguf');
/** Whether both tiny models are present (the model-dependent tests skip otherwise). */
export const haveModels = existsSync(STORIES) && existsSync(RANDOM);

/** stories260K's greedy continuation of "Once upon a time": its first sentence, and its first 40 tokens. */
export const GREEDY_PREFIX = ', there was a little girl named Lily.';
export const GREEDY_40 =
  ', there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball.';

export type ReqOverrides = Partial<Omit<GenerateRequest, 'params'>> & { params?: Partial<GenerateRequest['params']> };

/** A request for ref `default`: "Once upon a time", seed 1, greedy, 40 tokens, with `over` on top. */
export function req(over: ReqOverrides = {}): GenerateRequest {
  const { params, ...rest } = over;
  return {
    role: asRoleName('writer'),
    model: 'default',
    prompt: 'Once upon a time',
    seed: 1,
    key: { taskKey: 't', nodeId: 'n', attempt: 1, callIndex: 0 },
    ...rest,
    params: { temperature: 0, maxTokens: 40, ...params },
  };
}

/** Asserts that `p` rejects with a `ModelError` of `code` whose message holds (or matches) each of `inMessage`. */
export async function expectModelError(p: Promise<unknown>, code: ModelErrorCode, ...inMessage: (string | RegExp)[]): Promise<ModelError> {
  const err = await p.then(
    () => {
      throw new Error(`expected ModelError ${code}, got a result`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ModelError);
  const me = err as ModelError;
  expect(me.code, me.message).toBe(code);
  for (const s of inMessage) {
    if (typeof s === 'string') expect(me.message).toContain(s);
    else expect(me.message).toMatch(s);
  }
  return me;
}
