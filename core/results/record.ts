/**
 * A scored run: what one task through the workflow produced, with its grade, its credit
 * (core/blame/credit) and its reward ladder (core/reward). It sits above trace, credit and reward
 * because it holds all three; the trace module only describes node events, so the imports run
 * one way: results -> reward -> credit -> trace.
 */
import type { CreditResult } from '../blame/credit/types.ts';
import type { ExperimentId, RunId } from '../ids.ts';
import type { RoleLadder } from '../reward/ladder.ts';
import type { FailureClass } from '../trace/events.ts';

/** The outcome of one run (one task through the workflow). */
export interface RunRecord {
  runId: RunId;
  experimentId: ExperimentId;
  /** Index of the task within the experiment's task list. */
  taskIndex: number;
  taskId: string;
  status: 'completed' | 'failed' | 'cancelled';
  /** The final answer text (output of the answer node), if the run reached one. */
  answer?: string;
  expected?: string;
  /** Grader score 0..1. */
  score: number;
  correct: boolean;
  seed: number;
  promptTokens: number;
  completionTokens: number;
  startedAt: number;
  endedAt: number;
  /** Count of node failures per class. */
  failures: Partial<Record<FailureClass, number>>;
  /** Structure-aware credit of the run (core/blame/credit). */
  credit?: CreditResult;
  /** The reward ladder per role (core/reward). */
  ladder?: Record<string, RoleLadder>;
  /** True when faults were injected into this run (simulated; core/faults). */
  simulated?: boolean;
}
