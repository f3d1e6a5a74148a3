/**
 * `learn-design` as a MASS family: the workflow matters. The tasks are learn-design's
 * (core/tasks/learnDesign.ts: a request that needs one of three tools and one argument, e.g.
 * `Will it rain in Paris tomorrow?` → `weather:tomorrow`; train 2,000, held-out 500, of which
 * every fourth held-out task is worded in a template no training task uses, the other three are
 * training templates with unseen fillers). The team hands back two fields decoded under closed
 * grammars (`tool` among the 3 tools, `argument` among the 10 arguments), so a 260K model's reply
 * is always gradable and a right one is reachable by chance, and the answer is assembled from the
 * replies' fields (`answerFields`, answerTool.ts: no orchestrator copying). Graded per part as
 * learn-design is: 0.5 for the tool, 0.5 for the argument.
 *
 * What a design changes (the edit language's menu, edits.ts):
 *  - `tool_fits_request` on the agent that picks the tool catches a wrong tool (the request's cue
 *    words fix it: a day → weather, a sum's word → math, else search); with a retry on that hop
 *    (`redelegate`) the orchestrator asks again, so a mistake is caught and often fixed;
 *  - `argument_in_request` on the agent that fills the argument catches an argument the request
 *    does not name (plus → add, times → multiply, minus → subtract; the other arguments by name);
 *  - `argument_fits_tool` catches an argument of another tool, but only when the filler knows the
 *    tool: its hop must read the picker (a hand-off: the hop order passes the right data), else it
 *    fails every time and the argument is lost;
 *  - a check on the wrong agent (`tool_fits_request` on the filler) fails every time: a check
 *    without a retry turns a wrong reply into a missing one (no gain), one on the wrong agent
 *    loses right ones. Version 0 has no check, no retry and no hand-off.
 * The checks read only the reply and the node's inputs (the request, replies it reads), never
 * the expected answer; on this family's generated requests (every split) the cue words fix the
 * tool and the argument exactly (tested over all 2,500 tasks), so a check passes exactly when its
 * part is right.
 */
import { LEARN_DESIGN_TOOLS, LEARN_DESIGN_TOOL_NAMES, learnDesignGrader, type LearnDesignTool } from '../tasks/learnDesign.ts';
import type { Grade, SyncGrader, Task } from '../tasks/types.ts';
import type { Check, CheckRegistry } from '../workflow/checks.ts';
import { designAnswerText } from '../tasks/learnDesignJudge.ts';
import { requestPairJudgeWorkflow } from './judge.ts';
import type { EditMenu, MassFamily, PairJudge, Workspace } from './types.ts';

/** Every argument value, in tool order (the `argument` field's grammar). */
export const DESIGN_ARGUMENTS: readonly string[] = LEARN_DESIGN_TOOL_NAMES.flatMap((t) => [...LEARN_DESIGN_TOOLS[t].values]);

/** Words of a request that name each argument (the argument itself, and its cue words). */
const ARGUMENT_CUES: Record<string, readonly string[]> = {
  today: ['today'], tomorrow: ['tomorrow'], now: ['now'],
  story: ['story'], word: ['word'], books: ['books'], facts: ['facts'],
  add: ['add', 'plus'], multiply: ['multiply', 'times'], subtract: ['subtract', 'minus'],
};

const words = (text: string) => new Set(text.toLowerCase().match(/[a-z]+/g) ?? []);

/** The arguments a request names by a cue word (`Will it rain in Oslo now?` → [now]). Pure. */
export function cuedArguments(request: string): string[] {
  const w = words(request);
  return DESIGN_ARGUMENTS.filter((a) => ARGUMENT_CUES[a]!.some((c) => w.has(c)));
}

/** The tool a request's cue words fix: a day word → weather, a sum's word → math, else search. Pure. */
export function cuedTool(request: string): LearnDesignTool {
  const cued = cuedArguments(request);
  if (cued.some((a) => (LEARN_DESIGN_TOOLS.weather.values as readonly string[]).includes(a))) return 'weather';
  if (cued.some((a) => (LEARN_DESIGN_TOOLS.math.values as readonly string[]).includes(a))) return 'math';
  return 'search';
}

/** The request of a node's `brief` input (the family prompt's `Request:` line). */
const requestOf = (inputs: Record<string, unknown>) => /Request: ([^\n]*)/.exec(String(inputs.brief ?? ''))?.[1] ?? '';
const fieldOf = (out: unknown, name: string): string | undefined => {
  const v = out && typeof out === 'object' ? (out as Record<string, unknown>)[name] : undefined;
  return typeof v === 'string' && v.trim() ? v.trim().toLowerCase() : undefined;
};

