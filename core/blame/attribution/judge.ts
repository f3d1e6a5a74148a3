import { asRoleName } from '../../ids.ts';
import { ModelError, type JsonSchema, type ModelProvider, type SamplingParams } from '../../model/index.ts';
import type { ModelCallRecord } from '../../trace/index.ts';
import { AttributionError } from './errors.ts';
import { narrowedView, type JudgeView } from './narrowed.ts';
import type { SurfacingOptions } from './surfaced.ts';
import { agentKey, isHumanStep } from './whoAndWhen.ts';
import type { AttributionRecord, LogStep, Prediction, WhoAndWhenLog } from './types.ts';

/**
 * The three LLM-judge baselines of the Who&When paper (Zhang, Yin et al., "Which Agent Causes Task
 * Failures and When?", ICML 2025, arXiv 2505.00212), run over any `ModelProvider`:
 * - `all-at-once`: the whole log in one prompt; the judge names the agent and the step.
 * - `step-by-step`: steps in order; "is this step the decisive mistake?" until the first yes.
 * - `binary-search`: "which half holds the decisive mistake?", recursing into that half.
 * The prompts are ours (the paper's wording is not copied); answers are JSON under a JSON-schema
 * grammar. The paper's best method finds the agent in 54–55% of logs and the step in at most 25.5%.
 */
export type JudgeMethod = 'all-at-once' | 'step-by-step' | 'binary-search';
export const JUDGE_METHODS: readonly JudgeMethod[] = ['all-at-once', 'step-by-step', 'binary-search'];

/**
 * Flowlab's judge where structure is blind: all-at-once over the narrowed view of a log
 * (`narrowedView`: the steps up to the first surfaced error, the author candidates structure
 * cannot separate, and a line on what structure saw).
 */
export const NARROWED_JUDGE = 'narrowed-judge';
/** Every LLM-judge method: the paper's three and the narrowed judge. */
export type LlmJudgeMethod = JudgeMethod | typeof NARROWED_JUDGE;
export const LLM_JUDGE_METHODS: readonly LlmJudgeMethod[] = [...JUDGE_METHODS, NARROWED_JUDGE];

/** Options of the judges. */
export interface JudgeOptions {
  provider: ModelProvider;
  /** Model reference passed as `request.model`. Default `default`. */
  model?: string;
  /** Role name passed as `request.role`. Default `judge`. */
  role?: string;
  /** Each message (and the task, and the correct answer) is cut to this many characters. Default 300. */
  maxChars?: number;
  /**
   * Character budget of one call: system text plus prompt. Messages are cut shorter than
   * `maxChars`, and if that is not enough the middle steps are left out, until the call fits; the
   * prompt says so. Characters are not tokens: with a 512-token vocabulary (the shared tiny model)
   * expect ~1.5 characters per token on English text, fewer on other scripts. Default 4000.
   */
  maxPromptChars?: number;
  /** Completion tokens per call. Default 96. */
  maxTokens?: number;
  /** Call `i` of a log uses seed `seed + i`. Default 0 (sampling is greedy: temperature 0). */
  seed?: number;
  /** Give the judge the task's correct answer (the paper's "with ground truth" setting). Default true. */
  withGroundTruth?: boolean;
  signal?: AbortSignal;
  /** Sees every call (prompt and reply), e.g. for logging, recording (`judgeCallRecord`) or tests. */
  onCall?: (call: JudgeCall) => void;
  /** The structure the narrowed judge narrows by (default `STRUCTURAL_OPTIONS`). */
  surfacing?: SurfacingOptions;
}

/** Defaults of `JudgeOptions`. */
export const JUDGE_DEFAULTS = { model: 'default', role: 'judge', maxChars: 300, maxPromptChars: 4000, maxTokens: 96, seed: 0, withGroundTruth: true } as const;

/** One judge call as made. */
export interface JudgeCall {
  logId: string;
  method: LlmJudgeMethod;
  callIndex: number;
  system: string;
  prompt: string;
  jsonSchema: JsonSchema;
  /** The model's raw reply. */
  text: string;
  /** The reply parsed and validated, or null when it is not a usable answer. */
  answer: unknown;
  /** The request as sent: role, model reference, seed and sampling parameters (`request.key` is `{taskKey: logId, nodeId: 'judge', attempt: 1, callIndex}`). */
  role: string;
  modelRef: string;
  seed: number;
  params: SamplingParams;
  /** The result: resolved model, token counts, wall time (ms), start (epoch ms) and stop reason. */
  model: string;
  tokens: { prompt: number; completion: number };
  ms: number;
  startedAt: number;
  stopReason?: string;
}

