/**
 * `learn`: a project-owned, procedural task family that tiny models can learn on a laptop
 * (docs/laptop-rl.md, "The `learn` task family"). Every task is generated from a fixed seed, the task's split and its
 * index (no files, same tasks on every machine), and graded exactly.
 *
 * Kinds (each a dataset of its own, plus the mixed `learn` and the two-role `learn-team`):
 * - `word` ("say the word"): the prompt is a short story start; the completion scores 1 when it
 *   contains the target word (`happy`) as a whole word, case-insensitive, else 0. The toy reward
 *   of docs/laptop-rl.md ("The toy"): stories260K says `happy` in about 5% of 32-token samples at
 *   temperature 1 (sampled on the 2-core reference machine).
 * - `json` ("copy a number into a JSON field"): the prompt states a number 1–9 and ends with the
 *   JSON prefix `{"n":`; the answer is the JSON text that continues that prefix (or a whole JSON
 *   object, or an object answer when the node has a schema). Scores 1 when the object's `n` is
 *   that number (a JSON number), else 0.
 * - `tool` ("pick the right tool"): the prompt lists the tools `calculator`, `weather`, `search`
 *   (order shuffled per task) and a request that needs exactly one of them; the answer (a `tool`
 *   field, or else the first word of the text, lower-cased) scores 1 when it names that tool.
 * - `team` (dataset `learn-team`, for two roles): a story start with the target word (the
 *   planner's sub-goal, checked by the `mentions_target` contract check on its node) and a tool
 *   request (the solver's; the graded answer). Graded like `tool`.
 *
 * Splits: `train` (2,000 tasks) and `heldout` (500). They never share a prompt: held-out
 * stories use other names, and held-out requests other cities, animals, words and numbers.
 */
import { fnv1a32, mulberry32, type Rng } from '../random.ts';
import type { Dataset, Grade, LoadOptions, SyncGrader, Task } from './types.ts';
import { loadProcedural, pick } from './procedural.ts';

export type LearnKind = 'word' | 'json' | 'tool' | 'team';
export const LEARN_SPLITS = ['train', 'heldout'] as const;
export type LearnSplit = (typeof LEARN_SPLITS)[number];
/** Tasks per split. */
export const LEARN_SIZES: Record<LearnSplit, number> = { train: 2000, heldout: 500 };
/** The word the `word` and `team` tasks reward. */
export const LEARN_TARGET_WORD = 'happy';
/** The seed every `learn` task is generated from. */
export const LEARN_SEED = 6;
export const LEARN_TOOLS = ['calculator', 'weather', 'search'] as const;
export type LearnTool = (typeof LEARN_TOOLS)[number];

const NAMES: Record<LearnSplit, string[]> = {
  train: ['Tom', 'Lily', 'Ben', 'Sue', 'Max', 'Mia', 'Sam', 'Anna', 'Tim', 'Lucy', 'Jack', 'Emma'],
  heldout: ['Zoe', 'Leo', 'Kim', 'Dan', 'Ella', 'Finn'],
};
const PLACES = ['park', 'store', 'garden', 'beach', 'forest', 'school', 'pond', 'farm'];
const THINGS = ['ball', 'hat', 'box', 'kite', 'book', 'cup', 'car', 'doll'];
const ANIMALS_STORY = ['dog', 'cat', 'bird', 'frog', 'duck', 'bunny'];
const ADJECTIVES = ['big', 'red', 'small', 'blue', 'old', 'shiny'];
const STORY_PATTERNS: Array<(r: Rng, names: string[]) => string> = [
  (r, n) => `${pick(r, n)} went to the ${pick(r, PLACES)}.`,
  (r, n) => `${pick(r, n)} had a ${pick(r, ADJECTIVES)} ${pick(r, THINGS)}.`,
  (r, n) => `One day, ${pick(r, n)} saw a ${pick(r, ANIMALS_STORY)} in the ${pick(r, PLACES)}.`,
  (r, n) => {
    const [a, b] = two(r, n);
    return `${a} and ${b} played in the ${pick(r, PLACES)}.`;
  },
  (r, n) => `${pick(r, n)} found a ${pick(r, ADJECTIVES)} ${pick(r, THINGS)} near the ${pick(r, PLACES)}.`,
];

