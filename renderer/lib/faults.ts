/**
 * SIMULATED fault injection rows of the Run view, turned into the host's `role=kind@rate`
 * specs (as `flowlab blame-eval --inject`). Pure.
 */
import type { DesignFaultKind, FaultKind as ExecutionFaultKind } from '../../core/api/client.ts';

/** An execution fault kind (any role) or a wiring fault kind (a design stage's designer only). */
export type FaultKind = ExecutionFaultKind | DesignFaultKind;

/** Kinds the injector knows (core/faults/inject.ts FAULT_KINDS; kept in step by the type). */
export const FAULT_KINDS = ['malformed', 'contract', 'error', 'timeout', 'wrong', 'dropped', 'dangling_edge', 'unknown_tool', 'missing_port', 'unbounded_loop'] as const satisfies readonly FaultKind[];

/** What each kind does, for the select's titles. */
export const FAULT_HELP: Record<FaultKind, string> = {
  malformed: 'output that does not parse',
  contract: 'parses but breaks the contract',
  error: 'the agent call throws',
  timeout: 'the node times out at once',
  wrong: 'valid but wrong output (structure cannot see it)',
  dropped: 'real output with a field dropped',
  dangling_edge: 'designer only: an input of a designed node reads a node that is not there',
  unknown_tool: 'designer only: a designed tool node names a tool outside the catalogue',
  missing_port: 'designer only: a required port of a designed tool node is left unwired',
  unbounded_loop: 'designer only: a designed node reads a later one, closing a cycle without max_iterations',
};

export interface FaultRow {
  role: string;
  kind: FaultKind;
  /** Probability per node run, 0..1. */
  rate: number;
}

/** The specs of valid rows, and a message per invalid row (by index). */
export function faultSpecs(rows: readonly FaultRow[], roles: readonly string[]): { specs: string[]; problems: Array<{ index: number; message: string }> } {
  const specs: string[] = [];
  const problems: Array<{ index: number; message: string }> = [];
  rows.forEach((row, index) => {
    if (!roles.includes(row.role)) problems.push({ index, message: `"${row.role}" is not a role of this workflow` });
    else if (!(row.rate >= 0 && row.rate <= 1)) problems.push({ index, message: 'rate must be between 0 and 1' });
    else if (!(FAULT_KINDS as readonly string[]).includes(row.kind)) problems.push({ index, message: `unknown fault kind "${row.kind}"` });
    else specs.push(`${row.role}=${row.kind}@${row.rate}`);
  });
  return { specs, problems };
}
