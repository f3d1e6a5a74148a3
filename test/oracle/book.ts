/**
 * What the oracle model knows: the tasks it serves, looked up by the text a prompt shows, and a
 * right answer for each in whatever shape a call asks for — free text, or a value valid under
 * the call's JSON schema with the gold answer in its answer field. SIMULATED: a test model written
 * for Flowlab (test/oracle/server.ts serves it), never a real model's answer.
 */
import type { Task } from '../../core/tasks/index.ts';

/** The ports that may carry a task's text (DataWright's order, core/tasks/datawright.ts). */
const TEXT_PORTS = ['question', 'request', 'prompt', 'story'] as const;

/** Tasks indexed by the lines of their text, so a prompt finds its task in time linear in the prompt. */
export class TaskBook {
  private readonly byLine = new Map<string, Task[]>();

  constructor(tasks: readonly Task[]) {
    for (const t of tasks) {
      for (const line of new Set(textsOf(t).flatMap((x) => x.split('\n')).map((l) => l.trim()).filter((l) => l.length >= 8))) {
        const list = this.byLine.get(line);
        if (list) list.push(t);
        else this.byLine.set(line, [t]);
      }
    }
  }

  /**
   * The task whose whole text the prompt holds (the longest such text when several do), looked up
   * by the prompt line (or its part after `: `) with the fewest candidate tasks; undefined when none.
   */
  find(prompt: string): Task | undefined {
    let best: Task[] | undefined;
    for (const raw of prompt.split('\n')) {
      const line = raw.trim();
      for (const key of [line, line.slice(line.indexOf(': ') + 2).trim()]) {
        const list = this.byLine.get(key);
        if (list && (!best || list.length < best.length)) best = list;
      }
    }
    let found: Task | undefined;
    let length = 0;
    let ordered = false;
    for (const t of best ?? []) {
      const shown = Math.max(0, ...textsOf(t).filter((x) => prompt.includes(x)).map((x) => x.length));
      // Tasks showing the same text (learn-judge: one pair in both orders) are told apart by their
      // other string inputs: the task whose inputs the prompt shows in the task's own order wins.
      const inOrder = shown > 0 && showsInOrder(t, prompt);
      if (shown > length || (shown === length && shown > 0 && inOrder && !ordered)) [found, length, ordered] = [t, shown, inOrder];
    }
    return found;
  }
}

/** Whether the string inputs of `task` that `prompt` shows appear in it each after the one before (in the task's key order). */
function showsInOrder(task: Task, prompt: string): boolean {
  let at = 0;
  for (const v of Object.values(task.input)) {
    if (typeof v !== 'string' || !v.trim() || !prompt.includes(v)) continue;
    const i = prompt.indexOf(v, at);
    if (i < 0) return false;
    at = i + v.length;
  }
  return true;
}

/** Every text port of a task (a prompt may show any of them: learn-team's story node shows the story only). */
function textsOf(task: Task): string[] {
  return TEXT_PORTS.map((p) => task.input[p]).filter((x): x is string => typeof x === 'string' && x.trim().length > 0);
}

/** A task's text: its first text port. */
export function textOf(task: Task): string {
  for (const p of TEXT_PORTS) if (typeof task.input[p] === 'string') return task.input[p] as string;
  return '';
}

/** Whether a task is graded by running code (HumanEval, MBPP: its meta holds the tests). */
export const isCodeTask = (task: Task): boolean => task.meta !== undefined && ('test' in task.meta || 'test_list' in task.meta);

/**
 * The right answer as plain text: a code task's whole function (HumanEval: the prompt and its
 * canonical body; MBPP: the reference code), else the gold answer as the dataset writes it.
 */
export function goldText(task: Task): string {
  if (!isCodeTask(task)) return task.expected;
  const prompt = typeof task.meta?.prompt === 'string' ? task.meta.prompt : '';
  return prompt && !task.expected.startsWith(prompt) ? `${prompt}${task.expected}` : task.expected;
}

/** The right free-text reply: a code task's function in one python block; else the gold text, with the target word a task names (learn-team's story must say it). */
export function goldReply(task: Task): string {
  if (isCodeTask(task)) return '```python\n' + goldText(task).replace(/\s+$/, '') + '\n```';
  const target = typeof task.input.target === 'string' && !task.expected.includes(task.input.target) ? ` ${task.input.target}` : '';
  return `${goldText(task)}${target}`;
}

/** JSON Schema as the oracle reads it (the subset Flowlab's contracts use). */
export interface Schema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema | Schema[];
  prefixItems?: Schema[];
  minItems?: number;
  oneOf?: Schema[];
  anyOf?: Schema[];
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
}

/** Skills a workflow offers: each one's allowed output values (its output schema's enum), for choosing a design's step. */
export type SkillHints = ReadonlyMap<string, readonly unknown[]>;