/**
 * A judge call as a recorded model call, the shape `ReplayProvider` (models/replay) answers from
 * (`taskIndex`, `nodeId`, `attempt` and the `ModelCallRecord` fields), plus the log id and method.
 * Replay maps `taskIndex` back to the log id (`taskKeyOf`), so a run replays without a model.
 */
export type JudgeCallRecord = ModelCallRecord & { taskIndex: number; nodeId: string; attempt: number; logId: string; method: LlmJudgeMethod };

/** `call` as a `JudgeCallRecord`; `taskIndex` is the log's position in the evaluated list (any number unique per log). */
export function judgeCallRecord(call: JudgeCall, taskIndex: number): JudgeCallRecord {
  const rec: JudgeCallRecord = {
    taskIndex,
    nodeId: JUDGE_NODE,
    attempt: 1,
    callIndex: call.callIndex,
    logId: call.logId,
    method: call.method,
    role: asRoleName(call.role),
    system: call.system,
    prompt: call.prompt,
    params: call.params,
    seed: call.seed,
    jsonSchema: call.jsonSchema,
    modelRef: call.modelRef,
    model: call.model,
    completion: call.text,
    promptTokens: call.tokens.prompt,
    completionTokens: call.tokens.completion,
    ms: call.ms,
    startedAt: call.startedAt,
  };
  if (call.stopReason !== undefined) rec.stopReason = call.stopReason;
  return rec;
}

/** The `request.key.nodeId` of every judge call. */
export const JUDGE_NODE = 'judge';

/** What a judge concluded on one log. */
export interface JudgeOutcome {
  prediction: Prediction | null;
  calls: number;
  /** Replies that were not a usable answer (bad JSON, unknown agent, step out of range). */
  invalidAnswers: number;
  /** Why there is no prediction (or a model error). */
  note?: string;
}

/** The budget cannot hold even the fixed parts of a prompt. */
export class JudgeBudgetError extends AttributionError {
  override readonly name = 'JudgeBudgetError';
  constructor(message: string) {
    super('JUDGE_BUDGET_TOO_SMALL', message);
  }
}

const SYSTEM = 'You judge logs of multi-agent AI systems that failed a task. Reply with JSON only.';
/** Messages are never cut below this many characters before steps are left out instead. */
const MIN_CAP = 40;

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

/** `s` on one line, cut to `cap` characters with a marker saying how much was cut. */
export function cutText(s: string, cap: number): string {
  const t = oneLine(s);
  return t.length <= cap ? t : `${t.slice(0, cap)} [... ${t.length - cap} more chars]`;
}

function renderSection(steps: readonly LogStep[], cap: number, head: number, tail: number): string {
  const omitted = steps.length - head - tail;
  let note = `(Steps are numbered from 0. Each message is shown in at most ${cap} characters to fit the context budget; longer ones are cut, marked "[... N more chars]".`;
  if (omitted > 0) note += ` Steps ${steps[head]!.index}–${steps[head + omitted - 1]!.index} (${omitted} steps) are left out to fit the budget.`;
  note += ')';
  const lines = [note];
  for (let i = 0; i < head; i++) lines.push(`[${steps[i]!.index}] ${steps[i]!.agent}: ${cutText(steps[i]!.content, cap)}`);
  if (omitted > 0) lines.push(`[... steps ${steps[head]!.index}–${steps[head + omitted - 1]!.index} left out ...]`);
  for (let i = steps.length - tail; i < steps.length; i++) lines.push(`[${steps[i]!.index}] ${steps[i]!.agent}: ${cutText(steps[i]!.content, cap)}`);
  return lines.join('\n');
}

/**
 * Renders steps within `room` characters: every message cut to `maxChars`; if too long, the largest
 * common cut (down to 40 characters) that fits; if still too long, the first and last steps at 40
 * characters with the middle left out. Always says in its first line what was cut or left out.
 * @throws JudgeBudgetError when not even the note fits.
 */
