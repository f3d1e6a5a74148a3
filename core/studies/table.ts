/**
 * The study table (the shape of FloWright's results table: conditions as rows, zones as columns): accuracy per
 * condition × zone with a 95% percentile-bootstrap interval over the zone's runs, the delta
 * against the baseline condition paired by (seed, task) with an exact sign test and a bootstrap
 * interval of the mean paired difference (core/stats/paired.ts), and tokens and seconds per task.
 * Runs of several seeds are pooled; each model is its own set of rows. Pure.
 */
import { accuracyByNovelty, answerGuard, constantFlag, deltaGuardNote, type AnswerGuard, type NoveltyAccuracy } from '../guards/index.ts';
import { bootstrapMeanCI, signTest, type BootstrapCI, type SignTest } from '../stats/paired.ts';
import type { StudyCell } from './cells.ts';
import type { ConditionKind, StudyPlan, ZoneKind } from './plan.ts';

/** What the table reads of a stored run. */
export interface StudyRun {
  taskId: string;
  seed: number;
  score: number;
  correct: boolean;
  promptTokens: number;
  completionTokens: number;
  startedAt: number;
  endedAt: number;
  /** The run's answer text and label, for the constant-policy guard (core/guards). */
  answer?: string;
  expected?: string;
}

/** The delta of a condition against the baseline on the same zone and model, paired by (seed, task). */
export interface StudyDelta {
  pairs: number;
  /** Accuracy of this condition minus the baseline's, over the paired runs. */
  delta: number;
  ci: BootstrapCI;
  signTest: SignTest;
  /** Set when either side's answers collapsed (core/guards): `both constant` means the delta is a difference between constants. */
  guard?: 'both constant' | 'one constant';
}

/** One condition on one zone (and model): its runs pooled over seeds. */
export interface StudyTableEntry {
  condition: string;
  zone: string;
  model: string;
  /** Runs stored / planned over the entry's cells. */
  runs: number;
  planned: number;
  /** Share of correct runs with its 95% bootstrap interval (NaNs with no run). */
  accuracy: BootstrapCI;
  /** Mean grader score (partial credit), NaN with no run. */
  score: number;
  /** The zone's best constant policy (from the labels), the distinct answers given and the CONSTANT flag (core/guards answerGuard). */
  guard: AnswerGuard;
  /** Accuracy per task novelty (`in-template`, `new-wording`) when the zone's split has both (core/guards accuracyByNovelty). */
  novelty?: Record<string, NoveltyAccuracy>;
  /** Against the baseline (absent for the baseline itself, or when nothing pairs). */
  delta?: StudyDelta;
  /** Mean prompt + completion tokens per run, and wall seconds per run. */
  tokensPerTask: number;
  secondsPerTask: number;
  experimentIds: string[];
}

/** The whole table, with the labels a face prints. */
export interface StudyTable {
  studyId: string;
  name: string;
  baseline: string;
  level: number;
  resamples: number;
  bootstrapSeed: number;
  conditions: Array<{ id: string; label: string; kind: ConditionKind }>;
  zones: Array<{ id: string; label: string; kind: ZoneKind; dataset: string; split: string }>;
  models: string[];
  entries: StudyTableEntry[];
  /** Wall seconds of each training condition's train loops (summed over seeds), by condition id. */
  trainingSeconds: Record<string, number>;
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : NaN);
const pairKey = (r: StudyRun) => `${r.seed}/${r.taskId}`;

/** The default label of a condition or zone: its own, else its id. */
export const labelOf = (x: { id: string; label?: string }) => x.label ?? x.id;

/**
 * The table of a study from its cells' stored runs (`runsOf(cell)`; cells not run yet give []).
 * Every entry carries the constant-policy guard of its runs (core/guards answerGuard, with the
 * zone dataset's `classOf(dataset)` when it has classes); a delta says when either side is constant.
 * Accuracy intervals: bootstrapMeanCI over the 0/1 correctness of the entry's runs; deltas:
 * bootstrapMeanCI and signTest over the paired differences (condition − baseline), both with the
 * plan's bootstrap seed and resamples.
 */
