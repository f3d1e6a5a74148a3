/**
 * A study plan: conditions × zones × seeds × models, read from YAML (or JSON) and validated with
 * zod; every problem is reported with its file, line, column and document path (the same
 * locating as core/workflow/load.ts). The shape follows the tables of FloWright (a single agent
 * without tools, with tools, the workflow untrained, the workflow after each improvement,
 * across in-distribution, out-of-distribution and out-of-domain zones): docs/studies.md.
 *
 * Pure: the caller reads the file; paths in the plan (workflows, models) stay as written and are
 * resolved by the caller against the plan's folder.
 */
import { LineCounter, parseDocument } from 'yaml';
import { z, type ZodError } from 'zod';
import { FlowlabError } from '../errors.ts';
import { position } from '../workflow/load.ts';

export type StudyErrorCode =
  /** The plan does not parse or does not validate (`issues` lists every problem). */
  'BAD_PLAN';

/** One located problem of a plan. */
export interface PlanIssue {
  /** Document path, e.g. `conditions[2].train.roles`. */
  path: string;
  message: string;
  line?: number;
  column?: number;
}

/** An error of a study plan: it does not parse or validate (with located issues). A budget stop is no error: the study's status is `stopped`. */
export class StudyError extends FlowlabError<StudyErrorCode> {
  override readonly name = 'StudyError';
  constructor(code: StudyErrorCode, message: string, readonly issues: PlanIssue[] = [], file?: string) {
    super(code, message, { ...(file !== undefined && { file }), ...(issues[0]?.line !== undefined && { line: issues[0].line, col: issues[0].column }), ...(issues[0] && { path: issues[0].path }) });
  }
}

const Slug = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/i, 'must be 1-40 letters, digits, - or _, starting with a letter or digit');
const Int = (min: number, max: number) => z.number().int('must be a whole number').min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);

/** What kind of condition a row of the table is (its label in the seeds' tables). */
export const CONDITION_KINDS = ['single-agent', 'single-agent-tools', 'workflow', 'laptop-rl', 'co-evolution', 'hint-cards', 'mass'] as const;
export type ConditionKind = (typeof CONDITION_KINDS)[number];

/** A train loop's schedule (core/experiments/trainLoop.ts TrainLoopSpec; the CLI's train-loop defaults). */
const TrainSchema = z.strictObject({
  roles: z.array(Slug).min(1, 'must name at least one role'),
  iterations: Int(1, 10_000),
  limit: Int(1, 1024).default(8).describe('tasks per iteration'),
  group: Int(1, 64).default(8),
  lr: z.number().gt(0).lt(1).default(3e-4),
  kl: z.number().min(0).default(0.02),
  temperature: z.number().gt(0).max(5).default(1),
  maxGradNorm: z.number().min(0).default(1),
  sft: z
    .strictObject({
      warmStart: Int(0, 10_000).default(0),
      mix: z.boolean().default(true),
      steps: Int(1, 100).default(2),
      lr: z.number().gt(0).lt(1).default(1e-3),
      minScore: z.union([z.number().gt(0).max(1), z.record(Slug, z.number().gt(0).max(1))]).default(1),
      roles: z.array(Slug).min(1).optional(),
    })
    .optional(),
});

const ConditionSchema = z.strictObject({
  id: Slug,
  label: z.string().min(1).max(80).optional(),
  kind: z.enum(CONDITION_KINDS),
  /** The workflow file (relative to the plan). A MASS champion is the workflow MASS wrote. */
  workflow: z.string().min(1),
  /** Training conditions: the train loop run once per seed and model before evaluation. */
  train: TrainSchema.optional(),
  /** Hint cards from the library (ids), given to every run of the condition. */
  cards: z.array(z.string().min(1)).min(1).optional(),
  cardBudget: Int(1, 4096).optional(),
});

export const ZONE_KINDS = ['in-distribution', 'out-of-distribution', 'out-of-domain'] as const;
export type ZoneKind = (typeof ZONE_KINDS)[number];

