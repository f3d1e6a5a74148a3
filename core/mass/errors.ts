import { FlowlabError } from '../errors.ts';

/**
 * Codes of MASS failures that stop an operation (a design that does not validate is not an
 * error but a list of `MassDesignIssue`s; see design.ts).
 * - `INVALID_DESIGN`: a design given by a person (a file, a flag) does not validate;
 * - `UNKNOWN_FAMILY`: no MASS task family for that dataset;
 * - `NOT_FOUND`: no stored evolution of that id;
 * - `MISMATCH`: a resumed evolution was started with other options (the message names them);
 * - `HALTED`: the model could not be loaded or failed in a way that fails every step;
 * - `BAD_OPTIONS`: an option is out of range.
 */
export type MassErrorCode = 'INVALID_DESIGN' | 'UNKNOWN_FAMILY' | 'NOT_FOUND' | 'MISMATCH' | 'HALTED' | 'BAD_OPTIONS';

/** A MASS error; `location.path` names the design field at fault where known. */
export class MassError extends FlowlabError<MassErrorCode> {
  override readonly name = 'MassError';
}