export function fitSteps(steps: readonly LogStep[], room: number, maxChars: number): string {
  if (steps.length === 0) return '(no steps)';
  const n = steps.length;
  const all = (cap: number) => renderSection(steps, cap, n, 0);
  let text = all(maxChars);
  if (text.length <= room) return text;
  const floor = Math.min(MIN_CAP, maxChars);
  if (all(floor).length <= room) {
    let lo = floor; // fits
    let hi = maxChars; // does not fit
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (all(mid).length <= room) lo = mid;
      else hi = mid;
    }
    return all(lo);
  }
  for (let keep = n - 1; keep >= 0; keep--) {
    text = renderSection(steps, floor, Math.ceil(keep / 2), Math.floor(keep / 2));
    if (text.length <= room) return text;
  }
  throw new JudgeBudgetError(`the prompt budget leaves ${room} characters for the log, too few even to say what was left out; raise the prompt budget (--max-prompt-chars) or lower --max-chars`);
}

/** The JSON object in a reply: the whole text, else the span from its first `{` to its last `}`. */
export function parseJsonReply(text: string): Record<string, unknown> | null {
  const tryParse = (s: string) => {
    try {
      const v: unknown = JSON.parse(s);
      return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
    } catch {
      return null;
    }
  };
  const whole = tryParse(text.trim());
  if (whole) return whole;
  const a = text.indexOf('{');
  const b = text.lastIndexOf('}');
  return a >= 0 && b > a ? tryParse(text.slice(a, b + 1)) : null;
}

interface Ctx {
  log: WhoAndWhenLog;
  method: LlmJudgeMethod;
  o: Required<Omit<JudgeOptions, 'signal' | 'onCall' | 'surfacing'>> & Pick<JudgeOptions, 'signal' | 'onCall' | 'surfacing'>;
  calls: number;
  invalid: number;
  /** Candidate steps: every step not spoken by the task poser. */
  candidates: LogStep[];
  agents: string[];
}

function intro(ctx: Ctx, agents: readonly string[] = ctx.agents): string {
  const { log, o } = ctx;
  const lines = ['A team of AI agents worked on the task below and failed.', `Task: ${cutText(log.question, o.maxChars)}`];
  if (o.withGroundTruth) lines.push(`Correct answer: ${cutText(log.groundTruth, o.maxChars)}`);
  lines.push(`Agents: ${agents.join(', ')}`);
  return lines.join('\n');
}

/** Builds a prompt `head + steps + tail` within the budget. */
function buildPrompt(ctx: Ctx, head: string, steps: readonly LogStep[], tail: string): string {
  const room = ctx.o.maxPromptChars - SYSTEM.length - head.length - tail.length - 2;
  if (room < 0) {
    throw new JudgeBudgetError(`--max-prompt-chars ${ctx.o.maxPromptChars} cannot hold the task and question of log ${ctx.log.id} (${SYSTEM.length + head.length + tail.length + 2} characters at --max-chars ${ctx.o.maxChars}); raise it or lower --max-chars`);
  }
  return `${head}\n${fitSteps(steps, room, ctx.o.maxChars)}\n${tail}`;
}

async function ask(ctx: Ctx, prompt: string, jsonSchema: JsonSchema, validate: (v: Record<string, unknown>) => unknown): Promise<unknown> {
  const callIndex = ctx.calls++;
  const params: SamplingParams = { temperature: 0, maxTokens: ctx.o.maxTokens };
  const seed = ctx.o.seed + callIndex;
  const startedAt = Date.now();
  const res = await ctx.o.provider.generate({
    role: asRoleName(ctx.o.role),
    model: ctx.o.model,
    system: SYSTEM,
    prompt,
    params,
    seed,
    jsonSchema,
    key: { taskKey: ctx.log.id, nodeId: JUDGE_NODE, attempt: 1, callIndex },
    ...(ctx.o.signal ? { signal: ctx.o.signal } : {}),
  });
  const obj = parseJsonReply(res.text);
  const answer = obj ? validate(obj) : null;
  if (answer === null || answer === undefined) ctx.invalid++;
  const call: JudgeCall = {
    logId: ctx.log.id, method: ctx.method, callIndex, system: SYSTEM, prompt, jsonSchema, text: res.text, answer: answer ?? null,
    role: ctx.o.role, modelRef: ctx.o.model, seed, params, model: res.model, tokens: res.tokens, ms: res.ms, startedAt,
  };
  if (res.stopReason) call.stopReason = res.stopReason;
  ctx.o.onCall?.(call);
  return answer ?? null;
}

