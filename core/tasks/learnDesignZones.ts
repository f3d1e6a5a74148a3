/**
 * Evaluation zones for the `learn-design` family (core/tasks/learnDesign.ts), so that a study on
 * the embedded default has the three zones of FloWright's table (in-distribution,
 * out-of-distribution, out-of-domain):
 *
 * - `learn-design-ood` (out-of-distribution: same family, unseen wording). The same tools,
 *   arguments, grader and classes, but every request is written with a template that no
 *   `learn-design` split uses (`Tell me …`, `Give me the product of …`, `Show me books on …`)
 *   and with fillers (cities, animals, words, topics, numbers 41–60) from neither split. The cue
 *   of the argument may be a word the training requests never use (`sum`, `product`,
 *   `difference`, `meaning`, `tale`).
 * - `learn-errand` (out-of-domain: a family never trained on). Everyday situations that only
 *   imply the tool and its argument ("We fly to Seoul tomorrow. Should we pack an umbrella?" →
 *   `weather:tomorrow`; "There are 7 boxes with 12 eggs each. How many eggs?" →
 *   `math:multiply`): no command verb, no tool word, word-problem numbers. The answers are the
 *   same `<tool>:<argument>` texts, so the same workflows and tools run it and the same exact
 *   grader (`learnDesignGrader`) scores it.
 *
 * Each has one split, `test` (300 tasks). As in `learn-design`, the tool cycles with the index
 * (weather, search, math, …), so every class holds a third of the split; the argument, the
 * template and the fillers are drawn from a seed, the dataset's name and the index.
 */
import { fnv1a32, mulberry32, type Rng } from '../random.ts';
import { DatasetError } from './errors.ts';
import { LEARN_DESIGN_SEED, LEARN_DESIGN_TOOL_NAMES, LEARN_DESIGN_TOOLS, learnDesignClass, learnDesignGrader, type LearnDesignTool } from './learnDesign.ts';
import { loadProcedural, pick } from './procedural.ts';
import type { Dataset, LoadOptions, Task } from './types.ts';

/** The zone datasets' one split and its size. */
export const LEARN_ZONE_SIZES = { test: 300 } as const;
export type LearnZone = 'ood' | 'errand';

interface Fill { cities: string[]; animals: string[]; words: string[]; topics: string[]; numbers: [number, number] }
/** Fillers neither `learn-design` split uses. */
const FILL: Fill = { cities: ['Seoul', 'Perth', 'Nairobi', 'Dublin', 'Austin'], animals: ['bear', 'fox', 'goat', 'panda'], words: ['lake', 'wind', 'stone', 'leaf'], topics: ['cars', 'maps', 'bees', 'ships'], numbers: [41, 60] };

type Template = (r: Rng, f: Fill) => string;
type Templates = { [T in LearnDesignTool]: Record<(typeof LEARN_DESIGN_TOOLS)[T]['values'][number], Template[]> };

const num = (r: Rng, f: Fill) => f.numbers[0] + Math.floor(r() * (f.numbers[1] - f.numbers[0] + 1));
const small = (r: Rng) => 2 + Math.floor(r() * 9);

/** Out-of-distribution wordings: templates no `learn-design` split has. */
const OOD: Templates = {
  weather: {
    today: [(r, f) => `Tell me the weather in ${pick(r, f.cities)} today.`, (r, f) => `How is the sky over ${pick(r, f.cities)} today?`],
    tomorrow: [(r, f) => `Tell me the weather in ${pick(r, f.cities)} tomorrow.`, (r, f) => `What will the sky be like in ${pick(r, f.cities)} tomorrow?`],
    now: [(r, f) => `Tell me the weather in ${pick(r, f.cities)} right now.`, (r, f) => `How warm is ${pick(r, f.cities)} now?`],
  },
  search: {
    story: [(r, f) => `I want to read a tale about a ${pick(r, f.animals)}.`, (r, f) => `Show me a story with a ${pick(r, f.animals)}.`],
    word: [(r, f) => `Tell me the meaning of the word ${pick(r, f.words)}.`, (r, f) => `What does the word ${pick(r, f.words)} mean?`],
    books: [(r, f) => `Show me books on ${pick(r, f.topics)}.`, (r, f) => `I need some books on ${pick(r, f.topics)}.`],
    facts: [(r, f) => `Tell me some facts on the ${pick(r, f.animals)}.`, (r, f) => `Give me facts on ${pick(r, f.topics)}.`],
  },
  math: {
    add: [(r, f) => `Give me the sum of ${num(r, f)} and ${num(r, f)}.`, (r, f) => `Please add ${num(r, f)} to ${num(r, f)}.`],
    multiply: [(r, f) => `Give me the product of ${num(r, f)} and ${num(r, f)}.`, (r, f) => `Please multiply ${num(r, f)} with ${num(r, f)}.`],
    subtract: [(r, f) => `Give me the difference of ${num(r, f)} and ${num(r, f)}.`, (r, f) => `Please take ${num(r, f)} off ${num(r, f)}.`],
  },
};

