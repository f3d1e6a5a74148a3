/**
 * What a design node hands back and the trace keeps (its NodeEvent `output`): the design text,
 * the document it was compiled from, its validation result and the compiled graph. Plain JSON,
 * so a stored run can be shown, scored and replayed without the model (core/design/effective.ts).
 */
import type { DesignNotation, DocPath } from '../workflow/index.ts';

/** One validation message of a design, located by its path inside the design document. */
export interface DesignIssue {
  /** A SpecIssueCode, or the node error code it became on its node (DANGLING_EDGE, ...). */
  code: string;
  path: Array<string | number>;
  message: string;
  /** The designed node that owns the issue (recorded as a wiring root failure); absent: design-level. */
  nodeId?: string;
}

/** The compiled graph of a design, as the trace shows it. */
export interface DesignGraphView {
  nodes: Array<{
    id: string;
    kind: 'agent' | 'tool' | 'skill';
    role?: string;
    tool?: string;
    skill?: string;
    wiredBy: string;
    runBy?: string;
    inputs: Array<{ port: string; from: string }>;
    /** Where the node is written in the design document. */
    path: DocPath;
    /** The wiring fault the validator found in it, if any. */
    wiringFault?: { code: string; message: string };
  }>;
  edges: Array<{ from: string; to: string; type: 'data' | 'control'; port?: string; maxIterations?: number }>;
  answer?: string;
}

/** A SIMULATED wiring fault injected into a design before it was compiled (core/faults/design.ts). */
export interface DesignFaultMark {
  kind: string;
  /** The designed node the fault was put into (the ground truth of blame-eval). */
  nodeId: string;
  simulated: true;
}

export interface DesignRecord {
  notation: DesignNotation;
  /** What the designer wrote: the model's completion. */
  text: string;
  /**
   * The design document that was compiled: the parsed completion, or (with a SIMULATED fault)
   * the tampered copy of it. Absent when the completion did not parse.
   */
  document?: unknown;
  usable: boolean;
  /** Why nothing of the design could run (usable false). */
  problem?: string;
  issues: DesignIssue[];
  graph?: DesignGraphView;
  fault?: DesignFaultMark;
}

/** Whether a stored node output is a DesignRecord (reads untrusted stored JSON defensively). */
export function isDesignRecord(v: unknown): v is DesignRecord {
  const r = v as Partial<DesignRecord> | null;
  return !!r && typeof r === 'object' && typeof r.text === 'string' && typeof r.usable === 'boolean' && Array.isArray(r.issues) && typeof r.notation === 'string';
}