const choice = (field: string, values: readonly string[]): JsonSchema => ({
  type: 'object',
  properties: { [field]: { enum: [...values] } },
  required: [field],
  additionalProperties: false,
});

/** Sorted step numbers as ranges: `[1, 2, 3, 5, 7, 8]` -> `1–3, 5, 7–8`. */
export function stepRanges(steps: readonly number[]): string {
  const xs = [...steps].sort((a, b) => a - b);
  const out: string[] = [];
  for (let i = 0; i < xs.length; ) {
    let j = i;
    while (j + 1 < xs.length && xs[j + 1] === xs[j]! + 1) j++;
    out.push(j > i ? `${xs[i]}–${xs[j]}` : String(xs[i]));
    i = j + 1;
  }
  return out.join(', ');
}

async function allAtOnce(ctx: Ctx, view?: JudgeView): Promise<Prediction | null> {
  const { log } = ctx;
  const agents = view ? view.agents : ctx.agents;
  const candidateSteps = view ? view.candidateSteps : ctx.candidates.map((s) => s.index);
  const stepSet = new Set(candidateSteps);
  const head = view
    ? `${intro(ctx, agents)}\n${view.note ? `${view.note}\n` : ''}Conversation log (steps 0–${view.steps.length - 1} of ${log.steps.length}; you may name steps ${stepRanges(candidateSteps)}):`
    : `${intro(ctx)}\nConversation log (${log.steps.length} steps):`;
  const tail =
    'Which agent made the decisive mistake (the error directly responsible for the failure), and at which step did it first make it? ' +
    'Answer with JSON: {"agent": "<one of the agents>", "step": <step number>}';
  const schema: JsonSchema = {
    type: 'object',
    properties: { agent: { enum: [...agents] }, step: { enum: [...candidateSteps] } },
    required: ['agent', 'step'],
    additionalProperties: false,
  };
  const answer = await ask(ctx, buildPrompt(ctx, head, view ? view.steps : log.steps, tail), schema, (v) => {
    const agent = typeof v.agent === 'string' ? agents.find((a) => agentKey(a) === agentKey(v.agent as string)) : undefined;
    const step = typeof v.step === 'number' ? v.step : typeof v.step === 'string' && v.step.trim() !== '' ? Number(v.step) : NaN;
    return agent && Number.isInteger(step) && stepSet.has(step) ? { agent, step } : null;
  });
  return (answer as Prediction | null) ?? null;
}

async function stepByStep(ctx: Ctx): Promise<Prediction | null> {
  const { log } = ctx;
  for (const step of ctx.candidates) {
    const before = log.steps.slice(0, step.index);
    const head = `${intro(ctx)}\nConversation so far (${before.length} steps):`;
    const tail =
      `Step to judge: [${step.index}] ${step.agent}: ${cutText(step.content, ctx.o.maxChars)}\n` +
      `Is step ${step.index} the decisive mistake, the error by ${step.agent} that is directly responsible for the failure? ` +
      'Answer with JSON: {"answer": "yes"} or {"answer": "no"}';
    const answer = await ask(ctx, buildPrompt(ctx, head, before, tail), choice('answer', ['yes', 'no']), (v) =>
      v.answer === 'yes' || v.answer === 'no' ? v.answer : null,
    );
    if (answer === 'yes') return { agent: step.agent, step: step.index };
  }
  return null;
}

async function binarySearch(ctx: Ctx): Promise<Prediction | null> {
  const { log, candidates: c } = ctx;
  let lo = 0;
  let hi = c.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const a = c[lo]!.index;
    const m = c[mid]!.index;
    const m2 = c[mid + 1]!.index;
    const b = c[hi]!.index;
    const head = `${intro(ctx)}\nPart of the conversation log, steps ${a}–${b}:`;
    const tail =
      `The decisive mistake (the error directly responsible for the failure) is in steps ${a}–${b}. ` +
      `Is it in the first half (steps ${a}–${m}) or in the second half (steps ${m2}–${b})? ` +
      'Answer with JSON: {"half": "first"} or {"half": "second"}';
    const answer = await ask(ctx, buildPrompt(ctx, head, log.steps.slice(a, b + 1), tail), choice('half', ['first', 'second']), (v) =>
      v.half === 'first' || v.half === 'second' ? v.half : null,
    );
    if (answer === 'first') hi = mid;
    else if (answer === 'second') lo = mid + 1;
    else return null;
  }
  const s = c[lo]!;
  return { agent: s.agent, step: s.index };
}

