import type { NodeId, RoleName } from '../../ids.ts';
import type { FailureClass, NodeStatus } from '../../trace/events.ts';

/** The part of a graph credit needs: who authored each node, and what feeds what. */
export interface CreditGraph {
  nodes: Array<{
    id: NodeId;
    /** Roles (or `human`) that wired the node in; more than one = shared authorship. */
    wiredBy: RoleName[];
    /** The role that ran it (agent and skill nodes; tools only when a role calls them). */
    runBy?: RoleName;
    /**
     * The node that wrote what this node executes (the code a terminal runs, the expression a
     * tool evaluates), when exactly one node wrote it: the argument's author. Read only for a
     * node no role ran, and only when an edge (not optional) comes from that node. Graph builders
     * set it where they know it: `creditGraphOf` for a role-less tool node whose required inputs
     * all come from one node a role ran; the Who&When trace (core/blame/attribution/surfaced.ts) for a
     * terminal run and the message whose code it ran. An edge alone is never read as authorship.
     */
    argumentFrom?: NodeId;
  }>;
  /** Forward (non-loop) edges. `optional`: the target can run without this input. */
  edges: Array<{ from: NodeId; to: NodeId; optional?: boolean }>;
}

/** What credit reads of one node run (the final attempt of each node). */
export interface CreditEvent {
  nodeId: NodeId;
  attempt: number;
  status: NodeStatus;
  failureClass?: FailureClass;
  errorCode?: string;
  simulated?: boolean;
}

export interface RootFailure {
  nodeId: NodeId;
  failureClass: 'wiring' | 'execution' | 'infrastructure';
  errorCode?: string;
  /** The role blamed; null for infrastructure faults and ambiguous authorship. */
  blamed: RoleName | null;
  /** Set when authorship is shared or unknown: every role that could be to blame. */
  candidates?: RoleName[];
  /**
   * Set when an execution fault was blamed through the node's `argumentFrom`: the node that wrote
   * the argument it executed (the decisive node: its author's message, not the executor's output).
   */
  authorNode?: NodeId;
  simulated?: boolean;
}

export interface Cascade {
  nodeId: NodeId;
  /** Status as recorded: `cascade` (not run) or `failed` (ran on bad input and failed). */
  status: 'cascade' | 'failed';
  /** The root failures it descends from. */
  roots: NodeId[];
}

export interface AmbiguousBlame {
  nodeId: NodeId;
  candidates: RoleName[];
  reason: string;
}

/** Per role: F_ρ (root failures blamed on it) and V_ρ (nodes it authored). */
export interface RoleCredit {
  /** Root failures blamed on this role (unambiguous only). */
  rootFailures: NodeId[];
  /** Nodes this role wired or ran, or wrote the argument of (`argumentFrom`, when it is read). */
  authored: NodeId[];
  /** c_ρ = −|F_ρ| / |V_ρ| (0 when the role authored nothing). */
  credit: number;
}

/** Structure-aware credit of one run (FloWright §credit): plain data. */
export interface CreditResult {
  roots: RootFailure[];
  cascades: Cascade[];
  byRole: Record<string, RoleCredit>;
  ambiguous: AmbiguousBlame[];
  /** Root failures of class infrastructure: the harness's fault, blamed on no role. */
  infrastructure: NodeId[];
  /**
   * True when no node failed but the answer is wrong: structure cannot see it; only the
   * correctness rung carries it. False when the run had failures or was correct (or ungraded).
   */
  silent: boolean;
}
