/**
 * Workshop scenarios (`workshops/*.yaml`): an ordered set of steps, each with a short text for
 * the room, the Flowlab command that runs (blame-eval with SIMULATED faults, a train loop, a MASS
 * outer loop), the question the room answers before the reveal, and what the reveal shows.
 * Parsed and validated here (zod), every problem located by file, line, column and path.
 */
import { createHash } from 'node:crypto';
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { FlowlabError } from '../errors.ts';
import { fmtPath, zodIssues, type DocPath } from '../studies/plan.ts';
import { position } from '../workflow/load.ts';

export type WorkshopErrorCode =
  /** The scenario file does not parse or validate (`issues` lists every problem). */
  | 'BAD_SCENARIO'
  /** An unknown step, choice or control action. */
  | 'BAD_REQUEST'
  /** A prediction after the reveal, or a reveal before the step's result exists. */
  | 'WRONG_PHASE'
  /** A room-mode step with no rehearsal in the store. */
  | 'NOT_REHEARSED'
  /** A step's command failed or printed no JSON. */
  | 'STEP_FAILED'
  /** A join when the room holds as many attendees as the presenter's cap allows. */
  | 'ROOM_FULL'
  /** A call by an attendee the presenter removed, or who never joined. */
  | 'NOT_ATTENDEE';

/** One located problem of a scenario file. */
export interface ScenarioIssue {
  /** Document path, e.g. `steps[1].question.choices`. */
  path: string;
  message: string;
  line?: number;
  column?: number;
}

/** An error of workshop mode (codes above); a bad scenario carries every located issue. */
export class WorkshopError extends FlowlabError<WorkshopErrorCode> {
  override readonly name = 'WorkshopError';
  constructor(code: WorkshopErrorCode, message: string, readonly issues: ScenarioIssue[] = [], file?: string) {
    super(code, message, { ...(file !== undefined && { file }), ...(issues[0]?.line !== undefined && { line: issues[0].line, col: issues[0].column }), ...(issues[0] && { path: issues[0].path }) });
  }
}

/** The commands a step may run (each prints one JSON object with `--json`). */
export const STEP_COMMANDS = ['blame-eval', 'train-loop', 'rank', 'rsi'] as const;
export type StepCommand = (typeof STEP_COMMANDS)[number];

/**
 * How a step's truth is read from what ran:
 * - `blamed-role`: the role structural credit blames most often over the step's runs
 *   (core/blame/credit roots), `ambiguous` when most roots are ambiguous, `nobody` when no run has a
 *   blamed or ambiguous root (a silent error: only the correctness rung carries it);
 * - `roles-learned`: `all` when every trained role's held-out reward beats its start in a paired
 *   sign test (p < 0.05, mean difference > 0), else the one role that does, else `none`;
 * - `judge-prefers-tamperer`: `yes` when the self-judge's win rate in pairs with one SIMULATED
 *   tampered run is above one half, else `no`;
 * - `fix-saves` ("what if"): after the step's blame evaluation, `flowlab counterfactual` forks its
 *   failed and silent runs at the step's `what_if` node runs with a corrected output (docs/fork.md);
 *   `yes` when the fix saves (flips to success) more than half of the runs it was tried on, else `no`;
 * - `blind-spot-kept` (an `rsi` step on a family with a blind-spot class, learn-unit): which arm's
 *   held-out blind-spot error rate did not fall over the cycles — `self`, `verifier`, `both` or
 *   `neither`; an arm's rate fell when its last cycle's 95% Wilson interval lies wholly below the
 *   base's rate (truth.ts `blindSpotFell`) — a question for a base that answers in the wrong unit
 *   at all (from a base at 0 nothing can fall, and the truth is `both` before anyone predicts);
 * - `blind-spot-rose` (the same rsi step): which arm answers in the wrong unit more often than the
 *   model it started from — its last cycle's interval lies wholly above the base's rate
 *   (truth.ts `blindSpotRose`).
 */
export const TRUTHS = ['blamed-role', 'roles-learned', 'judge-prefers-tamperer', 'fix-saves', 'blind-spot-kept', 'blind-spot-rose'] as const;
export type TruthKind = (typeof TRUTHS)[number];