/** The family's checks (each reads the reply and the node's inputs only). */
export const DESIGN_CHECKS: Record<string, Check> = {
  /** The reply's `tool` is the one the request's cue words fix. */
  tool_fits_request: (out, { inputs }) => {
    const tool = fieldOf(out, 'tool');
    if (!tool) return 'the reply names no tool';
    const want = cuedTool(requestOf(inputs));
    return tool === want ? null : `the request asks for ${want}, the reply names ${tool}`;
  },
  /** The reply's `argument` is one the request names (plus → add, times → multiply, minus → subtract). */
  argument_in_request: (out, { inputs }) => {
    const arg = fieldOf(out, 'argument');
    if (!arg) return 'the reply gives no argument';
    return cuedArguments(requestOf(inputs)).includes(arg) ? null : `the request does not name the argument ${arg}`;
  },
  /**
   * The reply's `argument` is a value of the tool: the reply's own `tool`, else the `tool` of a
   * reply the hop reads (`r0`…, `before`…). With no tool to read it fails: read the picker.
   */
  argument_fits_tool: (out, { inputs }) => {
    const arg = fieldOf(out, 'argument');
    if (!arg) return 'the reply gives no argument';
    const read = Object.entries(inputs).filter(([k]) => /^(r\d+|before)(_\d+)?$/.test(k)).map(([, v]) => fieldOf(v, 'tool'));
    const tool = fieldOf(out, 'tool') ?? read.filter(Boolean).at(-1);
    if (!tool) return 'no tool to check the argument against: the hop reads no reply naming a tool';
    const values = (LEARN_DESIGN_TOOLS as Record<string, { values: readonly string[] }>)[tool]?.values ?? [];
    return values.includes(arg) ? null : `${arg} is not an argument of ${tool}`;
  },
};

/** The edit language's menu for this family. */
export const DESIGN_EDIT_MENU: EditMenu = {
  checks: ['tool_fits_request', 'argument_in_request', 'argument_fits_tool', 'non_empty', 'no_future_leakage'],
  instructions: {
    picker: ['Name the tool the request needs.', 'Pick weather for a day, math for a sum.'],
    filler: ['Give the tool argument.', 'Copy the word that names the argument.'],
  },
  guard: true,
};

/** Version 0 of this family: a picker (tool) then a filler (argument); no check, no retry, no hand-off. */
export const DESIGN_FIRST = {
  orchestrator: { role: 'Lead', instruction: 'Call the picker, then the filler.' },
  agents: [
    { agent_id: 'picker', role: 'Tool picker', instruction: 'Name the tool the request needs.', contract: { fields: ['tool'], artefacts: [], checks: [] } },
    { agent_id: 'filler', role: 'Argument filler', instruction: 'Give the tool argument.', contract: { fields: ['argument'], artefacts: [], checks: [] } },
  ],
  hops: ['picker', 'filler'],
} as const;

/**
 * The family's grader: learn-design's per part (learnDesignGrader) on the assembled answer
 * `{tool, argument}` (a missing field reads as empty: its half scores 0). 0.5 per right part.
 */
export const designAnswerGrader: SyncGrader = {
  grade(answer: unknown, task: Task): Grade {
    if (answer && typeof answer === 'object' && !Array.isArray(answer)) {
      const o = answer as Record<string, unknown>;
      const s = (v: unknown) => (typeof v === 'string' ? v : '');
      return learnDesignGrader.grade({ tool: s(o.tool), argument: s(o.argument) }, task);
    }
    return learnDesignGrader.grade(answer, task);
  },
};

/**
 * The judge's workflow for `evolve learn-design --judge pair`: examples/judge-design.yaml as a
 * JSON document (the same role, prompt text, 4-token budget and `A` | `B` grammar), so a judge
 * trained on learn-design-judge judges two versions' answers without a new prompt
 * (learnDesignFamily.test.ts checks the rendered prompt against the YAML's byte for byte).
 */
export const LEARN_DESIGN_JUDGE_WORKFLOW = requestPairJudgeWorkflow('judge-design', 'A judge names which of two answers (tool and argument) fits a request.');

/** A run's assembled answer (an object or its JSON text, or `tool:argument`) as the judge reads it: `<tool> <argument>` (`none` for a missing part; learnDesignJudge.ts `designAnswerText`); anything unreadable reads `none`. */
export function judgedDesignAnswer(ws: Workspace): string {
  let a: unknown = ws.answer;
  if (typeof a === 'string' && a.trim().startsWith('{')) {
    try {
      a = JSON.parse(a);
    } catch {
      return 'none';
    }
  }
  if (a && typeof a === 'object' && !Array.isArray(a)) {
    const o = a as Record<string, unknown>;
    return designAnswerText(typeof o.tool === 'string' ? o.tool : undefined, typeof o.argument === 'string' ? o.argument : undefined);
  }
  if (typeof a === 'string' && a.includes(':')) return designAnswerText(a.split(':')[0], a.split(':').slice(1).join(':'));
  return 'none';
}

/** learn-design's pairwise self-judge prompt (learn-design-judge's task format). */
export const learnDesignJudge: PairJudge = {
  workflowText: LEARN_DESIGN_JUDGE_WORKFLOW,
  input: (a, b, task) => ({ request: String(task.input.request), a: judgedDesignAnswer(a), b: judgedDesignAnswer(b) }),
};

/** The `learn-design` MASS family (see the module comment); `checks`: the MASS checks (family.ts `massChecks()`), to which the family's are added. */
export function learnDesignFamily(checks: CheckRegistry): MassFamily {
  for (const [name, check] of Object.entries(DESIGN_CHECKS)) checks.register(name, check);
  const fieldSchemas = { tool: { enum: [...LEARN_DESIGN_TOOL_NAMES] }, argument: { enum: [...DESIGN_ARGUMENTS] } };
  return {
    dataset: 'learn-design',
    prompt: (task: Task) => `Request: ${String(task.input.request)}\nTools: ${LEARN_DESIGN_TOOL_NAMES.join(', ')}`,
    answerSchema: { type: 'object', properties: fieldSchemas, required: ['tool', 'argument'], additionalProperties: false },
    grader: designAnswerGrader,
    checks,
    fieldSchemas,
    answerFields: ['tool', 'argument'],
    editMenu: DESIGN_EDIT_MENU,
    pairJudge: learnDesignJudge,
  };
}