const ZoneSchema = z.strictObject({
  id: Slug,
  label: z.string().min(1).max(80).optional(),
  kind: z.enum(ZONE_KINDS),
  dataset: z.string().min(1),
  split: z.string().min(1),
  limit: Int(1, 100_000),
  offset: Int(0, 10_000_000).default(0),
  /** A zone whose dataset may be missing from this build (e.g. one another branch adds): skipped with a note, not an error. */
  optional: z.boolean().default(false),
});

const ModelSchema = z.strictObject({
  id: Slug,
  /** A GGUF file (relative to the plan, or absolute; `$FLOWLAB_SHARED` and `~` are expanded by the CLI). */
  model: z.string().min(1),
  threads: Int(1, 256).default(2),
  contextSize: Int(64, 131_072).optional(),
});

export const PlanSchema = z.strictObject({
  name: Slug,
  description: z.string().optional(),
  /** The condition every delta is measured against (the untrained workflow in FloWright's table). */
  baseline: Slug,
  /** Where training conditions train (their `train` split; the zones are where all conditions are evaluated). */
  train: z.strictObject({ dataset: z.string().min(1), split: z.string().min(1).default('train') }).optional(),
  conditions: z.array(ConditionSchema).min(1, 'must list at least one condition'),
  zones: z.array(ZoneSchema).min(1, 'must list at least one zone'),
  seeds: z.array(Int(0, 0x7fffffff)).min(1, 'must list at least one seed').default([0]),
  models: z.array(ModelSchema).min(1, 'must list at least one model'),
  bootstrap: z.strictObject({ resamples: Int(100, 1_000_000).default(10_000), seed: Int(0, 0x7fffffff).default(0) }).default({ resamples: 10_000, seed: 0 }),
});

export type StudyPlan = z.output<typeof PlanSchema>;
export type StudyCondition = StudyPlan['conditions'][number];
export type StudyZone = StudyPlan['zones'][number];
export type StudyModel = StudyPlan['models'][number];
export type StudyTrain = NonNullable<StudyCondition['train']>;

export type DocPath = Array<string | number>;
export const fmtPath = (p: DocPath) => p.reduce<string>((s, k) => (typeof k === 'number' ? `${s}[${k}]` : s ? `${s}.${k}` : k), '');

/** The plan's cross-field rules (unique ids, a baseline that exists, training where needed). */
function crossIssues(plan: StudyPlan): Array<{ path: DocPath; message: string }> {
  const out: Array<{ path: DocPath; message: string }> = [];
  for (const list of ['conditions', 'zones', 'models'] as const) {
    const seen = new Map<string, number>();
    plan[list].forEach((x, i) => {
      if (seen.has(x.id)) out.push({ path: [list, i, 'id'], message: `id "${x.id}" is used twice (also ${list}[${seen.get(x.id)}])` });
      else seen.set(x.id, i);
    });
  }
  const base = plan.conditions.findIndex((c) => c.id === plan.baseline);
  if (base < 0) out.push({ path: ['baseline'], message: `names "${plan.baseline}", which is not a condition (conditions: ${plan.conditions.map((c) => c.id).join(', ')})` });
  else if (plan.conditions[base]!.train) out.push({ path: ['baseline'], message: `names "${plan.baseline}", a training condition; the baseline must be evaluated as it is` });
  if (new Set(plan.seeds).size !== plan.seeds.length) out.push({ path: ['seeds'], message: 'lists a seed twice' });
  plan.conditions.forEach((c, i) => {
    const trains = c.kind === 'laptop-rl' || c.kind === 'co-evolution';
    if (trains && !c.train) out.push({ path: ['conditions', i, 'train'], message: `a ${c.kind} condition needs "train" (roles, iterations, …)` });
    if (!trains && c.train) out.push({ path: ['conditions', i, 'train'], message: `only laptop-rl and co-evolution conditions train; this one is ${c.kind}` });
    if (c.kind === 'laptop-rl' && c.train && c.train.roles.length !== 1) out.push({ path: ['conditions', i, 'train', 'roles'], message: `single-role laptop RL trains one role, got ${c.train.roles.length}` });
    if (c.kind === 'co-evolution' && c.train && c.train.roles.length < 2) out.push({ path: ['conditions', i, 'train', 'roles'], message: 'co-evolution trains at least two roles' });
    if (c.kind === 'hint-cards' && !c.cards) out.push({ path: ['conditions', i, 'cards'], message: 'a hint-cards condition needs "cards" (library card ids)' });
    if (c.train && !plan.train) out.push({ path: ['train'], message: `condition "${c.id}" trains, so the plan needs "train: {dataset, split}"` });
  });
  return out;
}

