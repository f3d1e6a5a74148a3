import { FlowlabError } from '../errors.ts';

/**
 * Why training cannot start or go on (core/training/loop.ts, and Trainer adapters in
 * models/trainer/):
 * - `NO_ROLE`: no role to train, or the workflow has no role of that name;
 * - `NO_TASKS`: no training tasks;
 * - `NEEDS_TEMPERATURE`: on-policy sampling needs a temperature above 0;
 * - `NO_MODEL_FILE`: a role to train has no model file;
 * - `BAD_SFT`: the loop's SFT schedule is malformed (warm start, passes, learning rate, success scores);
 * - `HALTED`: an iteration's experiment halted (an infrastructure fault; the message says which);
 * - `NON_FINITE_STEP`: a step produced a non-finite loss or gradient norm (weights left unchanged);
 * - `DISPOSED`: a trainable model was used after `dispose()`;
 * - `BACKEND_FAILED`: the trainer's compute backend did not start;
 * - `INTERNAL`: a trainer invariant broke (a weight the forward pass does not read, or reads
 *   outside its checkpoint group): a bug, not bad input.
 */
export type TrainingErrorCode =
  | 'NO_ROLE'
  | 'NO_TASKS'
  | 'NEEDS_TEMPERATURE'
  | 'NO_MODEL_FILE'
  | 'BAD_SFT'
  | 'HALTED'
  | 'NON_FINITE_STEP'
  | 'DISPOSED'
  | 'BACKEND_FAILED'
  | 'INTERNAL';

/** A training failure; the message names the role, file or iteration concerned. */
export class TrainingError extends FlowlabError<TrainingErrorCode> {
  override readonly name = 'TrainingError';
}
