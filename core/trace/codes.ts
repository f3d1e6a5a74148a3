/**
 * The closed set of codes the engine records on failed nodes (`NodeEvent.errorCode`), grouped by
 * the failure class they belong to (events.ts: `FailureClass`). A new code is added here, where
 * the credit and ladder code that reads events sees it.
 */
import { MODEL_ERROR_CODES, type ModelErrorCode } from '../model/errors.ts';

/** Codes the engine itself raises (core/engine), by failure class. */
export const ENGINE_ERROR_CODES = [
  // wiring: the graph's fault -> wiredBy
  'UNKNOWN_TOOL',
  'MISSING_PORT',
  'MISSING_INPUT',
  'MISSING_FIELD',
  'PORT_TYPE_MISMATCH',
  'INVALID_CONFIG',
  'HOP_LIMIT',
  // wiring faults of a designed node the validator rejected (core/design)
  'DANGLING_EDGE',
  'UNBOUNDED_CYCLE',
  'UNKNOWN_PORT',
  // execution: the node's own fault -> runBy
  'AGENT_ERROR',
  'UNPARSABLE_OUTPUT',
  'CONTRACT_VIOLATION',
  'TIMEOUT',
  'TOOL_ERROR',
  // the designer's output parsed but no node of it can run (no nodes, no answer, over budget): core/design
  'INVALID_DESIGN',
  // cascade
  'UPSTREAM_FAILED',
  // infrastructure: the harness's own fault, never blamed on a role
  'CANCELLED',
] as const;

/**
 * A node failure's code: one of the engine's, or (infrastructure) the model's own code for a
 * model-side failure (core/model/errors.ts); a model abort is recorded as `CANCELLED`.
 */
export type NodeErrorCode = (typeof ENGINE_ERROR_CODES)[number] | Exclude<ModelErrorCode, 'ABORTED'>;

const CODES: ReadonlySet<string> = new Set<string>([...ENGINE_ERROR_CODES, ...MODEL_ERROR_CODES.filter((c) => c !== 'ABORTED')]);

/** Whether `code` (read back from storage or a recorded call) is a node error code. */
export function isNodeErrorCode(code: string): code is NodeErrorCode {
  return CODES.has(code);
}
