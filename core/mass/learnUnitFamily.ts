/**
 * `learn-unit` as a MASS family (issue 25, parts 3-4): the solver answers a measurement request
 * from a tool reading under the task's grammar (core/tasks/learnUnit.ts: the right answer, the
 * blind spot — the right number in the other unit — and the ordinary mistakes), graded by the
 * family's grader; the self-judge compares two runs' answers in exactly learn-judge's task
 * format (examples/judge-learn.yaml: `Request: …\nA: …\nB: …\nRight:` → `A` | `B` under an enum
 * grammar), so a judge trained on learn-judge judges here without a new prompt.
 */
import { learnUnitGrader, unitAnswerText, unitMistakeOf, type UnitTaskMeta } from '../tasks/learnUnit.ts';
import type { Task } from '../tasks/types.ts';
import type { CheckRegistry } from '../workflow/checks.ts';
import { requestPairJudgeWorkflow } from './judge.ts';
import type { MassFamily, PairJudge, Workspace } from './types.ts';

/** The solver's task prompt: the tool reading (a number, no unit) and the request. */
export function learnUnitPrompt(task: Task): string {
  return `Tool reading: ${String(task.input.reading)}\nRequest: ${String(task.input.request)}\nAnswer:`;
}

/**
 * The judge's workflow: examples/judge-learn.yaml as a JSON document — the same role (kind
 * verifier, no instructions), the same prompt text (the YAML block keeps its final newline), the
 * same 4-token budget and `A` | `B` grammar. learnUnitFamily.test.ts checks the rendered prompt
 * against the YAML's byte for byte.
 */
export const LEARN_UNIT_JUDGE_WORKFLOW = requestPairJudgeWorkflow('judge-learn', 'A judge names which of two answers to a measurement request is right.');

/** A run's answer as the judge reads it: the decoded answer text, `none` when the run gave none. */
export function judgedAnswer(ws: Workspace): string {
  return unitAnswerText(ws.answer) || 'none';
}

export const learnUnitJudge: PairJudge = {
  workflowText: LEARN_UNIT_JUDGE_WORKFLOW,
  input: (a, b, task) => ({ request: String(task.input.request), a: judgedAnswer(a), b: judgedAnswer(b) }),
};

/** The learn-unit family with `checks` (the MASS registry; family.ts passes it). */
export function learnUnitFamily(checks: CheckRegistry): MassFamily {
  return {
    dataset: 'learn-unit',
    prompt: learnUnitPrompt,
    answerSchema: { type: 'string', maxLength: 12 },
    answerSchemaOf: (task) => ({ enum: [...(task.meta as unknown as UnitTaskMeta).options] }),
    grader: learnUnitGrader,
    checks,
    pairJudge: learnUnitJudge,
    answerClassOf: unitMistakeOf,
  };
}