/**
 * Runs one LLM-judge method on one log.
 *
 * Calls: `request.key = {taskKey: log.id, nodeId: 'judge', attempt: 1, callIndex: i}`, seed
 * `seed + i`, temperature 0, `system` a fixed judge instruction, `jsonSchema` restricting the
 * answer (all-at-once: `{agent: <a log agent>, step: <a candidate step>}`; step-by-step:
 * `{answer: yes|no}`; binary-search: `{half: first|second}`). Candidate steps and agents exclude the
 * task poser (`human`), whom the benchmark never blames. Every prompt fits `maxPromptChars`
 * (see `fitSteps`). A reply that is not a usable answer is counted in `invalidAnswers`: all-at-once
 * and binary-search then give no prediction; step-by-step reads it as "not this step" and goes on.
 * Step-by-step with no "yes" gives no prediction. Nothing is ever guessed in place of the model.
 *
 * `narrowed-judge` (`NARROWED_JUDGE`) asks as all-at-once, over `narrowedView(log, opts.surfacing)`:
 * the steps up to the first surfaced error, the candidate agents and steps structure cannot
 * separate (the schema allows only those), and a line on what structure saw.
 *
 * A `GENERATION_FAILED` model error (e.g. a prompt that does not fit the model's context in
 * tokens) ends this log with no prediction and a note; other model errors are thrown.
 * @throws JudgeBudgetError when `maxPromptChars` cannot hold a prompt's fixed parts.
 */
export async function judgeLog(log: WhoAndWhenLog, method: LlmJudgeMethod, opts: JudgeOptions): Promise<JudgeOutcome> {
  const o = { ...JUDGE_DEFAULTS, ...stripUndefined(opts) } as Ctx['o'];
  const candidates = log.steps.filter((s) => !isHumanStep(s));
  const agents: string[] = [];
  for (const s of candidates) if (!agents.some((a) => agentKey(a) === agentKey(s.agent))) agents.push(s.agent);
  const ctx: Ctx = { log, method, o, calls: 0, invalid: 0, candidates, agents };
  if (candidates.length === 0) return { prediction: null, calls: 0, invalidAnswers: 0, note: 'no agent step to judge' };
  let prediction: Prediction | null;
  try {
    if (method === NARROWED_JUDGE) prediction = await allAtOnce(ctx, narrowedView(log, opts.surfacing));
    else prediction = method === 'all-at-once' ? await allAtOnce(ctx) : method === 'step-by-step' ? await stepByStep(ctx) : await binarySearch(ctx);
  } catch (e) {
    if (e instanceof ModelError && e.code === 'GENERATION_FAILED') {
      return { prediction: null, calls: ctx.calls, invalidAnswers: ctx.invalid, note: `model error: ${e.message}` };
    }
    throw e;
  }
  const out: JudgeOutcome = { prediction, calls: ctx.calls, invalidAnswers: ctx.invalid };
  if (!prediction) out.note = ctx.invalid > 0 ? `${ctx.invalid} unusable answer(s)` : method === 'step-by-step' ? 'the judge said no to every step' : 'no answer';
  return out;
}

/** `judgeLog` as a scored record. */
export async function judgeRecord(log: WhoAndWhenLog, method: LlmJudgeMethod, opts: JudgeOptions): Promise<AttributionRecord> {
  const r = await judgeLog(log, method, opts);
  const rec: AttributionRecord = { logId: log.id, label: { agent: log.label.agent, step: log.label.step, rawAgent: log.label.rawAgent }, prediction: r.prediction, calls: r.calls };
  if (r.note) rec.note = r.note;
  else if (r.invalidAnswers) rec.note = `${r.invalidAnswers} unusable answer(s)`;
  return rec;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
