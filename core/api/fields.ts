/**
 * The zod building blocks the features' payload schemas share (ids, names, absolute paths,
 * bounded counts) and the API's size limits. Payloads arrive from an untrusted renderer, so
 * every string and list is bounded here, once.
 */
import * as z from 'zod';

/** Longest id accepted in a payload. */
export const MAX_ID_LENGTH = 200;
/** Largest workflow document `validateWorkflow` accepts, in characters (1 MiB). */
export const MAX_WORKFLOW_CHARS = 1 << 20;
/** Longest file path accepted in a payload, in characters. */
export const MAX_PATH_LENGTH = 4096;
/** Longest `testModel` prompt, in characters. */
export const MAX_PROMPT_CHARS = 4000;
/** Most tasks one `startRun` may plan. */
export const MAX_RUN_LIMIT = 10_000;
/** Most `inject` fault specs in one `startRun`. */
export const MAX_INJECT = 32;
/** Most hint cards one `startRun` may name. */
export const MAX_CARDS = 1000;
/** Most per-role model choices in one `startRun`. */
export const MAX_ROLE_MODELS = 64;

/** An id: 1..MAX_ID_LENGTH characters. */
export const Id = z.string().min(1, 'must not be empty').max(MAX_ID_LENGTH, `must be at most ${MAX_ID_LENGTH} characters`);
/** Methods without a payload accept `undefined` or `{}` (nothing else). */
export const NoPayload = z.strictObject({}).optional();

/**
 * An absolute file path: POSIX (`/x`), Windows drive (`C:\x`, `C:/x`) or UNC (`\\server\x`); no
 * NUL byte. Relative paths are refused: the host's working directory means nothing to a user.
 */
export const AbsolutePath = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_PATH_LENGTH, `must be at most ${MAX_PATH_LENGTH} characters`)
  .refine((p) => !p.includes('\0'), 'must not contain a NUL character')
  .refine((p) => /^(\/|[A-Za-z]:[\\/]|\\\\)/.test(p), 'must be an absolute path');
/** A short name: a dataset, split or role. */
export const Name = z.string().min(1, 'must not be empty').max(100, 'must be at most 100 characters').refine((n) => !n.includes('\0'), 'must not contain a NUL character (U+0000)');
/** An integer from `min` to `max` (inclusive). */
export const Count = (min: number, max: number) =>
  z.int(`must be an integer from ${min} to ${max}`).min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);