/** Flags the workshop command supplies itself; a step's args must not set them. */
export const RESERVED_FLAGS = ['--db', '--json', '--model', '--threads'] as const;

const Slug = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/i, 'must be 1-40 letters, digits, - or _, starting with a letter or digit');
const Text = (max: number) => z.string().trim().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);

const ChoiceSchema = z.union([
  Slug.transform((id) => ({ id, label: id })),
  z.strictObject({ id: Slug, label: Text(80) }),
]);

const StepSchema = z.strictObject({
  id: Slug,
  title: Text(120),
  /** What the room reads while it thinks (plain text; blank lines separate paragraphs). */
  text: Text(2000),
  run: z.strictObject({
    command: z.enum(STEP_COMMANDS),
    /** Arguments after the command name; paths are relative to the repository root. */
    args: z.array(z.string().min(1).max(400)).max(64),
    /** Exit statuses besides 0 that still count as a result (rank halts with 3 by design). */
    ok_exit: z.array(z.number().int().min(0).max(255)).max(8).default([]),
  }),
  question: z.strictObject({
    prompt: Text(300),
    choices: z.array(ChoiceSchema).min(2, 'must offer at least 2 choices').max(8, 'must offer at most 8 choices'),
    truth: z.enum(TRUTHS),
  }),
  /** What the reveal shows and why (read out by the presenter). */
  reveal: Text(2000),
  /** The timer of the question, in seconds. */
  seconds: z.number().int('must be a whole number').min(10, 'must be at least 10').max(3600, 'must be at most 3600').default(120),
  /**
   * The "what if" of a `fix-saves` step: which node runs of the blame evaluation's failed and silent
   * runs are fixed (`flowlab counterfactual --intervene`: blamed, each-node, role:<role>) and with
   * what (`--with`: oracle, or teacher=<model file>, a path relative to the repository root).
   */
  what_if: z.strictObject({
    intervene: z.string().regex(/^(blamed|each-node|role:[A-Za-z0-9_-]{1,40})$/, 'must be blamed, each-node or role:<role>'),
    with: z.string().regex(/^(oracle|teacher=\S{1,400})$/, 'must be oracle or teacher=<model>'),
  }).optional(),
});

const ScenarioSchema = z.strictObject({
  id: Slug,
  title: Text(120),
  summary: Text(600),
  steps: z.array(StepSchema).min(1, 'must have at least one step').max(12, 'must have at most 12 steps'),
});

export type Scenario = z.output<typeof ScenarioSchema>;
export type ScenarioStep = Scenario['steps'][number];
export type Choice = ScenarioStep['question']['choices'][number];

/** The choices each truth can produce besides role names (`blamed-role`, `roles-learned` also take a role). */
const TRUTH_CHOICES: Record<TruthKind, readonly string[]> = {
  'blamed-role': ['nobody', 'ambiguous'],
  'roles-learned': ['all', 'none'],
  'judge-prefers-tamperer': ['yes', 'no'],
  'fix-saves': ['yes', 'no'],
  'blind-spot-kept': ['self', 'verifier', 'both', 'neither'],
  'blind-spot-rose': ['self', 'verifier', 'both', 'neither'],
};

/** The truth kinds whose every fixed choice must be offered. */
const YES_NO: readonly TruthKind[] = ['judge-prefers-tamperer', 'fix-saves', 'blind-spot-kept', 'blind-spot-rose'];

/** The fixed choices of a truth kind (all of them must be offered for `judge-prefers-tamperer`). */
export function truthChoices(kind: TruthKind): readonly string[] {
  return TRUTH_CHOICES[kind];
}

