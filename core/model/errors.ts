import { WhereError, type ErrorLocation } from '../errors.ts';

/** Stable codes for model-side failures. */
export const MODEL_ERROR_CODES = [
  'MODEL_NOT_FOUND', // file missing
  'MODEL_INVALID', // not a GGUF file, truncated, unreadable
  'MODEL_LOAD_FAILED', // the runtime could not load it
  'MODEL_UNKNOWN_REF', // a role names a model the run was not given
  'GENERATION_FAILED', // the runtime failed while generating
  'REPLAY_MISSING', // replay: no recorded call for this key
  'REPLAY_PROMPT_MISMATCH', // replay: the recorded prompt differs
  'ABORTED',
] as const;

export type ModelErrorCode = (typeof MODEL_ERROR_CODES)[number];

/**
 * A model-side error; `where` is the file or model reference concerned (a path or a `.gguf`
 * name is its location's `file`; a bare reference has no location). `infrastructure` errors are
 * the harness's own (loading, runtime, replay), never a role's fault (FloWright's
 * structure-aware credit excludes infrastructure faults from blame; docs/credit.md).
 */
export class ModelError extends WhereError<ModelErrorCode> {
  override readonly name = 'ModelError';

  /** A path or a `.gguf` file name as `{ file }`; a model reference as no location. */
  static override locate(where: string | undefined): ErrorLocation {
    return where !== undefined && /[/\\]|\.gguf$/i.test(where) ? { file: where } : {};
  }
}
