/**
 * MASS's self-judge: the same model compares two workspaces pairwise against a rubric (coverage,
 * rigour, reproducibility, presentation, engineering, task alignment) and answers
 * `{winner: A|B|tie, rationale}` under a JSON-schema grammar (MASS public code:
 * `evaluation_claudecodex/pairwise_schema.py`). Each judgment is one call, stored as an ordinary
 * one-node Flowlab run (stored.ts), so it is kept with its prompt and replayable without the model.
 * The judge sees what the agents produced, never the task's external grade.
 */
import type { ModelProvider } from '../model/provider.ts';
import { openStore, type Store } from '../store/index.ts';
import type { Grade, Grader, Task } from '../tasks/types.ts';
import { defaultTools } from '../tools/index.ts';
import { CheckRegistry } from '../workflow/checks.ts';
import { answerValue, runStep, type StepDeps } from './stored.ts';
import type { PairJudge, Verdict, Winner, Workspace } from './types.ts';

export const VERDICT_SCHEMA = {
  type: 'object',
  properties: { winner: { enum: ['A', 'B', 'tie'] }, rationale: { type: 'string', maxLength: 120 } },
  required: ['winner', 'rationale'],
  additionalProperties: false,
};

/** Longest evidence text of one workspace in the judge's prompt, characters. */
export const EVIDENCE_CHARS = 260;

/**
 * A workspace as the judge (and the optimizer) read it: the answer, each sub-agent's last reply,
 * contract failures and tokens, clipped to `max` characters. The external grade is left out.
 */
export function evidenceOf(ws: Workspace, max = EVIDENCE_CHARS): string {
  const replies = ws.conversations
    .filter((c) => c.agent !== 'orchestrator')
    .map((c) => `${c.agent}: ${c.messages.filter((m) => m.role === 'assistant').at(-1)?.content.replace(/\s+/g, ' ').trim() ?? ''}`);
  const parts = [`answer: ${ws.answer ?? '(none)'}`, ...replies];
  if (ws.contractFailures.length) parts.push(`broken contracts: ${ws.contractFailures.map((f) => f.agent).join(', ')}`);
  parts.push(`tokens: ${ws.tokens.prompt + ws.tokens.completion}`);
  const text = parts.join('; ');
  return text.length > max ? text.slice(0, max - 3) + '...' : text;
}

/** Scores a judge run 1 when its reply is a verdict of the schema (the engine already enforces it), else 0. */
const verdictGrader: Grader = {
  grade(answer: unknown): Grade {
    const v = readVerdict(answer);
    return v ? { score: 1, correct: true, extracted: v.winner, expected: '', reason: 'a well-formed verdict' } : { score: 0, correct: false, extracted: null, expected: '', reason: 'no well-formed verdict' };
  },
};

function readVerdict(answer: unknown): { winner: Winner; rationale: string } | undefined {
  const v = answerValue(answer);
  // A family's pairwise judge (types.ts PairJudge) answers a bare `A` or `B` (stored as the text, or as JSON text).
  const bare = typeof answer === 'string' ? answer.trim() : undefined;
  if (bare === 'A' || bare === 'B') return { winner: bare, rationale: '' };
  if (v === 'A' || v === 'B') return { winner: v, rationale: '' };
  const o = v as { winner?: unknown; rationale?: unknown } | null;
  if (!o || typeof o !== 'object' || (o.winner !== 'A' && o.winner !== 'B' && o.winner !== 'tie')) return undefined;
  return { winner: o.winner, rationale: typeof o.rationale === 'string' ? o.rationale : '' };
}

export interface JudgeOptions extends Partial<Omit<StepDeps, 'provider' | 'store'>> {
  store?: Store;
  /** The judge step's experiment id (default `judge-<a run>-<b run>`); the same id reads a stored verdict back. */
  experimentId?: string;
  /** The task both workspaces solved (its id names the step); default: a task named after the pair. */
  task?: Task;
  seed?: number;
  maxTokens?: number;
  /** Recorded in the step's config (`config.mass`). */
  about?: Record<string, unknown>;
  /** The family's own judge prompt (types.ts PairJudge) instead of MASS's rubric judge. */
  pairJudge?: PairJudge;
  /**
   * With `pairJudge`: when the two answers the judge would read are the same text (`a` = `b` in
   * its input), return a tie without asking (`asked: false`, nothing stored): a judge shown two
   * identical answers has nothing to judge, and an `A` | `B` grammar would make it pick a side by
   * position. Used by `evolve --judge pair` (inner.ts).
   */
  tieWhenSame?: boolean;
}

