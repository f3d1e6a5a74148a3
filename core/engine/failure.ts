import type { FailureClass } from '../trace/events.ts';

/** Stable codes the engine records on failed nodes. */
export type NodeErrorCode =
  // wiring: the graph's fault -> wiredBy
  | 'UNKNOWN_TOOL'
  | 'MISSING_PORT'
  | 'MISSING_INPUT'
  | 'MISSING_FIELD'
  | 'PORT_TYPE_MISMATCH'
  | 'INVALID_CONFIG'
  | 'HOP_LIMIT'
  // execution: the node's own fault -> runBy
  | 'AGENT_ERROR'
  | 'UNPARSABLE_OUTPUT'
  | 'CONTRACT_VIOLATION'
  | 'TIMEOUT'
  | 'TOOL_ERROR'
  // cascade
  | 'UPSTREAM_FAILED'
  // infrastructure: the harness's own fault, never blamed on a role
  | 'CANCELLED'
  | string;

/** A classified node failure; the engine turns it into a failed NodeEvent and never rethrows it. */
export class NodeFailure extends Error {
  override readonly name = 'NodeFailure';
  constructor(
    readonly failureClass: FailureClass,
    readonly code: NodeErrorCode,
    message: string,
    readonly simulated = false,
  ) {
    super(message);
  }
}

export const wiring = (code: NodeErrorCode, msg: string) => new NodeFailure('wiring', code, msg);
export const execution = (code: NodeErrorCode, msg: string) => new NodeFailure('execution', code, msg);
export const infrastructure = (code: NodeErrorCode, msg: string) => new NodeFailure('infrastructure', code, msg);