const FILL: Record<LearnSplit, { cities: string[]; animals: string[]; words: string[]; topics: string[]; numbers: [number, number] }> = {
  train: { cities: ['Paris', 'Rome', 'Tokyo', 'Cairo', 'Berlin', 'Madrid'], animals: ['cat', 'dog', 'horse', 'whale', 'tiger'], words: ['moon', 'tree', 'river', 'cloud'], topics: ['trains', 'stars', 'boats', 'plants'], numbers: [1, 20] },
  heldout: { cities: ['Oslo', 'Lima', 'Delhi', 'Quito'], animals: ['owl', 'frog', 'shark'], words: ['sun', 'hill', 'snow'], topics: ['birds', 'rocks', 'kites'], numbers: [21, 40] },
};
const REQUESTS: Record<LearnTool, Array<(r: Rng, f: (typeof FILL)[LearnSplit]) => string>> = {
  calculator: [
    (r, f) => `What is ${num(r, f)} plus ${num(r, f)}?`,
    (r, f) => `Add ${num(r, f)} and ${num(r, f)}.`,
    (r, f) => `What is ${num(r, f)} times ${num(r, f)}?`,
    (r, f) => `Take ${num(r, f)} away from ${num(r, f)}.`,
  ],
  weather: [
    (r, f) => `Will it rain in ${pick(r, f.cities)} today?`,
    (r, f) => `Is it cold in ${pick(r, f.cities)}?`,
    (r, f) => `How hot is it in ${pick(r, f.cities)} now?`,
    (r, f) => `Will it be sunny in ${pick(r, f.cities)} tomorrow?`,
  ],
  search: [
    (r, f) => `Find a story about a ${pick(r, f.animals)}.`,
    (r, f) => `Look up the word ${pick(r, f.words)}.`,
    (r, f) => `Search for books about ${pick(r, f.topics)}.`,
    (r, f) => `Find facts about the ${pick(r, f.animals)}.`,
  ],
};

const PREFIX: Record<Exclude<LearnKind, 'team'>, string> = { word: 'word', json: 'json', tool: 'tool' };

/** The task of one kind, split and index (pure: the same arguments give the same task). */
export function learnTask(kind: LearnKind, split: LearnSplit, index: number, datasetName = `learn-${kind}`): Task {
  const r = mulberry32(fnv1a32(`${LEARN_SEED}/${kind === 'team' ? 'team' : PREFIX[kind]}/${split}/${index}`));
  const id = `${datasetName}/${split}/${index}`;
  const story = () => pick(r, STORY_PATTERNS)(r, NAMES[split]);
  const toolTask = () => {
    const tool = pick(r, LEARN_TOOLS);
    const request = pick(r, REQUESTS[tool])(r, FILL[split]);
    const tools = shuffle(r, [...LEARN_TOOLS]).join(', ');
    return { tool, request, tools };
  };
  switch (kind) {
    case 'word': {
      const prompt = story();
      return { id, index, input: { kind, prompt, target: LEARN_TARGET_WORD }, expected: LEARN_TARGET_WORD };
    }
    case 'json': {
      const n = 1 + Math.floor(r() * 9);
      const prefix = '{"n":';
      const prompt = `Copy the number into JSON.\nNumber: ${n}\nJSON: ${prefix}`;
      return { id, index, input: { kind, prompt, number: n, prefix }, expected: String(n) };
    }
    case 'tool': {
      const { tool, request, tools } = toolTask();
      const prompt = `Tools: ${tools}.\nRequest: ${request}\nTool:`;
      return { id, index, input: { kind, prompt, request, tools }, expected: tool };
    }
    case 'team': {
      const s = story();
      const { tool, request, tools } = toolTask();
      return { id, index, input: { kind, story: s, target: LEARN_TARGET_WORD, request, tools }, expected: tool };
    }
    default:
      return kind satisfies never;
  }
}

/**
 * The `learn` graders, by the task's `input.kind` (see this module's header). Pure, never throws;
 * score 1 or 0.
 */