/**
 * A family's pairwise judge workflow in learn-judge's task format (examples/judge-learn.yaml,
 * examples/judge-design.yaml): one `judge` node of kind verifier with no instructions, the prompt
 * `Request: {{request}}\nA: {{a}}\nB: {{b}}\nRight:\n` (the YAML block keeps its final newline),
 * a 4-token budget and an `A` | `B` grammar, as JSON text. `name` and `description` are the YAML's.
 */
export function requestPairJudgeWorkflow(name: string, description: string): string {
  return JSON.stringify(
    {
      name,
      description,
      roles: { judge: { kind: 'verifier', instructions: '' } },
      nodes: [
        {
          id: 'judge',
          role: 'judge',
          inputs: { request: 'task.request', a: 'task.a', b: 'task.b' },
          prompt: 'Request: {{request}}\nA: {{a}}\nB: {{b}}\nRight:\n',
          max_tokens: 4,
          output: { schema: { enum: ['A', 'B'] } },
        },
      ],
      answer: 'judge',
    },
    null,
    1,
  );
}

/** The judge's workflow document (one node). */
export function judgeWorkflow(maxTokens = 64): string {
  return JSON.stringify(
    {
      name: 'mass-judge',
      description: 'MASS self-judge: which of two workspaces is better, against the rubric',
      roles: { judge: { kind: 'verifier', instructions: 'You compare two team results for the same task and pick the better one.' } },
      nodes: [
        {
          id: 'judge',
          role: 'judge',
          inputs: { task: 'task.mass_task', rubric: 'task.rubric', a: 'task.a', b: 'task.b' },
          prompt: '{{task}}\nRubric: {{rubric}}.\nA: {{a}}\nB: {{b}}\nWhich is better, A or B? JSON:',
          max_tokens: maxTokens,
          output: { schema: VERDICT_SCHEMA },
        },
      ],
      answer: 'judge',
    },
    null,
    1,
  );
}

/**
 * Judges workspace `a` (shown as A) against `b` (shown as B) on `rubric` with `provider` (the
 * self-judge: the same model). Returns the verdict; a reply that breaks the grammar or the schema
 * (the judge run failed) is recorded and returned as `{winner: 'tie', valid: false}` with the
 * failure as rationale, never guessed. Orientation is the caller's: swap `a` and `b` to show the
 * other order. With `tieWhenSame` (and `pairJudge`), two answers that read the same are a tie
 * without a call (`asked: false`). Errors: those of `runStep` (stored.ts).
 */
export async function judgePair(a: Workspace, b: Workspace, rubric: readonly string[], provider: ModelProvider, opts: JudgeOptions = {}): Promise<Verdict> {
  const task: Task = opts.task ?? { id: `judge/${a.runId}/${b.runId}`, index: 0, input: {}, expected: '' };
  if (opts.pairJudge && opts.tieWhenSame) {
    const shown = opts.pairJudge.input(a, b, task);
    if (shown.a === shown.b) return { winner: 'tie', rationale: `both answers read "${String(shown.a)}": a tie, the judge not asked`, valid: true, asked: false };
  }
  const experimentId = opts.experimentId ?? `judge-${a.runId}-${b.runId}`.replace(/\//g, '-');
  const own = opts.store ? undefined : openStore(':memory:');
  const store = opts.store ?? own!;
  try {
    const step = await runStep(
      { store, provider, providerFor: opts.providerFor, tools: opts.tools ?? defaultTools(), signal: opts.signal, config: opts.config, modelFor: opts.modelFor, ...(opts.beforeSave && { beforeSave: opts.beforeSave }) },
      {
        experimentId,
        workflowText: opts.pairJudge ? opts.pairJudge.workflowText : judgeWorkflow(opts.maxTokens),
        task,
        input: opts.pairJudge
          ? { ...opts.pairJudge.input(a, b, task), a_run: a.runId, b_run: b.runId }
          : { mass_task: a.taskPrompt, rubric: rubric.join(', '), a: evidenceOf(a), b: evidenceOf(b), a_run: a.runId, b_run: b.runId },
        grader: verdictGrader,
        checks: new CheckRegistry(),
        seed: opts.seed ?? 1,
        about: { step: 'judge', a: a.runId, b: b.runId, ...opts.about },
      },
    );
    const v = step.run.status === 'completed' ? readVerdict(step.run.answer) : undefined;
    const ids = { experimentId: step.run.experimentId, runId: step.run.runId };
    if (v) return { ...v, valid: true, ...ids };
    const why = step.events.find((e) => e.status === 'failed')?.message ?? 'no verdict';
    return { winner: 'tie', rationale: `(no valid verdict: ${why})`, valid: false, ...ids };
  } finally {
    own?.close();
  }
}