/** Fields whose value is the task's answer. */
const ANSWER_FIELDS = new Set(['answer', 'final_answer', 'result', 'code', 'solution']);
/** Words that approve (a verdict's enum, a stop signal). */
const APPROVE = ['ok', 'yes', 'approve', 'approved', 'accept', 'correct', 'pass', 'done', 'stop'];

/**
 * A value valid under `schema` that answers `task` rightly: the answer field (and a bare
 * string or number schema) holds the gold answer, an `expression` field the gold number, an
 * enum the value among the task's facts (its gold answer and its parts, `meta.tool`,
 * `meta.argument`) else an approving word else the first, booleans true, other strings a short
 * note within the length limits. Under `oneOf` the branch naming a fact (or a skill whose outputs
 * include one) wins.
 */
export function fill(schema: Schema, task: Task, skills: SkillHints = new Map(), field?: string): unknown {
  const facts = factsOf(task);
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return pickEnum(schema.enum, facts);
  const branches = schema.oneOf ?? schema.anyOf;
  if (branches?.length) return fill(bestBranch(branches, facts, skills), task, skills, field);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type ?? (schema.properties ? 'object' : schema.items || schema.prefixItems ? 'array' : 'string');
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const props = schema.properties ?? {};
      for (const key of Object.keys(props)) if (schema.required?.includes(key) || ANSWER_FIELDS.has(key)) out[key] = fill(props[key]!, task, skills, key);
      return out;
    }
    case 'array': {
      const prefix = schema.prefixItems ?? (Array.isArray(schema.items) ? schema.items : []);
      const item = Array.isArray(schema.items) ? undefined : schema.items;
      return Array.from({ length: Math.max(schema.minItems ?? 1, 1) }, (_, i) => fill(prefix[i] ?? item ?? {}, task, skills, field));
    }
    case 'number':
    case 'integer':
      return numberOf(task.expected) ?? task.expected; // a text answer does not fit a number: the pair is not run
    case 'boolean':
      return true;
    default: {
      if (field === 'expression') return String(numberOf(task.expected) ?? task.expected);
      const text = field === undefined || ANSWER_FIELDS.has(field) ? goldText(task) : field === 'command' ? String(numberOf(task.expected) ?? 1) : 'ok';
      return text.padEnd(schema.minLength ?? 0, '.').slice(0, schema.maxLength ?? Infinity);
    }
  }
}

/** The task's facts an enum or a branch may name, lower-cased: the gold answer, its `tool:argument` parts, meta's tool, argument and class. */
function factsOf(task: Task): string[] {
  const m = task.meta ?? {};
  const out = [task.expected, ...task.expected.split(':'), m.tool, m.argument, m.class].filter((x): x is string => typeof x === 'string' && x !== '');
  return out.map((x) => x.trim().toLowerCase());
}

function pickEnum(values: readonly unknown[], facts: readonly string[]): unknown {
  for (const f of facts) {
    const hit = values.find((v) => String(v).toLowerCase() === f);
    if (hit !== undefined) return hit;
  }
  for (const w of APPROVE) {
    const hit = values.find((v) => String(v).toLowerCase() === w);
    if (hit !== undefined) return hit;
  }
  return values.find((v) => v === true) ?? values[0];
}

/** The branch whose constants name a fact, or a skill whose outputs include one; else the first. */
function bestBranch(branches: readonly Schema[], facts: readonly string[], skills: SkillHints): Schema {
  const score = (b: Schema): number => {
    let s = 0;
    for (const [key, p] of Object.entries(b.properties ?? {})) {
      const c = p.const;
      if (c === undefined) continue;
      if (facts.includes(String(c).toLowerCase())) s += 2;
      if (key === 'skill' && (skills.get(String(c)) ?? []).some((v) => facts.includes(String(v).toLowerCase()))) s += 3;
    }
    return s;
  };
  return branches.reduce((best, b) => (score(b) > score(best) ? b : best), branches[0]!);
}

/** The number a gold answer states (`"18"`, `"-3.5"`), or undefined. */
export function numberOf(text: string): number | undefined {
  const t = text.trim().replace(/,/g, '');
  return /^-?\d+(\.\d+)?$/.test(t) ? Number(t) : undefined;
}

/**
 * Tokens in a text as the test servers count them for `max_tokens` and `usage`: a word or a
 * run of up to 3 digits with its leading whitespace, each other character with its leading
 * whitespace, and trailing whitespace — an approximation of a BPE tokenizer's count (GPT-style
 * tokenizers merge a leading space into the word), close to or above it for prose and code.
 */
export function countTokens(text: string): number {
  return text.match(TOKEN)?.length ?? 0;
}
const TOKEN = /\s*[A-Za-z]+|\s*\d{1,3}|\s*[^\sA-Za-z\d]|\s+$/g;

/** The longest prefix of `text` within `max` tokens. */
export function clipTokens(text: string, max: number): string {
  let n = 0;
  let end = 0;
  for (const m of text.matchAll(TOKEN)) {
    if (++n > max) break;
    end = m.index! + m[0].length;
  }
  return text.slice(0, end);
}