/** Out-of-domain: everyday situations that imply the tool and argument. */
const ERRAND: Templates = {
  weather: {
    today: [(r, f) => `I am walking the dog in ${pick(r, f.cities)} today. Do I need a coat?`, (r, f) => `We have a picnic in ${pick(r, f.cities)} today. Is that a good idea?`],
    tomorrow: [(r, f) => `We fly to ${pick(r, f.cities)} tomorrow. Should we pack an umbrella?`, (r, f) => `My race in ${pick(r, f.cities)} is tomorrow. Will I get wet?`],
    now: [(r, f) => `My washing is outside in ${pick(r, f.cities)} now. Should I bring it in?`, (r, f) => `I am about to cycle across ${pick(r, f.cities)} now. Gloves or not?`],
  },
  search: {
    story: [(r, f) => `My child wants a bedtime story with a ${pick(r, f.animals)} in it.`, (r, f) => `Something to read aloud tonight, starring a ${pick(r, f.animals)}, please.`],
    word: [(r, f) => `I keep seeing the word ${pick(r, f.words)} and do not know it.`, (r, f) => `My teacher used the word ${pick(r, f.words)}. I am lost.`],
    books: [(r, f) => `I am writing a school report on ${pick(r, f.topics)} and need books.`, (r, f) => `The library trip is about ${pick(r, f.topics)}. Which books should I borrow?`],
    facts: [(r, f) => `My class is learning about the ${pick(r, f.animals)}. We need facts.`, (r, f) => `Quiz night is on ${pick(r, f.topics)}. I need facts to study.`],
  },
  math: {
    add: [(r) => `I had ${small(r) * 3} stamps and got ${small(r)} more. How many now?`, (r) => `Our team scored ${small(r)} goals and then ${small(r)} more. What is the total?`],
    multiply: [(r) => `There are ${small(r)} boxes with ${small(r) + 6} eggs each. How many eggs?`, (r) => `Each of ${small(r)} kids gets ${small(r)} sweets. How many sweets in all?`],
    subtract: [(r) => `I had ${small(r) + 20} sweets and ate ${small(r)}. How many are left?`, (r) => `The bus had ${small(r) + 30} seats and ${small(r)} are taken. How many are free?`],
  },
};

const ZONES: Record<LearnZone, { name: string; templates: Templates; novelty: string }> = {
  ood: { name: 'learn-design-ood', templates: OOD, novelty: 'new-wording only: templates no learn-design split uses (some with cue words training never uses) and unseen names and numbers; same classes, arguments and grader' },
  errand: { name: 'learn-errand', templates: ERRAND, novelty: 'a new domain: everyday situations that only imply the tool and argument (no command verb, no tool word), unseen names and numbers; same classes, answers and grader' },
};

/**
 * The task of one zone and index (pure). `input`: `{kind: 'design', request}`; `expected`:
 * `<tool>:<argument>`; `meta`: `{class, tool, port, argument, zone}`.
 * @throws DatasetError `BAD_OPTIONS` for a negative or fractional index.
 */
export function learnZoneTask(zone: LearnZone, index: number, datasetName = ZONES[zone].name): Task {
  if (!Number.isInteger(index) || index < 0) throw new DatasetError('BAD_OPTIONS', `index must be a non-negative integer, got ${String(index)}`);
  const r = mulberry32(fnv1a32(`${LEARN_DESIGN_SEED}/${zone}/${index}`));
  const tool = LEARN_DESIGN_TOOL_NAMES[index % LEARN_DESIGN_TOOL_NAMES.length]!;
  const { port, values } = LEARN_DESIGN_TOOLS[tool];
  const argument = pick(r, values);
  const templates = (ZONES[zone].templates[tool] as Record<string, Template[]>)[argument]!;
  const request = pick(r, templates)(r, FILL);
  return { id: `${datasetName}/test/${index}`, index, input: { kind: 'design', request }, expected: `${tool}:${argument}`, meta: { class: tool, tool, port, argument, zone } };
}

/** A zone dataset: split `test`, the `learn-design` grader and classes. */
export function createLearnZoneDataset(zone: LearnZone, name = ZONES[zone].name): Dataset {
  return {
    name,
    splits: ['test'],
    grader: learnDesignGrader,
    classOf: learnDesignClass,
    novelty: { test: ZONES[zone].novelty },
    load(opts: LoadOptions): Task[] {
      return loadProcedural(name, LEARN_ZONE_SIZES, opts, (_split, i) => learnZoneTask(zone, i, name));
    },
  };
}
