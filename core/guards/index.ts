export { answerGuard, constantFlag, guardNote, deltaGuardNote, NO_ANSWER, type AnswerGuard, type GuardRun } from './answers.ts';
export { labelClassOf } from './classOf.ts';
export { knownLabelClassOf, LEARN_DESIGN_CLASS_DATASETS } from './labelClass.ts';
export { accuracyByNovelty, type NoveltyAccuracy, type NoveltyRun } from './novelty.ts';
export { auditJudge, cohensKappa, wilsonInterval, graderVerdict, formatJudgeAudit, DEFAULT_JUDGE_THRESHOLDS, type JudgeAudit, type JudgeThresholds, type AuditedPair, type SwappedPair, type PairVerdict3, type Proportion } from './judgeAudit.ts';
