/**
 * Types of failure attribution on the Who&When benchmark ("Which Agent Causes Task Failures and
 * When? On Automated Failure Attribution of LLM Multi-Agent Systems", Zhang, Yin et al., ICML 2025,
 * arXiv 2505.00212). Plain data only.
 */

/** Which half of the benchmark a log's JSON shape belongs to. */
export type WhoAndWhenVariant = 'hand-crafted' | 'algorithm-generated';

/** One message of a log's `history`. */
export interface LogStep {
  /** 0-based index into `history` (the benchmark's `mistake_step` counts the same way). */
  index: number;
  /** The speaking agent, normalised (see `normalizeAgent`): `Orchestrator (thought)` -> `Orchestrator`. */
  agent: string;
  /** The speaker exactly as the file names it (`role` in Hand-Crafted, `name` in Algorithm-Generated). */
  rawAgent: string;
  /** The chat role (`user`/`assistant`) of Algorithm-Generated logs; absent in Hand-Crafted. */
  chatRole?: string;
  content: string;
}

/** The ground-truth label of one failed log. */
export interface AttributionLabel {
  /** `mistake_agent`, normalised like step agents. */
  agent: string;
  /** `mistake_agent` as written in the file. */
  rawAgent: string;
  /** `Number(mistake_step)`: index of the decisive step. */
  step: number;
  /** `mistake_reason`. */
  reason: string;
}

/** One Who&When log, imported (see `importWhoAndWhen`). */
export interface WhoAndWhenLog {
  /** File base name without `.json` (e.g. `"12"`): the log's id, also the judge's `taskKey`. */
  id: string;
  /** Absolute path of the file. */
  file: string;
  variant: WhoAndWhenVariant;
  question: string;
  groundTruth: string;
  questionId?: string;
  level?: string | number;
  /** `is_correct` (Algorithm-Generated) or `is_corrected` (Hand-Crafted); null when absent or not a boolean. */
  isCorrect: boolean | null;
  steps: LogStep[];
  /** Distinct normalised agents in order of first appearance (includes `human` when it speaks). */
  agents: string[];
  label: AttributionLabel;
  /**
   * Set when the label cannot be scored (imported with `badLabel: 'unscorable'`), or the file is
   * not a log at all (`badLog: 'unscorable'`, no steps; e.g. `not valid JSON (...)`): why, e.g.
   * `"mistake_step" "99" is not an integer in range 0..20`. `label.step` is then the number read
   * (NaN when not a number) and `label.agent` may be empty. Methods skip such logs; reports count them.
   */
  unscorable?: string;
}

/** A method's answer for one log: who made the decisive mistake, and at which step. */
export interface Prediction {
  agent: string;
  step: number;
}

/** One log's outcome under one method. `prediction` null = not covered (the method gave no answer). */
export interface AttributionRecord {
  logId: string;
  /** `rawAgent`: `mistake_agent` as written (the official scorer compares it unnormalised). */
  label: { agent: string; step: number; rawAgent?: string };
  prediction: Prediction | null;
  /** Why there is no prediction, or what the method saw (a surfaced rule, a judge's parse failure). */
  note?: string;
  /** Model calls made for this log (0 for `surfaced`). */
  calls?: number;
}

/** An accuracy over all logs (uncovered logs count as wrong) and over covered logs only. */
export interface Accuracy {
  /** Correct / logs (0 when there are no logs). */
  overAll: number;
  /** Correct / covered; null when no log is covered. */
  overCovered: number | null;
}

/** Per labelled agent: how the method did on the logs whose `mistake_agent` is this agent. */
export interface AgentConfusion {
  agent: string;
  labelled: number;
  covered: number;
  agentCorrect: number;
  stepCorrect: number;
  /** Predicted agent -> count; uncovered logs are counted under `(none)`. */
  predictedAs: Record<string, number>;
}

/** Scores of one method over a set of logs (see `scoreAttribution`). */
export interface AttributionScore {
  logs: number;
  covered: number;
  agentAccuracy: Accuracy;
  stepAccuracy: Accuracy;
  /** Sorted by `labelled` descending, then name. */
  perAgent: AgentConfusion[];
}

/** Accuracies as the benchmark's own scorer counts them (see `scoreOfficial`). */
export interface OfficialScore {
  logs: number;
  covered: number;
  agentAccuracy: Accuracy;
  stepAccuracy: Accuracy;
}

/** A log left out of scoring because its label cannot be scored. */
export interface UnscorableLog {
  logId: string;
  file: string;
  reason: string;
}
