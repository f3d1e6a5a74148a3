/**
 * `learn-design`: a project-owned, procedural task family where the design of the workflow
 * matters and the grader is exact (docs/laptop-rl.md, "The designer team"). Each task is a
 * request that needs one of three tools — `weather`, `search`, `math` — called with one
 * argument chosen from the request:
 *
 * | tool      | port   | values                       | the request says            |
 * | --------- | ------ | ---------------------------- | --------------------------- |
 * | `weather` | `day`  | today, tomorrow, now         | rain / sun / cold … + the day |
 * | `search`  | `kind` | story, word, books, facts    | find / look up … + the kind |
 * | `math`    | `op`   | add, multiply, subtract      | plus / times / minus, add … |
 *
 * The words of the request fix both the tool (the design: which tool node to wire) and the
 * argument (what the executor fills in); the tools (core/tools/learnDesign.ts) answer with the
 * exact text `<tool>:<argument>`, e.g. `weather:tomorrow`, which is the task's `expected`.
 * A task's class (its correct design) is the tool: `learnDesignClass(task)`, also the dataset's
 * `classOf`, so accuracy can be reported per class.
 *
 * Generated from a fixed seed, the split and the index (no files, same tasks everywhere). The
 * tool cycles with the index (weather, search, math, weather, …), so every class holds a third
 * of a split and any run of 3 consecutive tasks holds one of each; the argument and the wording
 * are drawn from the seed. Splits `train` (2,000) and `heldout` (500) use disjoint fillers
 * (cities, animals, words, topics, numbers), so no request is in both.
 *
 * What the held-out split tests (`LEARN_DESIGN_NOVELTY`, and each held-out task's
 * `meta.novelty`): three tasks in four (index mod 4 ≠ 3) are `in-template` — a training
 * template with unseen names and numbers; every fourth (index mod 4 = 3) is `new-wording` — a
 * template no other split (train, learn-design-ood, learn-errand) uses, with the same cue word
 * and unseen fillers. The argument (the label) is drawn before the template, so the labels of
 * every held-out index are the same as before the new wordings were added (issue 24).
 */
import { fnv1a32, mulberry32, type Rng } from '../random.ts';
import { DatasetError } from './errors.ts';
import type { Dataset, Grade, LoadOptions, SyncGrader, Task } from './types.ts';
import { loadProcedural, pick } from './procedural.ts';

/** The seed every `learn-design` task is generated from. */
export const LEARN_DESIGN_SEED = 10;
export const LEARN_DESIGN_SPLITS = ['train', 'heldout'] as const;
export type LearnDesignSplit = (typeof LEARN_DESIGN_SPLITS)[number];
/** Tasks per split. */
export const LEARN_DESIGN_SIZES: Record<LearnDesignSplit, number> = { train: 2000, heldout: 500 };

/** Each tool of the family: the input port that takes its argument, and the argument's values. */
export const LEARN_DESIGN_TOOLS = {
  weather: { port: 'day', values: ['today', 'tomorrow', 'now'] },
  search: { port: 'kind', values: ['story', 'word', 'books', 'facts'] },
  math: { port: 'op', values: ['add', 'multiply', 'subtract'] },
} as const satisfies Record<string, { port: string; values: readonly string[] }>;
export type LearnDesignTool = keyof typeof LEARN_DESIGN_TOOLS;
/** The tools in class order (the order the index cycles through). */
export const LEARN_DESIGN_TOOL_NAMES = Object.keys(LEARN_DESIGN_TOOLS) as LearnDesignTool[];

type Fill = { cities: string[]; animals: string[]; words: string[]; topics: string[]; numbers: [number, number] };
const FILL: Record<LearnDesignSplit, Fill> = {
  train: { cities: ['Paris', 'Rome', 'Tokyo', 'Cairo', 'Berlin', 'Madrid'], animals: ['cat', 'dog', 'horse', 'whale', 'tiger'], words: ['moon', 'tree', 'river', 'cloud'], topics: ['trains', 'stars', 'boats', 'plants'], numbers: [1, 20] },
  heldout: { cities: ['Oslo', 'Lima', 'Delhi', 'Quito'], animals: ['owl', 'frog', 'shark'], words: ['sun', 'hill', 'snow'], topics: ['birds', 'rocks', 'kites'], numbers: [21, 40] },
};

