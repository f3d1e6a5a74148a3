/**
 * The lab's API for forks (types only; core/experiments/fork.ts does the work, docs/fork.md):
 * `forkRun` re-runs a stored run from one node run with one intervention (a lab method: it loads
 * the run's models for the live part), `listForks` reads a run's link to its parent and its own
 * forks (a store read). Plain, JSON-safe data; imports only types, so the renderer can use it.
 */

/** `forkRun`'s payload: the run, the node run, and exactly one intervention. */
export interface ForkRunRequest {
  runId: string;
  nodeId: string;
  /** 1-based; default: the node's first attempt that ran. */
  attempt?: number;
  /** Replace the node's output (an agent node's completion text; a tool node's result). */
  output?: string;
  /** Replace the node's prompt template. */
  prompt?: string;
  /** The fork's run seed. */
  seed?: number;
  /** Another model (an absolute GGUF path in the host's model folders) for a role, from the node run on. */
  roleModel?: { role: string; path: string };
  /** CPU threads of the live models. */
  threads?: number;
}

/** One fork as the lists show it. */
export interface ForkSummary {
  runId: string;
  experimentId: string;
  parentRunId: string;
  nodeId: string;
  attempt: number;
  /** `output`, `prompt`, `role-model`, `seed` or `unfault`. */
  intervention: string;
  status: 'completed' | 'failed' | 'cancelled';
  correct: boolean;
  answer?: string;
  createdAt?: number;
}

/** `forkRun`'s answer: the stored fork and where its model calls were answered. */
export interface ForkRunResult extends ForkSummary {
  parentCorrect: boolean;
  /** Calls served from the parent's recording (upstream), by node. */
  recorded: Record<string, number>;
  /** Calls answered by a live model, by node. */
  live: Record<string, number>;
  modelsLoaded: number;
}

/** `listForks`' answer for one run: its parent (when it is a fork) and its forks, oldest first. */
export interface RunForks {
  runId: string;
  parent?: ForkSummary;
  forks: ForkSummary[];
}

/** The fork methods of `FlowlabApi`. */
export interface ForkApiAdditions {
  /**
   * Forks a stored run (core/experiments forkRun) and stores the fork linked to it. Errors:
   * `NOT_FOUND` (no run), `BAD_REQUEST` (no or several interventions, an unknown node, a node that
   * never ran, an incomplete recording: the message says which), `UNAVAILABLE` (a host without
   * models), `BUSY` (a model file in use).
   */
  forkRun(payload: ForkRunRequest): Promise<ForkRunResult>;
  /** A run's parent link and its forks. Errors: `NOT_FOUND`. */
  listForks(payload: { runId: string }): RunForks;
}

/** What a lab host adds for forks (optional: hosts without models answer `forkRun` with UNAVAILABLE). */
export interface ForkHost {
  forkRun?(payload: ForkRunRequest): ForkRunResult | Promise<ForkRunResult>;
}
