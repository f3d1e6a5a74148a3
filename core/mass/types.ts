/**
 * The shapes of MASS in Flowlab (Sakana AI, "Multi-Agent Self-Supervision", and its public code):
 * text workflows (designs), the workspaces a run leaves, the self-judge's verdicts, the
 * optimizer's proposals and the inner loop's records. Plain JSON data.
 */
import type { JsonSchema } from '../model/provider.ts';
import type { Grade, Grader, SyncGrader, Task } from '../tasks/types.ts';
import type { CheckRegistry } from '../workflow/checks.ts';

/** What a sub-agent must hand back: reply fields, artefacts (named texts kept as workspace files) and named checks. */
export interface MassContract {
  fields: string[];
  artefacts: string[];
  /** Names from the check registry (core/workflow/checks.ts plus core/mass/checks.ts). */
  checks: string[];
}

/** One sub-agent: its responsibility (`role`), its work (`instruction`) and its contract. */
export interface MassAgent {
  agent_id: string;
  role: string;
  instruction: string;
  contract: MassContract;
  /** A model reference for this agent alone (per-role models); absent: the default model. */
  model?: string;
}

/**
 * One call of the orchestrator to a sub-agent, in order. An agent called again is a recall (it
 * reads its own earlier reply); `reads` names earlier-called agents whose latest replies it gets
 * (a hand-off from one sub-agent to another); `scope` narrows the call.
 */
export interface MassHop {
  agent_id: string;
  reads: string[];
  scope?: string;
  /**
   * Re-delegation (redelegate.ts): when this hop's reply breaks its contract, the orchestrator
   * hands the task, under the same contract, to `to` (this agent again, or another), at most
   * `max` times (1..MAX_REDELEGATIONS).
   */
  redelegate?: { to: string; max: number };
}

/** A normalized design (see design.ts for the written forms). */
export interface MassDesign {
  /** The orchestrator's own role and instruction, when the design gives them. */
  orchestrator?: { role: string; instruction: string };
  agents: MassAgent[];
  hops: MassHop[];
}

/** One validation problem of a design: a code, the path of the field at fault (`agents[1].contract.checks[0]`) and a message. */
export interface MassDesignIssue {
  code: string;
  path: string;
  message: string;
}

/**
 * A task family MASS can run on: the dataset, the bare task prompt of a task (what the
 * orchestrator reads before any design is appended), the schema of the final answer (the
 * decoding grammar of the orchestrator's answer) and the task's external grader.
 */
export interface MassFamily {
  dataset: string;
  prompt(task: Task): string;
  answerSchema: JsonSchema;
  /** Synchronous: the families are procedural, graded exactly (no code runs). */
  grader: SyncGrader;
  /** Named checks a design may attach (built-in ones and the family's). */
  checks: CheckRegistry;
  /**
   * Decoding schemas of contract fields by name (e.g. `tool: {enum: [...]}`); a field not named
   * here decodes as a short string. Lets a tiny model's replies be gradable (edits.ts families).
   */
  fieldSchemas?: Readonly<Record<string, JsonSchema>>;
  /**
   * When set, a designed run's answer is assembled by the `mass_answer` tool (answerTool.ts, no
   * model call) from these reply fields — each from the last reply, in hop order, that holds it —
   * instead of by the orchestrator. The bare task still answers under `answerSchema`.
   */
  answerFields?: readonly string[];
  /** The menu of the constrained edit language (edits.ts); a family with one defaults to it. */
  editMenu?: EditMenu;
  /** A per-task answer grammar (e.g. the forms a task offers); absent: `answerSchema` for every task. */
  answerSchemaOf?(task: Task): JsonSchema;
  /**
   * The family's own pairwise judge prompt (e.g. learn-unit's, in learn-judge's task format, so a
   * judge trained there judges here); absent: MASS's rubric judge (judge.ts).
   */
  pairJudge?: PairJudge;
  /** The class of an answer (`right`, `blind-unit`, ...): what rsi's blind-spot error rate counts. */
  answerClassOf?(answer: unknown, task: Task): string;
}

