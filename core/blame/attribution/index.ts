export * from './types.ts';
export { agentKey, HUMAN_SPEAKER, importWhoAndWhen, isHumanStep, normalizeAgent, parseWhoAndWhenLog, unreadableLog, WhoAndWhenError, type WhoAndWhenErrorCode } from './whoAndWhen.ts';
export { AttributionError, type AttributionErrorCode } from './errors.ts';
export {
  addresseeOf,
  hasCodeBlock,
  impossibleInstruction,
  isTerminalAgent,
  reportsNoCode,
  teamAuthorship,
  type AuthorshipOptions,
  type ImpossibleInstruction,
  type StepAuthorship,
} from './authorship.ts';
export {
  attributeSurfaced,
  HARNESS_CRASH_RULE,
  IMPOSSIBLE_INSTRUCTION_RULE,
  logTrace,
  NO_CODE_RULE,
  stepNodeId,
  surfaceFailure,
  surfacedRecord,
  SURFACING_RULES,
  type LogTrace,
  type SurfacedAttribution,
  type SurfacedFailure,
  type SurfacingOptions,
  type SurfacingRule,
} from './surfaced.ts';
export {
  baseRecord,
  firstWorkerPrediction,
  firstWorkerRecord,
  hybridRecord,
  majorityAgent,
  majorityPrediction,
  majorityRecord,
  orchestratorsOf,
  STRUCTURAL_OPTIONS,
} from './baselines.ts';
export { narrowedView, type JudgeView } from './narrowed.ts';
export {
  cutText,
  fitSteps,
  JUDGE_DEFAULTS,
  JUDGE_METHODS,
  JUDGE_NODE,
  JudgeBudgetError,
  judgeCallRecord,
  judgeLog,
  judgeRecord,
  LLM_JUDGE_METHODS,
  NARROWED_JUDGE,
  parseJsonReply,
  stepRanges,
  type JudgeCall,
  type JudgeCallRecord,
  type JudgeMethod,
  type JudgeOptions,
  type JudgeOutcome,
  type LlmJudgeMethod,
} from './judge.ts';
export { agentCorrect, agentCorrectOfficial, NO_PREDICTION, scoreAttribution, scoreOfficial, stepCorrect, stepCorrectOfficial } from './score.ts';
export {
  ATTRIBUTION_METHODS,
  DEFAULT_HARNESS_CRASH,
  evaluateAttribution,
  isJudgeMethod,
  MODEL_FREE_METHODS,
  PAPER_REFERENCE,
  type AttributionEvaluation,
  type AttributionMethod,
} from './evaluate.ts';