export const learnGrader: SyncGrader = {
  grade(answer: unknown, task: Task): Grade {
    const kind = (task.input as { kind?: unknown }).kind;
    const expected = task.expected;
    if (answer === undefined || answer === null) return { score: 0, correct: false, extracted: null, expected, reason: 'there is no answer' };
    const done = (correct: boolean, extracted: string | null, reason: string): Grade => ({ score: correct ? 1 : 0, correct, extracted, expected, reason });
    switch (kind) {
      case 'word': {
        const target = String((task.input as { target?: unknown }).target ?? expected);
        const text = textOf(answer);
        const found = mentionsWord(text, target);
        return done(found, found ? target : null, found ? `the text says "${target}"` : `the text never says "${target}" as a word`);
      }
      case 'json': {
        const value = readJsonAnswer(answer, String((task.input as { prefix?: unknown }).prefix ?? ''));
        if (value === undefined) return done(false, null, 'no JSON object could be read from the answer');
        const n = (value as Record<string, unknown>).n;
        const extracted = n === undefined ? null : JSON.stringify(n);
        const correct = typeof n === 'number' && String(n) === expected;
        return done(correct, extracted, correct ? `n is ${expected}` : `n is ${extracted ?? 'missing'}, expected the number ${expected}`);
      }
      case 'tool':
      case 'team': {
        const name = toolOf(answer);
        const correct = name === expected;
        return done(correct, name, correct ? `picked ${expected}` : `picked ${name ?? 'nothing'}, expected ${expected}`);
      }
      default:
        return done(false, null, `task ${task.id} has no learn kind (input.kind is ${JSON.stringify(kind)})`);
    }
  },
};

/** Whether `text` contains `word` as a whole word (letters on neither side), case-insensitive. */
export function mentionsWord(text: string, word: string): boolean {
  if (!word) return false;
  const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^\\p{L}])${escaped}(?![\\p{L}])`, 'iu').test(text);
}

function textOf(answer: unknown): string {
  if (typeof answer === 'string') return answer;
  if (typeof answer === 'number' || typeof answer === 'boolean') return String(answer);
  if (answer && typeof answer === 'object') {
    const o = answer as Record<string, unknown>;
    if (typeof o.text === 'string') return o.text;
    if (o.answer !== undefined) return textOf(o.answer);
    return JSON.stringify(answer);
  }
  return '';
}

/** The tool an answer names: its `tool` (or `answer`) field, else the first word of its text; lower-cased. */
function toolOf(answer: unknown): string | null {
  if (answer && typeof answer === 'object') {
    const o = answer as Record<string, unknown>;
    if (typeof o.tool === 'string') return o.tool.trim().toLowerCase() || null;
    if (o.answer !== undefined) return toolOf(o.answer);
    return null;
  }
  const m = /^[\s"'`*:]*([A-Za-z_]+)/.exec(textOf(answer));
  return m ? m[1]!.toLowerCase() : null;
}

/**
 * The JSON object of a `json` answer: the answer itself when it is an object; else the text
 * parsed as a JSON object (its first `{...}`), else `prefix` + the text up to its first `}`.
 */
function readJsonAnswer(answer: unknown, prefix: string): object | undefined {
  if (answer && typeof answer === 'object') return answer;
  const text = textOf(answer);
  const tryParse = (s: string): object | undefined => {
    try {
      const v: unknown = JSON.parse(s);
      return v && typeof v === 'object' && !Array.isArray(v) ? v : undefined;
    } catch {
      return undefined;
    }
  };
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{')) {
    const end = trimmed.indexOf('}');
    if (end >= 0) return tryParse(trimmed.slice(0, end + 1));
    return undefined;
  }
  const end = text.indexOf('}');
  if (!prefix || end < 0) return undefined;
  return tryParse(prefix + text.slice(0, end + 1));
}

/** A `learn` dataset: one kind, or the mixed family (`kinds` cycled by task index). */
export function createLearnDataset(name: string, kinds: readonly LearnKind[]): Dataset {
  return {
    name,
    splits: [...LEARN_SPLITS],
    grader: learnGrader,
    novelty: { train: 'the training split', heldout: 'in-template only: the training templates with unseen names, cities, animals, words and numbers; no new wording, no new class' },
    load(opts: LoadOptions): Task[] {
      return loadProcedural(name, LEARN_SIZES, opts, (split, i) => learnTask(kinds[i % kinds.length]!, split, i, name));
    },
  };
}

function two<T>(r: Rng, xs: readonly T[]): [T, T] {
  const a = Math.floor(r() * xs.length);
  const b = (a + 1 + Math.floor(r() * (xs.length - 1))) % xs.length;
  return [xs[a]!, xs[b]!];
}
function num(r: Rng, f: (typeof FILL)[LearnSplit]): number {
  const [lo, hi] = f.numbers;
  return lo + Math.floor(r() * (hi - lo + 1));
}
function shuffle<T>(r: Rng, xs: T[]): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}