export function zodIssues(err: ZodError): Array<{ path: DocPath; message: string }> {
  return err.issues.map((i) => {
    const p = i.path.map((s) => (typeof s === 'symbol' ? String(s) : s)) as DocPath;
    let message = i.message;
    if (i.code === 'unrecognized_keys') message = `unknown field(s): ${i.keys.join(', ')}`;
    else if (i.code === 'invalid_type' && /received undefined/.test(i.message)) message = `missing required field "${String(p[p.length - 1])}"`;
    return { path: p, message };
  });
}

/** The message of a bad plan: one line per issue, `file:line:col at path: message`. */
export function formatPlanIssues(issues: readonly PlanIssue[], file?: string): string {
  return issues.map((i) => `  ${file ?? 'plan'}${i.line !== undefined ? `:${i.line}:${i.column}` : ''}${i.path ? ` at ${i.path}` : ''}: ${i.message}`).join('\n');
}

/**
 * Parses and validates a study plan (YAML or JSON text). Returns the plan with defaults filled.
 * Throws StudyError `BAD_PLAN` whose `issues` locate every problem (file, line, column, path) and
 * whose message lists them: YAML syntax, schema (unknown fields, wrong types, ranges) and the
 * cross-field rules (unique ids, the baseline is an untrained condition, laptop-rl trains one role
 * and co-evolution two or more, training needs the plan's `train`).
 */
export function parseStudyPlan(text: string, file?: string): StudyPlan {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: true, uniqueKeys: true });
  const fail = (issues: PlanIssue[]): never => {
    throw new StudyError('BAD_PLAN', `Invalid study plan ${file ?? ''}:\n${formatPlanIssues(issues, file)}`.replace('plan :', 'plan:'), issues, file);
  };
  if (doc.errors.length) fail(doc.errors.map((e) => ({ path: '', message: e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, ''), line: e.linePos?.[0]?.line, column: e.linePos?.[0]?.col })));
  const parsed = PlanSchema.safeParse(doc.toJS({ maxAliasCount: 100 }) ?? {});
  const locate = (xs: Array<{ path: DocPath; message: string }>): PlanIssue[] => xs.map((x) => ({ path: fmtPath(x.path), message: x.message, ...position(doc, lc, x.path) }));
  if (!parsed.success) fail(locate(zodIssues(parsed.error)));
  const plan = parsed.data!;
  const cross = crossIssues(plan);
  if (cross.length) fail(locate(cross));
  return plan;
}

/**
 * A StudyError `BAD_PLAN` for problems found after validation (an unknown dataset, a role the
 * workflow cannot train), each located in the plan's text like the schema's own issues.
 */
export function planError(text: string, problems: ReadonlyArray<{ path: Array<string | number>; message: string }>, file?: string): StudyError {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc });
  const issues = problems.map((x) => ({ path: fmtPath(x.path), message: x.message, ...position(doc, lc, x.path) }));
  return new StudyError('BAD_PLAN', `Invalid study plan ${file ?? ''}:\n${formatPlanIssues(issues, file)}`.replace('plan :', 'plan:'), issues, file);
}
