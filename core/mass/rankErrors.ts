import { FlowlabError } from '../errors.ts';

/**
 * Why MASS's outer loop (tournament, Bradley-Terry, export, guards, cycles) cannot go on:
 * - `BAD_TOURNAMENT`: fewer than 2 runs, a duplicate run id, a neighbour count below 1, or a
 *   verdict naming a pair the tournament never scheduled;
 * - `BAD_MATCH`: a Bradley-Terry match names an unknown player, a player against itself, or a
 *   winner other than `A`, `B`, `tie`;
 * - `NON_FINITE`: a Bradley-Terry strength came out NaN or infinite (a bug, never bad input);
 * - `BAD_SPLIT`: the train/validation cut asks for ranks the ranking does not have;
 * - `BAD_EXPORT`: a trajectory to export has no orchestrator conversation, or the bare task is empty;
 * - `HALTED`: a guard threshold was crossed (quarantines per cycle, judge-verifier agreement);
 *   the message names the threshold and the measured value, and the report is stored;
 * - `BAD_STATE`: a cycle state file to resume from is unreadable or belongs to another loop.
 */
export type MassRankErrorCode = 'BAD_TOURNAMENT' | 'BAD_MATCH' | 'NON_FINITE' | 'BAD_SPLIT' | 'BAD_EXPORT' | 'HALTED' | 'BAD_STATE';

/** An outer-loop failure; the message names the run, pair, player or threshold concerned. */
export class MassRankError extends FlowlabError<MassRankErrorCode> {
  override readonly name = 'MassRankError';
}
