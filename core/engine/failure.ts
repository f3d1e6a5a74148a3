import { FlowlabError } from '../errors.ts';
import type { NodeErrorCode } from '../trace/codes.ts';
import type { FailureClass } from '../trace/events.ts';

export type { NodeErrorCode } from '../trace/codes.ts';

/** A classified node failure; the engine turns it into a failed NodeEvent and never rethrows it. */
export class NodeFailure extends FlowlabError<NodeErrorCode> {
  override readonly name = 'NodeFailure';
  constructor(
    readonly failureClass: FailureClass,
    code: NodeErrorCode,
    message: string,
    readonly simulated = false,
  ) {
    super(code, message);
  }
}

export const wiring = (code: NodeErrorCode, msg: string) => new NodeFailure('wiring', code, msg);
export const execution = (code: NodeErrorCode, msg: string) => new NodeFailure('execution', code, msg);
export const infrastructure = (code: NodeErrorCode, msg: string) => new NodeFailure('infrastructure', code, msg);