const WEATHER_ASKS = ['Will it rain', 'Will it snow', 'Is it sunny', 'Is it cold', 'Is it windy'];
type Template = (r: Rng, f: Fill) => string;
/** The wordings of each (tool, argument); every one names the argument's cue word. */
const REQUESTS: { [T in LearnDesignTool]: Record<(typeof LEARN_DESIGN_TOOLS)[T]['values'][number], Template[]> } = {
  weather: {
    today: [(r, f) => `${pick(r, WEATHER_ASKS)} in ${pick(r, f.cities)} today?`],
    tomorrow: [(r, f) => `${pick(r, WEATHER_ASKS)} in ${pick(r, f.cities)} tomorrow?`],
    now: [(r, f) => `${pick(r, WEATHER_ASKS)} in ${pick(r, f.cities)} now?`],
  },
  search: {
    story: [(r, f) => `Find a story about a ${pick(r, f.animals)}.`, (r, f) => `Search for a story about a ${pick(r, f.animals)}.`],
    word: [(r, f) => `Look up the word ${pick(r, f.words)}.`, (r, f) => `Search for the word ${pick(r, f.words)}.`],
    books: [(r, f) => `Search for books about ${pick(r, f.topics)}.`, (r, f) => `Find books about the ${pick(r, f.animals)}.`],
    facts: [(r, f) => `Find facts about the ${pick(r, f.animals)}.`, (r, f) => `Search for facts about ${pick(r, f.topics)}.`],
  },
  math: {
    add: [(r, f) => `What is ${num(r, f)} plus ${num(r, f)}?`, (r, f) => `Add ${num(r, f)} and ${num(r, f)}.`],
    multiply: [(r, f) => `What is ${num(r, f)} times ${num(r, f)}?`, (r, f) => `Multiply ${num(r, f)} by ${num(r, f)}.`],
    subtract: [(r, f) => `What is ${num(r, f)} minus ${num(r, f)}?`, (r, f) => `Subtract ${num(r, f)} from ${num(r, f)}.`],
  },
};

/** Wordings only the held-out split uses (`new-wording` tasks): the training cue word in a template no other split has. */
const HELDOUT_WORDINGS: typeof REQUESTS = {
  weather: {
    today: [(r, f) => `Do I need an umbrella in ${pick(r, f.cities)} today?`],
    tomorrow: [(r, f) => `Should I take a coat to ${pick(r, f.cities)} tomorrow?`],
    now: [(r, f) => `What is the weather doing in ${pick(r, f.cities)} now?`],
  },
  search: {
    story: [(r, f) => `Could you dig up a story where a ${pick(r, f.animals)} is the hero?`],
    word: [(r, f) => `I need the word ${pick(r, f.words)} explained by a search.`],
    books: [(r, f) => `Could you dig up some books about ${pick(r, f.topics)}?`],
    facts: [(r, f) => `I would like a few facts about the ${pick(r, f.animals)}.`],
  },
  math: {
    add: [(r, f) => `Work out ${num(r, f)} plus ${num(r, f)} for me.`],
    multiply: [(r, f) => `Work out ${num(r, f)} times ${num(r, f)} for me.`],
    subtract: [(r, f) => `Work out ${num(r, f)} minus ${num(r, f)} for me.`],
  },
};

/** What is new in each split against training (the held-out split's `in-template` and `new-wording` parts; see the module doc). */
export const LEARN_DESIGN_NOVELTY: Record<LearnDesignSplit, string> = {
  train: 'the training split',
  heldout: 'in-template (index mod 4 != 3): training templates with unseen names and numbers; new-wording (index mod 4 = 3): templates no other split uses, unseen names and numbers; classes and arguments as in training',
};

/** A held-out task's novelty: `new-wording` at index mod 4 = 3, else `in-template`. */
export const learnDesignNovelty = (index: number): 'in-template' | 'new-wording' => (index % 4 === 3 ? 'new-wording' : 'in-template');

/**
 * The task of one split and index (pure). `input`: `{kind: 'design', request}`; `expected`: the
 * exact tool answer `<tool>:<argument>`; `meta`: `{class, tool, port, argument}`, and on the
 * held-out split `novelty` (`in-template` | `new-wording`, `learnDesignNovelty`).
 * @throws DatasetError `BAD_OPTIONS` for a negative or fractional index.
 */
export function learnDesignTask(split: LearnDesignSplit, index: number, datasetName = 'learn-design'): Task {
  if (!Number.isInteger(index) || index < 0) throw new DatasetError('BAD_OPTIONS', `index must be a non-negative integer, got ${String(index)}`);
  const r = mulberry32(fnv1a32(`${LEARN_DESIGN_SEED}/design/${split}/${index}`));
  const tool = LEARN_DESIGN_TOOL_NAMES[index % LEARN_DESIGN_TOOL_NAMES.length]!;
  const { port, values } = LEARN_DESIGN_TOOLS[tool];
  const argument = pick(r, values);
  const novelty = split === 'heldout' ? learnDesignNovelty(index) : undefined;
  const templates = ((novelty === 'new-wording' ? HELDOUT_WORDINGS : REQUESTS)[tool] as Record<string, Template[]>)[argument]!;
  const request = pick(r, templates)(r, FILL[split]);
  return {
    id: `${datasetName}/${split}/${index}`,
    index,
    input: { kind: 'design', request },
    expected: `${tool}:${argument}`,
    meta: { class: tool, tool, port, argument, ...(novelty && { novelty }) },
  };
}

/** A task's class: the tool its request needs (the part of `expected` before `:`), e.g. `weather`. */
export function learnDesignClass(task: Pick<Task, 'expected'>): string {
  return task.expected.split(':')[0]!;
}

/** One tool call read from an answer: the tool and its argument. */
export interface ToolCallText {
  tool: string;
  argument: string;
}

