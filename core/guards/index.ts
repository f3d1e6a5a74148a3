export { answerGuard, constantFlag, guardNote, deltaGuardNote, NO_ANSWER, type AnswerGuard, type GuardRun } from './answers.ts';
export { labelClassOf } from './classOf.ts';
export { accuracyByNovelty, type NoveltyAccuracy, type NoveltyRun } from './novelty.ts';