function crossIssues(s: Scenario): Array<{ path: DocPath; message: string }> {
  const out: Array<{ path: DocPath; message: string }> = [];
  const seen = new Map<string, number>();
  s.steps.forEach((step, i) => {
    if (seen.has(step.id)) out.push({ path: ['steps', i, 'id'], message: `step id "${step.id}" is used twice (also steps[${seen.get(step.id)}])` });
    else seen.set(step.id, i);
    const ids = new Set<string>();
    step.question.choices.forEach((c, j) => {
      if (ids.has(c.id)) out.push({ path: ['steps', i, 'question', 'choices', j], message: `choice "${c.id}" is offered twice` });
      ids.add(c.id);
    });
    const truth = step.question.truth;
    if (YES_NO.includes(truth)) {
      for (const need of TRUTH_CHOICES[truth]) {
        if (!ids.has(need)) out.push({ path: ['steps', i, 'question', 'choices'], message: `truth ${truth} needs the choice "${need}"` });
      }
    }
    if (truth === 'fix-saves') {
      if (!step.what_if) out.push({ path: ['steps', i], message: 'truth fix-saves needs what_if: { intervene, with } (the node runs to fix, and with what)' });
      if (step.run.command !== 'blame-eval') out.push({ path: ['steps', i, 'run', 'command'], message: `truth fix-saves forks the runs of a blame-eval, not of ${step.run.command}` });
    } else if (step.what_if) out.push({ path: ['steps', i, 'what_if'], message: `what_if belongs to truth fix-saves, not ${truth}` });
    if ((truth === 'blind-spot-kept' || truth === 'blind-spot-rose') && step.run.command !== 'rsi') out.push({ path: ['steps', i, 'run', 'command'], message: `truth ${truth} reads the cycles of an rsi, not of ${step.run.command}` });
    step.run.args.forEach((a, j) => {
      const flag = a.split('=')[0]!;
      if ((RESERVED_FLAGS as readonly string[]).includes(flag)) out.push({ path: ['steps', i, 'run', 'args', j], message: `${flag} is set by \`flowlab workshop\` itself; leave it out` });
    });
  });
  return out;
}

/** The message of a bad scenario: one line per issue, `file:line:col at path: message`. */
export function formatScenarioIssues(issues: readonly ScenarioIssue[], file?: string): string {
  return issues.map((i) => `  ${file ?? 'scenario'}${i.line !== undefined ? `:${i.line}:${i.column}` : ''}${i.path ? ` at ${i.path}` : ''}: ${i.message}`).join('\n');
}

/**
 * Parses and validates a scenario (YAML or JSON text). Returns it with defaults filled
 * (`seconds` 120, `ok_exit` []; a choice given as a bare id gets its id as label).
 * Throws WorkshopError `BAD_SCENARIO` whose `issues` locate every problem (YAML syntax, schema,
 * duplicate step or choice ids, reserved flags in a step's args, missing yes/no choices).
 */
export function parseScenario(text: string, file?: string): Scenario {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: true, uniqueKeys: true });
  const fail = (issues: ScenarioIssue[]): never => {
    throw new WorkshopError('BAD_SCENARIO', `Invalid workshop scenario ${file ?? ''}:\n${formatScenarioIssues(issues, file)}`.replace('scenario :', 'scenario:'), issues, file);
  };
  if (doc.errors.length) fail(doc.errors.map((e) => ({ path: '', message: e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, ''), line: e.linePos?.[0]?.line, column: e.linePos?.[0]?.col })));
  const locate = (xs: Array<{ path: DocPath; message: string }>): ScenarioIssue[] => xs.map((x) => ({ path: fmtPath(x.path), message: x.message, ...position(doc, lc, x.path) }));
  const parsed = ScenarioSchema.safeParse(doc.toJS({ maxAliasCount: 100 }) ?? {});
  if (!parsed.success) fail(locate(zodIssues(parsed.error)));
  const scenario = parsed.data!;
  const cross = crossIssues(scenario);
  if (cross.length) fail(locate(cross));
  return scenario;
}

/** The scenario's identity for rehearsals: sha256 (hex, 16 characters) of its canonical JSON. A changed file needs a new rehearsal. */
export function scenarioHash(s: Scenario): string {
  return createHash('sha256').update(JSON.stringify(s)).digest('hex').slice(0, 16);
}

/** A step's command as one shell line (`npm run flowlab -- <command> <args> [extra]`), quoted where needed. */
export function commandLine(step: ScenarioStep, extra: readonly string[] = []): string {
  const q = (a: string) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`);
  return ['npm run flowlab --', step.run.command, ...step.run.args, ...extra].map((a, i) => (i === 0 ? a : q(a))).join(' ');
}
