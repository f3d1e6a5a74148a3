export { answerGuard, constantFlag, guardNote, deltaGuardNote, NO_ANSWER, type AnswerGuard, type GuardRun } from './answers.ts';