/** Every argument value of the family's tools (they are distinct across tools). */
const ARGUMENTS = new Set<string>(LEARN_DESIGN_TOOL_NAMES.flatMap((t) => [...LEARN_DESIGN_TOOLS[t].values]));

/**
 * The tool calls an answer names, in order: every `<tool>:<argument>` (lower-case letters and
 * `_`) in its text; an object answer with a string `tool` field gives `{tool, argument}` from its
 * `argument`, `arg`, `day`, `kind` or `op` field; `{answer}` and `{text}` are read through. An
 * answer that is only an argument value (`tomorrow`, as an args skill answers when no tool was
 * called) reads as one call with no tool: `{tool: '', argument: 'tomorrow'}`.
 */
export function readToolCalls(answer: unknown): ToolCallText[] {
  if (answer && typeof answer === 'object' && !Array.isArray(answer)) {
    const o = answer as Record<string, unknown>;
    if (typeof o.tool === 'string') {
      const arg = [o.argument, o.arg, o.day, o.kind, o.op].find((v) => typeof v === 'string');
      return [{ tool: o.tool.trim().toLowerCase(), argument: typeof arg === 'string' ? arg.trim().toLowerCase() : '' }];
    }
    if (o.answer !== undefined) return readToolCalls(o.answer);
    if (typeof o.text === 'string') return readToolCalls(o.text);
    return [];
  }
  if (typeof answer !== 'string') return [];
  const text = answer.toLowerCase();
  const calls = [...text.matchAll(/([a-z_]+):([a-z_]+)/g)].map((m) => ({ tool: m[1]!, argument: m[2]! }));
  if (calls.length) return calls;
  const bare = text.replace(/["\s]/g, '');
  return ARGUMENTS.has(bare) ? [{ tool: '', argument: bare }] : [];
}

/**
 * The `learn-design` grader, DataWright-style partial credit per sub-part. The expected calls
 * (`expected`, space-separated `<tool>:<argument>`) and the answer's calls (`readToolCalls`) are
 * compared position by position; each call has two parts, the right tool and the right argument
 * (the argument values of different tools never coincide, so a wrong tool has a wrong argument).
 * score = parts right / (2 · max(expected calls, answer calls)), so a call too many costs too;
 * correct = every part right and no extra call. E.g. expected `weather:tomorrow`:
 * `weather:tomorrow` 1, `weather:now` 0.5, the bare argument `tomorrow` (the args skill's answer,
 * no tool called) 0.5, `search:story` 0, nothing 0. Pure, never throws.
 */
export const learnDesignGrader: SyncGrader = {
  grade(answer: unknown, task: Task): Grade {
    const expected = task.expected;
    const want = readToolCalls(expected);
    if (answer === undefined || answer === null) return { score: 0, correct: false, extracted: null, expected, reason: 'there is no answer' };
    const got = readToolCalls(answer);
    const extracted = got.length ? got.map((c) => (c.tool ? `${c.tool}:${c.argument}` : c.argument)).join(' ') : null;
    if (!want.length) return { score: 0, correct: false, extracted, expected, reason: `task ${task.id} has no expected tool call` };
    let right = 0;
    const notes: string[] = [];
    want.forEach((w, i) => {
      const g = got[i];
      const tool = g?.tool === w.tool;
      const arg = g?.argument === w.argument;
      right += Number(tool) + Number(arg);
      if (!g) notes.push(`call ${i + 1}: none, expected ${w.tool}:${w.argument}`);
      else if (!g.tool) notes.push(`call ${i + 1}: no tool called${arg ? '' : `, argument ${g.argument}`}, expected ${w.tool}:${w.argument}`);
      else if (!tool) notes.push(`call ${i + 1}: tool ${g.tool}, expected ${w.tool}`);
      else if (!arg) notes.push(`call ${i + 1}: ${w.tool} with ${g.argument || '(nothing)'}, expected ${w.argument}`);
    });
    if (got.length > want.length) notes.push(`${got.length - want.length} call(s) too many`);
    const score = right / (2 * Math.max(want.length, got.length));
    const correct = right === 2 * want.length && got.length === want.length;
    return { score, correct, extracted, expected, reason: correct ? `called ${expected}` : notes.join('; ') };
  },
};

/** The `learn-design` dataset (splits `train`, `heldout`; `classOf` = `learnDesignClass`; `novelty` = `LEARN_DESIGN_NOVELTY`). */
export function createLearnDesignDataset(name = 'learn-design'): Dataset {
  return {
    name,
    splits: [...LEARN_DESIGN_SPLITS],
    grader: learnDesignGrader,
    classOf: learnDesignClass,
    novelty: LEARN_DESIGN_NOVELTY,
    load(opts: LoadOptions): Task[] {
      return loadProcedural(name, LEARN_DESIGN_SIZES, opts, (split, i) => learnDesignTask(split, i, name));
    },
  };
}

function num(r: Rng, f: Fill): number {
  const [lo, hi] = f.numbers;
  return lo + Math.floor(r() * (hi - lo + 1));
}
