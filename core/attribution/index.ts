export * from './types.ts';
export { agentKey, HUMAN_SPEAKER, importWhoAndWhen, isHumanStep, normalizeAgent, parseWhoAndWhenLog, WhoAndWhenError, type WhoAndWhenErrorCode } from './whoAndWhen.ts';
export { AttributionError, type AttributionErrorCode } from './errors.ts';
export {
  attributeSurfaced,
  HARNESS_CRASH_RULE,
  logTrace,
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
  cutText,
  fitSteps,
  JUDGE_DEFAULTS,
  JUDGE_METHODS,
  JudgeBudgetError,
  judgeLog,
  judgeRecord,
  parseJsonReply,
  type JudgeCall,
  type JudgeMethod,
  type JudgeOptions,
  type JudgeOutcome,
} from './judge.ts';
export { agentCorrect, NO_PREDICTION, scoreAttribution, stepCorrect } from './score.ts';
export { ATTRIBUTION_METHODS, evaluateAttribution, PAPER_REFERENCE, type AttributionMethod } from './evaluate.ts';