export function buildStudyTable(plan: StudyPlan, studyId: string, cells: readonly StudyCell[], runsOf: (cell: StudyCell) => readonly StudyRun[], trainingSeconds: Record<string, number> = {}, classOf?: (dataset: string) => ((label: string) => string) | undefined, noveltyOf?: (zone: StudyPlan['zones'][number]) => ((taskId: string) => string | undefined) | undefined): StudyTable {
  const opts = { resamples: plan.bootstrap.resamples, seed: plan.bootstrap.seed };
  const groups = new Map<string, { cells: StudyCell[]; runs: StudyRun[] }>();
  const gk = (condition: string, zone: string, model: string) => `${condition}\u0000${zone}\u0000${model}`;
  for (const cell of cells) {
    const k = gk(cell.condition.id, cell.zone.id, cell.model.id);
    const g = groups.get(k) ?? { cells: [], runs: [] };
    g.cells.push(cell);
    g.runs.push(...runsOf(cell));
    groups.set(k, g);
  }
  const entries: StudyTableEntry[] = [];
  for (const model of plan.models) {
    for (const condition of plan.conditions) {
      for (const zone of plan.zones) {
        const g = groups.get(gk(condition.id, zone.id, model.id));
        if (!g) continue;
        const { runs } = g;
        const entry: StudyTableEntry = {
          condition: condition.id,
          zone: zone.id,
          model: model.id,
          runs: runs.length,
          planned: g.cells.reduce((s, c) => s + c.zone.limit, 0),
          accuracy: bootstrapMeanCI(runs.map((r) => (r.correct ? 1 : 0)), opts),
          score: mean(runs.map((r) => r.score)),
          guard: answerGuard(runs, classOf?.(zone.dataset)),
          ...(() => {
            const of = noveltyOf?.(zone);
            const n = of && accuracyByNovelty(runs, of, classOf?.(zone.dataset));
            return n ? { novelty: n } : {};
          })(),
          tokensPerTask: mean(runs.map((r) => r.promptTokens + r.completionTokens)),
          secondsPerTask: mean(runs.map((r) => (r.endedAt - r.startedAt) / 1000)),
          experimentIds: g.cells.map((c) => c.experimentId),
        };
        const base = condition.id === plan.baseline ? undefined : groups.get(gk(plan.baseline, zone.id, model.id));
        if (base) {
          const byKey = new Map(base.runs.map((r) => [pairKey(r), r]));
          const diffs = runs.filter((r) => byKey.has(pairKey(r))).map((r) => Number(r.correct) - Number(byKey.get(pairKey(r))!.correct));
          if (diffs.length) {
            const note = deltaGuardNote(entry.guard, answerGuard(base.runs, classOf?.(zone.dataset)));
            entry.delta = { pairs: diffs.length, delta: mean(diffs), ci: bootstrapMeanCI(diffs, opts), signTest: signTest(diffs), ...(note && { guard: note }) };
          }
        }
        entries.push(entry);
      }
    }
  }
  return {
    studyId,
    name: plan.name,
    baseline: plan.baseline,
    level: 0.95,
    resamples: plan.bootstrap.resamples,
    bootstrapSeed: plan.bootstrap.seed,
    conditions: plan.conditions.map((c) => ({ id: c.id, label: labelOf(c), kind: c.kind })),
    zones: plan.zones.filter((z) => entries.some((e) => e.zone === z.id)).map((z) => ({ id: z.id, label: labelOf(z), kind: z.kind, dataset: z.dataset, split: z.split })),
    models: plan.models.map((m) => m.id),
    entries,
    trainingSeconds,
  };
}