/**
 * A family's pairwise judge: one workflow node whose prompt reads `input`'s fields and answers
 * `A` or `B` under its grammar. `input` must be a pure function of the two workspaces and the task.
 */
export interface PairJudge {
  /** The judge's workflow document (JSON text), one node named `judge`. */
  workflowText: string;
  input(a: Workspace, b: Workspace, task: Task): Record<string, unknown>;
}

/**
 * What the edit language (edits.ts) may pick from: the checks an edit may add or swap in (each
 * must be a check the family registers) and the instructions an agent may be given, by agent id
 * (`*`: any agent).
 */
export interface EditMenu {
  checks: readonly string[];
  instructions: Readonly<Record<string, readonly string[]>>;
  /**
   * Offer the `guard` op (edits.ts): a menu check AND retries on every hop calling the agent, as
   * one edit (the check-and-ask-again mechanism a small model rarely proposes as two). Stored with
   * the evolution's settings, so evolutions stored before it replay with the menu they had.
   */
  guard?: boolean;
}

/** A chat message of a conversation, as SFT exports it (TRL conversational format). */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** One agent's conversation in a run: the orchestrator's, or a sub-agent's (one per hop). */
export interface Conversation {
  /** `orchestrator`, or the sub-agent's id. */
  agent: string;
  /** The node of the run that held it. */
  nodeId: string;
  /** The chat, in order: system (if any), then user/assistant per model call. */
  messages: ChatMessage[];
}

/**
 * What one run of a workflow (or of the bare task) leaves: the run's answer and grade (the
 * task's external grader), its artefacts (`files`, by `<agent>/<name>`), each agent's
 * conversation, tokens and time. The run itself is an ordinary stored Flowlab run
 * (`experimentId`, `runId`): its trace, credit and ladder are in the store.
 */
export interface Workspace {
  experimentId: string;
  runId: string;
  /** The design version that ran (0 = the first design); null: the bare task. */
  version: number | null;
  status: 'completed' | 'failed' | 'cancelled';
  /** The bare task prompt (no design): what SFT export puts in place of the orchestrator's first prompt. */
  taskPrompt: string;
  /** The design text appended to the task prompt; '' for the bare task. */
  designText: string;
  answer?: string;
  grade: Grade;
  files: Record<string, string>;
  /** conversations[0] is the orchestrator's first call (its plan); then sub-agents in hop order; the orchestrator's answer last. */
  conversations: Conversation[];
  /** Whether any sub-agent ran (for the bare task: whether the orchestrator chose to delegate). */
  delegated: boolean;
  /** Replies one sub-agent handed to another that ran (a hop reading an earlier agent's reply). */
  handoffs: number;
  /** Sub-agent replies that broke their contract (schema or named check), by hop node. */
  contractFailures: Array<{ nodeId: string; agent: string; code: string; message: string }>;
  tokens: { prompt: number; completion: number };
  seconds: number;
}

export type Winner = 'A' | 'B' | 'tie';

/** The rubric MASS's pairwise judge scores against. */
export const MASS_RUBRIC = ['coverage', 'rigour', 'reproducibility', 'presentation', 'engineering', 'task alignment'] as const;

/** The self-judge's answer on one pair. `valid` false: the reply did not parse (then `winner` is `tie`, recorded as such). */
export interface Verdict {
  winner: Winner;
  rationale: string;
  valid: boolean;
  /** The stored run of the judge call, when it was stored. */
  experimentId?: string;
  runId?: string;
  /** false: the judge was not asked (judge.ts `tieWhenSame`: the two answers read the same), the verdict is a tie by rule. */
  asked?: false;
}

/** The optimizer's JSON (MASS public code: the six fields). */
export interface OptimizerProposal {
  improved_multi_agent_design: unknown;
  changes_from_previous: string;
  why_it_should_improve: string;
  evidence_used: string;
  expected_impact: string;
  verification_checks: string;
}

/** How a candidate is compared: `baseline` (the public code) or `direct` (the paper's Algorithm 1). */
export type ChampionRule = 'baseline' | 'direct';
