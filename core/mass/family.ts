/**
 * The task families MASS runs on in Flowlab, and the named contract checks a design may attach.
 * The default is `learn-tool` (core/tasks/learn.ts): a project-owned procedural family with an
 * exact grader that a tiny model can act on (the final answer is decoded under the grammar of the
 * three tool names, so every answer is gradable and a right one is reachable by chance).
 */
import { learnGrader, LEARN_TOOLS } from '../tasks/learn.ts';
import type { Task } from '../tasks/types.ts';
import { CheckRegistry, type Check } from '../workflow/checks.ts';
import { MassError } from './errors.ts';
import type { MassFamily } from './types.ts';
import { DESIGN_CHECKS, DESIGN_FIRST, learnDesignFamily } from './learnDesignFamily.ts';
import { learnUnitFamily } from './learnUnitFamily.ts';

const textOf = (out: unknown) => (typeof out === 'string' ? out : JSON.stringify(out ?? ''));

/**
 * Checks MASS designs may name beyond the built-in ones (core/workflow/checks.ts). Each reads
 * only the reply and the node's inputs (never the task's expected answer).
 */
export const MASS_CHECKS: Record<string, Check> = {
  /** The reply names one of the tools the task lists (its `brief` input holds the task prompt). */
  names_a_tool: (out, { inputs }) => {
    const listed = /Tools: ([^\n.]*)/.exec(String(inputs.brief ?? ''))?.[1]?.split(/,\s*/) ?? [...LEARN_TOOLS];
    const t = textOf(out).toLowerCase();
    return listed.some((x) => x && new RegExp(`\\b${x.trim()}\\b`).test(t)) ? null : `the reply names none of the tools ${listed.join(', ')}`;
  },
  /** The reply quotes at least one word (4+ letters) of the request in the task prompt. */
  cites_request: (out, { inputs }) => {
    const req = /Request: ([^\n]*)/.exec(String(inputs.brief ?? ''))?.[1] ?? '';
    const words = req.toLowerCase().match(/[a-z]{4,}/g) ?? [];
    const t = textOf(out).toLowerCase();
    return words.some((w) => t.includes(w)) ? null : 'the reply quotes no word of the request';
  },
  /**
   * No future leakage: the reply does not claim a grade or an expected answer (text such as
   * `expected`, `grader`, `score:`), which no agent is given; a reply that does is reporting
   * what it cannot know.
   */
  no_future_leakage: (out) => (/\b(expected|grader|score:|ground truth)\b/i.test(textOf(out)) ? 'the reply claims to know the grade or the expected answer' : null),
};

/** The check registry a MASS run validates contracts with: built-in checks plus MASS_CHECKS. */
export function massChecks(): CheckRegistry {
  const reg = new CheckRegistry();
  for (const [name, check] of Object.entries(MASS_CHECKS)) reg.register(name, check);
  return reg;
}

/**
 * The checks a stored MASS step may name, whatever its family: MASS_CHECKS plus every family's own
 * (learn-design's DESIGN_CHECKS). Replay, fork and counterfactual of a stored step parse its
 * workflow text with these (core/experiments/storedWorkflow.ts); the names do not collide.
 */
export function storedMassChecks(): CheckRegistry {
  const reg = massChecks();
  for (const [name, check] of Object.entries(DESIGN_CHECKS)) reg.register(name, check);
  return reg;
}

function learnTool(): MassFamily {
  return {
    dataset: 'learn-tool',
    prompt: (task: Task) => String(task.input.prompt),
    answerSchema: { enum: [...LEARN_TOOLS] },
    grader: learnGrader,
    checks: massChecks(),
  };
}

/** The words a `learn-word` answer is decoded among (the grammar); the grader wants `happy`. */
export const WORD_CHOICES = ['happy', 'sad', 'tired', 'scared', 'angry'] as const;

/**
 * `learn-word` (core/tasks/learn.ts, "say the word") as a MASS family: the story start is
 * followed by `They felt`, the answer is decoded among WORD_CHOICES, and the exact grader scores 1
 * when it says `happy`. stories260K picks `happy` in about 13% of runs at T 1 and 1 in 10 held-out
 * tasks greedily: a family whose right answers its own runs find, so SFT on them can raise it.
 */
function learnWord(): MassFamily {
  return {
    dataset: 'learn-word',
    prompt: (task: Task) => `${String(task.input.prompt)} They felt`,
    answerSchema: { enum: [...WORD_CHOICES] },
    grader: learnGrader,
    checks: massChecks(),
  };
}

const FAMILIES: Record<string, () => MassFamily> = { 'learn-tool': learnTool, 'learn-word': learnWord, 'learn-design': () => learnDesignFamily(massChecks()), 'learn-unit': () => learnUnitFamily(massChecks()) };

/**
 * The default first design of a family: for learn-tool a version-0 list of {agent_id, role,
 * instruction} (MASS's written form): an orchestrator entry, a tool picker and a checker.
 */
export const FIRST_DESIGNS: Record<string, ReadonlyArray<{ agent_id: string; role: string; instruction: string }> | typeof DESIGN_FIRST> = {
  'learn-tool': [
    { agent_id: 'agent_orchestrator', role: 'Lead', instruction: 'Ask the picker, then the checker, then answer with one tool.' },
    { agent_id: 'picker', role: 'Tool picker', instruction: 'Say which tool fits the request.' },
    { agent_id: 'checker', role: 'Checker', instruction: 'Say if the pick fits the request.' },
  ],
  /** learnDesignFamily.ts: a picker then a filler, no check, no retry, no hand-off (version-1 form). */
  'learn-design': DESIGN_FIRST,
};

/** Names of the MASS task families. */
export function massFamilyNames(): string[] {
  return Object.keys(FAMILIES);
}

/** A MASS task family by dataset name. Errors: MassError `UNKNOWN_FAMILY` (lists the known ones). */
export function massFamily(dataset: string): MassFamily {
  const make = FAMILIES[dataset];
  if (!make) throw new MassError('UNKNOWN_FAMILY', `no MASS task family for dataset "${dataset}"; known: ${massFamilyNames().join(', ')}`, { field: 'dataset' });
  return make();
}