const pct = (x: number) => (Number.isFinite(x) ? (100 * x).toFixed(1) : '-');
const signed = (x: number) => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}` : '-');

/** `acc [low, high]` in percent, e.g. `33.3 [20.8, 45.8]`. */
export function accuracyText(e: Pick<StudyTableEntry, 'accuracy' | 'runs'>): string {
  return e.runs ? `${pct(e.accuracy.mean)} [${pct(e.accuracy.low)}, ${pct(e.accuracy.high)}]` : '-';
}

/** The delta in points with its interval and sign-test p, e.g. `+12.5 [4.2, 20.8] p=0.008`, then ` (both constant)` when the guard says so. */
export function deltaText(d: StudyDelta | undefined): string {
  return d ? `${signed(d.delta)} [${signed(d.ci.low)}, ${signed(d.ci.high)}] p=${d.signTest.p < 0.001 ? d.signTest.p.toExponential(1) : d.signTest.p.toFixed(3)}${d.guard ? ` (${d.guard})` : ''}` : '-';
}

/** The guard beside an entry's accuracy: `const 33.3 · 4 ans`, then the CONSTANT flag when set (`-` with no run). */
export function guardText(e: Pick<StudyTableEntry, 'guard' | 'runs'>): string {
  if (!e.runs) return '-';
  const g = e.guard;
  const flag = constantFlag(g);
  return `const ${g.bestConstant ? pct(g.bestConstant.accuracy) : '-'} · ${g.distinctAnswers} ans${flag ? ` · ${flag}` : ''}`;
}

/**
 * The novelty kinds (`Task.meta.novelty`, core/tasks: what a held-out task holds that training
 * does not) the CSV gives columns to, in order: `in-template` (a training template with unseen
 * names and numbers) and `new-wording` (a wording training never saw).
 */
export const STUDY_NOVELTY_KINDS = ['in-template', 'new-wording'] as const;

/**
 * An entry's held-out accuracy split by what is new, e.g. `in-template 75.0 (36) · new-wording
 * 50.0 (12) CONSTANT` (percent, runs in parentheses, CONSTANT when that part's answers
 * collapsed); undefined when the zone's split does not have two kinds of task.
 */
export function noveltyText(e: Pick<StudyTableEntry, 'novelty'>): string | undefined {
  if (!e.novelty) return undefined;
  return Object.entries(e.novelty).map(([k, n]) => `${k} ${pct(n.accuracy)} (${n.runs})${n.guard.constant ? ' CONSTANT' : ''}`).join(' · ');
}

/** One CSV field, quoted when needed (RFC 4180). */
const csvField = (v: unknown) => {
  const s = v === undefined || v === null || (typeof v === 'number' && !Number.isFinite(v)) ? '' : String(v);
  return /[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
};
const r4 = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? undefined : Math.round(x * 1e4) / 1e4);

/**
 * The CSV columns of `studyTableCsv`, in order: only what the study's inputs determine, so two
 * runs of one plan give byte-identical files (docs/laptop-rl.md "Reproducibility"); wall-clock
 * figures go to `studyTimingCsv`.
 */
export const STUDY_CSV_COLUMNS = ['study', 'model', 'condition', 'condition_kind', 'zone', 'zone_kind', 'dataset', 'split', 'runs', 'planned', 'accuracy', 'ci_low', 'ci_high', 'score', 'best_constant', 'best_constant_answer', 'distinct_answers', 'classes', 'constant', 'constant_answer', 'constant_share', 'delta', 'delta_guard', 'delta_ci_low', 'delta_ci_high', 'sign_positive', 'sign_negative', 'sign_ties', 'p_sign', 'pairs', 'tokens_per_task', 'experiments', 'in_template_runs', 'in_template_accuracy', 'in_template_constant', 'new_wording_runs', 'new_wording_accuracy', 'new_wording_constant'] as const;

/** The CSV columns of `studyTimingCsv`, in order. */
export const STUDY_TIMING_COLUMNS = ['study', 'model', 'condition', 'zone', 'seconds_per_task'] as const;

/** The wall-clock side of the table as CSV (`timing.csv`): seconds per task per model × condition × zone; it varies with the machine's load. */
export function studyTimingCsv(t: StudyTable): string {
  const rows = t.entries.map((e) => [t.studyId, e.model, e.condition, e.zone, r4(e.secondsPerTask)]);
  return [STUDY_TIMING_COLUMNS, ...rows].map((r) => r.map(csvField).join(',')).join('\n') + '\n';
}

/**
 * The table as CSV (RFC 4180; one row per model × condition × zone; fractions, not percent). The
 * last columns split a zone's accuracy by what is new in its tasks (`in_template_*`,
 * `new_wording_*`: runs, accuracy, CONSTANT) when the zone's split has both kinds, else empty.
 */
export function studyTableCsv(t: StudyTable): string {
  const cond = new Map(t.conditions.map((c) => [c.id, c]));
  const zone = new Map(t.zones.map((z) => [z.id, z]));
  const rows = t.entries.map((e) => {
    const z = zone.get(e.zone)!;
    const d = e.delta;
    return [t.studyId, e.model, e.condition, cond.get(e.condition)?.kind, e.zone, z?.kind, z?.dataset, z?.split, e.runs, e.planned, r4(e.accuracy.mean), r4(e.accuracy.low), r4(e.accuracy.high), r4(e.score), r4(e.guard.bestConstant?.accuracy), e.guard.bestConstant?.answer, e.guard.distinctAnswers, e.guard.classes, e.guard.constant ? 'CONSTANT' : '', e.guard.constant?.answer, r4(e.guard.constant?.share), r4(d?.delta), d?.guard, r4(d?.ci.low), r4(d?.ci.high), d?.signTest.positive, d?.signTest.negative, d?.signTest.ties, r4(d?.signTest.p), d?.pairs, r4(e.tokensPerTask), e.experimentIds.join(' '), ...STUDY_NOVELTY_KINDS.flatMap((k) => {
      const n = e.novelty?.[k];
      return [n?.runs, r4(n?.accuracy), n?.guard.constant ? 'CONSTANT' : ''];
    })];
  });
  return [STUDY_CSV_COLUMNS, ...rows].map((r) => r.map(csvField).join(',')).join('\n') + '\n';
}
