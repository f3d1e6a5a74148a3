import type { NodeId, RoleName, RunId } from '../ids.ts';
import type { AppliedSettings, CallInput } from '../model/provider.ts';
import type { RepairKind } from '../model/repair.ts';
import type { NodeErrorCode } from './codes.ts';

/** How a node run ended. `cascade`: not run (or run on bad input) because an input came from a failed node. */
export type NodeStatus = 'ok' | 'failed' | 'cascade' | 'skipped';

/**
 * Whose fault a failure is (FloWright, structure-aware credit; docs/credit.md):
 * - `wiring`: the graph's fault (unknown tool, missing/mismatched port, invalid config, hop limit) -> `wiredBy`;
 * - `execution`: the node's own fault (agent error, unparsable or contract-violating output, timeout) -> `runBy`;
 * - `cascade`: an input came from a failed node; no blame;
 * - `infrastructure`: the harness's own fault (model failed to load, runtime error); no blame.
 */
export type FailureClass = 'wiring' | 'execution' | 'cascade' | 'infrastructure';

/** One model call made by a node run: everything needed to audit and replay it. */
export interface ModelCallRecord extends CallInput {
  /** 0-based index of the call within its node attempt. */
  callIndex: number;
  /** Model reference as the role names it. */
  modelRef: string;
  /** Resolved model identity (file name). */
  model: string;
  completion: string;
  promptTokens: number;
  completionTokens: number;
  /** Duration in ms. */
  ms: number;
  /** Epoch ms. */
  startedAt: number;
  stopReason?: string;
  /** Set when the call did not return (error or timeout). */
  error?: string;
  /** Token ids fed to the model (recorded for training: `GenerateRequest.recordTokens`). */
  promptTokenIds?: number[];
  /** Token ids sampled, as the trainer must score them (recorded for training). */
  completionTokenIds?: number[];
  /** The text actually fed to the model (after its chat template), where the provider knows it. */
  renderedPrompt?: string;
  /** A reasoning model's thinking, kept apart from `completion` (never seen by contracts or graders). */
  thinking?: string;
  /**
   * Set when the output under the node's schema was repaired: the completion was not JSON valid
   * under the schema as a whole, and the valid JSON value inside it was taken, from a fenced
   * block (`fenced`) or from prose (`embedded`) (core/model/repair.ts). Absent: taken as written.
   */
  repair?: RepairKind;
  /** The sampler, threads, context and batch size the call ran with (local models). */
  applied?: AppliedSettings;
  /** Prompt tokens actually evaluated; `promptTokens - promptTokensEvaluated` were reused from an earlier call's KV state. */
  promptTokensEvaluated?: number;
}

/** One node run: an append-only trace event, written once, never mutated. */
export interface NodeEvent {
  runId: RunId;
  nodeId: NodeId;
  /** 1-based; loops re-run a node with attempt + 1. */
  attempt: number;
  /** Order of completion within the run, 0-based. */
  seq: number;
  kind: 'agent' | 'tool' | 'skill';
  /** The role whose node this is (agent nodes); tools may have none. */
  role?: RoleName;
  /** Who wired the node into the graph (a role, or `human`). */
  wiredBy: RoleName;
  /** Who ran it (agent and skill nodes: the role; tool nodes: undefined). */
  runBy?: RoleName;
  inputs: Record<string, unknown>;
  output?: unknown;
  status: NodeStatus;
  failureClass?: FailureClass;
  /** Stable error code, e.g. `CONTRACT_VIOLATION`, `TIMEOUT`, `UNKNOWN_TOOL`. */
  errorCode?: NodeErrorCode;
  message?: string;
  /** For cascades: the failed upstream node ids that made this one fail. */
  causes?: NodeId[];
  calls: ModelCallRecord[];
  /** Epoch ms. */
  startedAt: number;
  endedAt: number;
  /** True when a fault was injected into this node (simulated; see core/faults). */
  simulated?: boolean;
  /** The injected fault's kind (`malformed`, `contract`, `error`, `timeout`, `wrong`, `dropped`). */
  fault?: string;
}

/**
 * Where the engine reports node runs as they happen: the live views (the lab runner forwards
 * them as lab events, host/runner.ts) and tests that collect in memory. It is not storage: a run
 * is stored whole, events and calls in one transaction, by `Store.saveRun` (core/store/port.ts)
 * once it ends (core/pipeline/execute.ts).
 */
export interface TraceSink {
  /** Called as each node run ends, with the event as it will be stored. */
  nodeFinished?(event: NodeEvent): void;
  nodeStarted?(info: { runId: RunId; nodeId: NodeId; attempt: number; startedAt: number }): void;
}
