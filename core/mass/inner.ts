/**
 * MASS's inner loop (weights frozen, per task): run a candidate design to a workspace, let the
 * self-judge compare workspaces pairwise, keep a champion, and ask the optimizer for the next
 * design from the whole feedback history.
 *
 * Iteration 0 runs the first design (v0); each later iteration asks the optimizer once. A
 * proposal the validator rejects (or one identical to the current design) makes no new version:
 * the iteration is recorded as rejected and the loop goes on from the same state (the next call
 * has another seed). Champion rules:
 *  - `baseline` (MASS public code): every version is judged against a fixed bare-task baseline
 *    workspace; the first version to beat it becomes champion; a later baseline-winner must also
 *    beat the champion in an arbitration call to replace it;
 *  - `direct` (the paper's Algorithm 1): v0 is the champion; each later version is judged against
 *    the champion directly and replaces it when it wins. No baseline runs.
 * Each comparison shows the candidate as A or B by a seeded coin (recorded as `candidateSide`).
 * With `auditSwaps` n > 0, after a task's iterations a seeded sample of n of its verdicts is judged
 * again with A and B swapped (same seed, record `verdict-swap`), for the judge audit's position
 * consistency (core/guards judgeAudit, judgeAudit.ts `evolutionAudit`), as `flowlab rank` does.
 * With a selection set (`EvolveSpec.selection`), each version runs on k training tasks, each
 * comparison is k paired verdicts with counterbalanced sides, and `selectionVerdict` accepts.
 *
 * Everything is stored: each run, judge call and optimizer call is an ordinary `mass` experiment
 * (stored.ts) with a deterministic id `<evolution>.t<task>.<step>`, and every design, proposal,
 * workspace summary, verdict, champion change and iteration is a write-once record
 * (`Store.mass`). A loop killed at any point and started again with the same id reads every
 * stored step back, re-derives the same records (writing each once) and goes on. Replayed with
 * the recorded calls (replay.ts), it re-derives them without the model.
 */
import type { Task } from '../tasks/types.ts';
import { deriveSeed, mulberry32 } from '../random.ts';
import { canonicalJson } from '../store/index.ts';
import { designJson, diffMassDesigns, diffText, renderMassDesign, type DesignCatalogue, type DesignLimits } from './design.ts';
import { MassError } from './errors.ts';
import { stepsInFlight } from './inFlight.ts';
import { evidenceOf, judgePair } from './judge.ts';
import { optimize, type HistoryEntry } from './optimizer.ts';
import { EDIT_TOKENS, optimizeEdit } from './editOptimizer.ts';
import { auditSample } from './outer.ts';
import { runMass } from './run.ts';
import type { StepDeps } from './stored.ts';
import { MASS_RUBRIC, type ChampionRule, type EditMenu, type MassDesign, type MassFamily, type Verdict, type Workspace } from './types.ts';
import type { MassBudget } from './compile.ts';

/** Defaults of the inner loop (MASS public config: 11 iterations). */
export const EVOLVE_DEFAULTS = { iterations: 11, rule: 'baseline' as ChampionRule, seed: 1, judgeTokens: 64, optimizerTokens: 800, optimizerTemperature: 0.9, auditSwaps: 6 };

export interface EvolveSpec {
  /** The evolution's id; every step and record is named after it. */
  evolutionId: string;
  family: MassFamily;
  /** The tasks, each evolved on its own. */
  tasks: Task[];
  /** Version 0 of the design. */
  firstDesign: MassDesign;
  iterations?: number;
  rule?: ChampionRule;
  seed?: number;
  rubric?: readonly string[];
  catalogue: DesignCatalogue;
  limits?: DesignLimits;
  budget?: MassBudget;
  judgeTokens?: number;
  optimizerTokens?: number;
  /** The optimizer's sampling temperature (default 0.9: each iteration's call, with its own seed, proposes anew). */
  optimizerTemperature?: number;
  /**
   * Verdicts per task judged again with A and B swapped after the task's iterations, for the
   * judge audit's position consistency (default 0: none; `flowlab evolve` asks for 6). A setting:
   * stored only when above 0, so evolutions stored before it resume and replay unchanged.
   */
  auditSwaps?: number;
  /**
   * How the optimizer proposes: `free` (a whole design under the design-shaped grammar,
   * optimizer.ts; for capable models) or `edit` (one edit of the current design from the family's
   * menu, under the grammar of the valid new edits: editOptimizer.ts). Default: `edit` for a
   * family with an `editMenu`, else `free`. Stored only when `edit`, with the menu (so evolutions
   * stored before it resume and replay unchanged).
   */
  optimizerMode?: OptimizerMode;
  /**
   * Who judges the pairs: `self` (default: the same model, MASS's self-judge, judge.ts) or
   * `verifier` (the family's external grader compares the two workspaces' grades: no model call;
   * MASS's verifier arm, a control for what the loop finds with a judge that judges) or `pair`
   * (the self-judge — the same model — reading the family's own pairwise prompt, `pairJudge`,
   * e.g. learn-design's in learn-design-judge's format, instead of MASS's rubric prompt: what a
   * judge trained on the family's judging task reads; two answers that read the same are a tie
   * without asking, judge.ts `tieWhenSame`). Stored only when not `self`.
   */
  judge?: 'self' | 'verifier' | 'pair';
  /**
   * Who proposes the edits (edit mode only): `model` (default) or `random` — a SIMULATED
   * proposer drawing uniformly among the valid new edits with the iteration's seed, no model call:
   * a baseline the model's proposals are measured against. Stored only when `random`.
   */
  proposer?: 'model' | 'random';
  /**
   * Further training tasks each version is also run on before it is compared (the selection set
   * is the evolved task followed by these: k = 1 + length). With them, every version's workspace
   * on selection task j uses the same seed (paired by task and seed: common random numbers), the
   * judge (or verifier) compares candidate and champion on each of the k tasks, and the candidate
   * is accepted when it wins more pairs than it loses (`selectionVerdict`); the next proposal
   * edits the version just run unless it lost more pairs than it won, else the champion (a
   * version the evidence is against is not built on; a tied one is). Stored only when
   * non-empty, so evolutions stored before it resume and replay unchanged.
   */
  selection?: Task[];
}

/**
 * The side the candidate is shown on in pair j of a comparison over a selection set
 * (counterbalanced): pair 0's side is a seeded coin (mulberry32's first draw from
 * `deriveSeed(seed, 'orient', task, version, kind)`), and the sides alternate from there, so with k
 * even the candidate is A in k/2 pairs and B in the others: a judge that always answers one
 * position wins exactly as many pairs as it loses, and `selectionVerdict` never accepts by it.
 * (The single-verdict loop's coin, `deriveSeed(...) % 2`, is kept for stored evolutions; FNV-1a's
 * low bit is the parity of the input's code units, so that coin alternates with the version
 * number: B, A, B, A... for seed 1.) Pure.
 */
export function balancedSide(seed: number, task: number, version: number, kind: string, j: number): 'A' | 'B' {
  const first = mulberry32(deriveSeed(seed, 'orient', task, version, kind))() < 0.5 ? 0 : 1;
  return (first + j) % 2 === 0 ? 'A' : 'B';
}

/**
 * The acceptance rule over k paired verdicts (EvolveSpec.selection): each pair the candidate wins
 * counts +1, each it loses −1, a tie or an invalid verdict 0; the candidate is accepted when the
 * mean gain is above 0 (wins > losses). With k = 1 it is the single-verdict rule. Pure.
 */
export function selectionVerdict(pairs: ReadonlyArray<'candidate' | 'other' | 'tie'>): { wins: number; losses: number; ties: number; meanGain: number; accepted: boolean } {
  const wins = pairs.filter((p) => p === 'candidate').length;
  const losses = pairs.filter((p) => p === 'other').length;
  const ties = pairs.length - wins - losses;
  return { wins, losses, ties, meanGain: pairs.length ? (wins - losses) / pairs.length : 0, accepted: wins > losses };
}

/** How the optimizer proposes (EvolveSpec.optimizerMode). */
export type OptimizerMode = 'free' | 'edit';

/** Progress of the loop, as it happens (also when a stored step is read back: `reused`). */
export type EvolveEvent =
  | { type: 'workspace'; taskIndex: number; iteration: number; version: number | null; score: number; reused: boolean; selection?: number }
  | { type: 'rejected'; taskIndex: number; iteration: number; issues: string[] }
  | { type: 'verdict'; taskIndex: number; iteration: number; version: number; against: string; winner: string; candidateWon: boolean; valid: boolean }
  | { type: 'selection'; taskIndex: number; iteration: number; version: number; against: string; wins: number; losses: number; ties: number; candidateWon: boolean }
  | { type: 'champion'; taskIndex: number; iteration: number; version: number; previous: number | null }
  | { type: 'task-done'; taskIndex: number; champion: number | null; versions: number };

export interface EvolveDeps extends StepDeps {
  onEvent?: (e: EvolveEvent) => void;
  /**
   * Tasks evolved at once (core/mass/inFlight.ts; default 1). Each task's iterations stay in
   * order; a task's records are written when the tasks before it have written theirs, so the
   * records (and their order) are the same at any value. Not a setting of the evolution.
   */
  parallel?: number;
}

/** What each task's loop ended with. */
export interface EvolveTaskResult {
  taskIndex: number;
  taskId: string;
  champion: number | null;
  versions: number;
  rejected: number;
  /** The champion's external grade (the task's grader), null with no champion. */
  championScore: number | null;
  baselineScore: number | null;
  /** With a selection set: the champion's and version 0's mean grade over its k tasks. */
  selectionScores?: { tasks: number; champion: number | null; first: number };
}

export interface EvolveReport {
  evolutionId: string;
  rule: ChampionRule;
  iterations: number;
  tasks: EvolveTaskResult[];
  /** Records written by this call (0 when everything was already stored). */
  written: number;
}

/** The settings record of an evolution: what a resume must match and a replay re-runs. */
export interface EvolutionSettings {
  dataset: string;
  tasks: Array<Pick<Task, 'id' | 'index' | 'input' | 'expected'>>;
  firstDesign: string;
  iterations: number;
  rule: ChampionRule;
  seed: number;
  rubric: string[];
  catalogue: DesignCatalogue;
  limits?: DesignLimits;
  budget?: MassBudget;
  judgeTokens: number;
  optimizerTokens: number;
  optimizerTemperature: number;
  /** Present when above 0 (EvolveSpec.auditSwaps). */
  auditSwaps?: number;
  /** Present when `edit` (EvolveSpec.optimizerMode), with the family's menu at the time. */
  optimizerMode?: 'edit';
  editMenu?: EditMenu;
  /** Present when `verifier` or `pair` (EvolveSpec.judge). */
  judge?: 'verifier' | 'pair';
  /** Present when `random` (EvolveSpec.proposer). */
  proposer?: 'random';
  /** Present when non-empty (EvolveSpec.selection): the further training tasks of the selection set. */
  selection?: Array<Pick<Task, 'id' | 'index' | 'input' | 'expected'>>;
}

export function settingsOf(spec: EvolveSpec): EvolutionSettings {
  const mode: OptimizerMode = spec.optimizerMode ?? (spec.family.editMenu ? 'edit' : 'free');
  if (mode === 'edit' && !spec.family.editMenu) throw new MassError('BAD_OPTIONS', `the edit optimizer needs a family with an edit menu; ${spec.family.dataset} has none (use the free optimizer)`, { field: 'optimizerMode' });
  const s: EvolutionSettings = {
    dataset: spec.family.dataset,
    tasks: spec.tasks.map((t) => ({ id: t.id, index: t.index, input: t.input, expected: t.expected })),
    firstDesign: designJson(spec.firstDesign),
    iterations: spec.iterations ?? EVOLVE_DEFAULTS.iterations,
    rule: spec.rule ?? EVOLVE_DEFAULTS.rule,
    seed: spec.seed ?? EVOLVE_DEFAULTS.seed,
    rubric: [...(spec.rubric ?? MASS_RUBRIC)],
    catalogue: { checks: [...spec.catalogue.checks], ...(spec.catalogue.models ? { models: [...spec.catalogue.models] } : {}) },
    judgeTokens: spec.judgeTokens ?? EVOLVE_DEFAULTS.judgeTokens,
    optimizerTokens: spec.optimizerTokens ?? (mode === 'edit' ? EDIT_TOKENS : EVOLVE_DEFAULTS.optimizerTokens),
    optimizerTemperature: spec.optimizerTemperature ?? EVOLVE_DEFAULTS.optimizerTemperature,
  };
  if (spec.limits) s.limits = spec.limits;
  if (spec.budget) s.budget = spec.budget;
  if (spec.auditSwaps) s.auditSwaps = spec.auditSwaps;
  if (spec.judge === 'verifier') s.judge = 'verifier';
  if (spec.judge === 'pair') {
    if (!spec.family.pairJudge) throw new MassError('BAD_OPTIONS', `the pair judge reads the family's own pairwise prompt; ${spec.family.dataset} has none (learn-design and learn-unit have one)`, { field: 'judge' });
    s.judge = 'pair';
  }
  if (spec.selection?.length) s.selection = spec.selection.map((t) => ({ id: t.id, index: t.index, input: t.input, expected: t.expected }));
  if (spec.proposer === 'random') {
    if (mode !== 'edit') throw new MassError('BAD_OPTIONS', 'the random proposer draws among the edit language\'s edits: it needs the edit optimizer', { field: 'proposer' });
    s.proposer = 'random';
  }
  if (mode === 'edit') {
    s.optimizerMode = 'edit';
    s.editMenu = { checks: [...spec.family.editMenu!.checks], instructions: Object.fromEntries(Object.entries(spec.family.editMenu!.instructions).map(([k, v]) => [k, [...v]])), ...(spec.family.editMenu!.guard && { guard: true }) };
  }
  return s;
}

/**
 * Runs (or resumes) the inner loop of `spec` on every task; see the module comment. Errors:
 * MassError `BAD_OPTIONS` (iterations outside 1..100, no task), `MISMATCH` (the evolution id was
 * started with other settings), `HALTED` (the model cannot be loaded; resume later), and a
 * cancelled signal's AbortError.
 */
export async function evolve(spec: EvolveSpec, deps: EvolveDeps): Promise<EvolveReport> {
  const settings = settingsOf(spec);
  if (!Number.isInteger(settings.iterations) || settings.iterations < 1 || settings.iterations > 100) throw new MassError('BAD_OPTIONS', `iterations must be an integer 1..100, got ${settings.iterations}`, { field: 'iterations' });
  if (settings.auditSwaps !== undefined && (!Number.isInteger(settings.auditSwaps) || settings.auditSwaps < 0)) throw new MassError('BAD_OPTIONS', `auditSwaps must be a whole number >= 0, got ${settings.auditSwaps}`, { field: 'auditSwaps' });
  if (!spec.tasks.length) throw new MassError('BAD_OPTIONS', 'no task to evolve', { field: 'tasks' });
  const evo = spec.evolutionId;
  const repo = deps.store.mass;
  const old = repo.get(evo, 'evolution', 'settings');
  if (old && canonicalJson(old.value) !== canonicalJson(settings)) throw new MassError('MISMATCH', `evolution ${evo} was started with other settings; resume it with the same options or pick another id`, { field: 'evolutionId' });
  let written = 0;
  const put = (kind: string, key: string, value: unknown, taskIndex?: number) => {
    if (repo.put({ evolutionId: evo, kind, key, value, ...(taskIndex === undefined ? {} : { taskIndex }) }) === 'inserted') written++;
  };
  put('evolution', 'settings', settings);
  const results: EvolveTaskResult[] = [];
  if ((deps.parallel ?? 1) <= 1 || spec.tasks.length === 1) {
    for (let t = 0; t < spec.tasks.length; t++) results.push(await evolveTask(spec, settings, deps, t, put));
  } else {
    // Tasks in flight: each task's records are held until every task before it has written its
    // own, then written in the order it made them (the same records, in the same order, as one
    // task after another). A task killed before its turn has its stored steps read back on resume.
    const done = await stepsInFlight(spec.tasks.map((_, t) => t), { parallel: deps.parallel, label: `${evo} tasks` }, async (t) => {
      const held: Array<Parameters<Put>> = [];
      const result = await evolveTask(spec, settings, deps, t, (...rec) => void held.push(rec));
      return { result, held };
    }, ({ held }) => {
      for (const rec of held) put(...rec);
    });
    results.push(...done.map((d) => d.result));
  }
  return { evolutionId: evo, rule: settings.rule, iterations: settings.iterations, tasks: results, written };
}

type Put = (kind: string, key: string, value: unknown, taskIndex?: number) => void;

async function evolveTask(spec: EvolveSpec, s: EvolutionSettings, deps: EvolveDeps, t: number, put: Put): Promise<EvolveTaskResult> {
  const task = spec.tasks[t]!;
  const evo = spec.evolutionId;
  const id = (step: string) => `${evo}.t${t}.${step}`;
  const about = (extra: Record<string, unknown>) => ({ evolutionId: evo, taskIndex: t, ...extra });
  const emit = (e: EvolveEvent) => deps.onEvent?.(e);
  const runDeps = { ...deps, family: spec.family };
  /** The family's pairwise prompt when the pair judge judges (EvolveSpec.judge `pair`), else MASS's rubric judge. */
  const pairJudge = s.judge === 'pair' ? spec.family.pairJudge : undefined;
  /** The selection set: the task, then the further training tasks (EvolveSpec.selection). */
  const sel: Task[] = [task, ...(spec.selection ?? [])];
  const selecting = sel.length > 1;
  const sfx = (j: number, sep: string) => (j ? `${sep}s${j}` : '');
  /** Runs a version (null: the bare-task baseline) on selection task j; with a selection set the seed is the task's, not the version's (paired). */
  const workspace = async (design: MassDesign | null, version: number | null, iteration: number, j = 0): Promise<Workspace> => {
    const name = version === null ? 'baseline' : `v${version}`;
    const experimentId = id(`${name}${sfx(j, '.')}`);
    const reused = !!deps.store.findExperiment(experimentId) && deps.store.listRuns(experimentId).length > 0;
    const seed = selecting ? deriveSeed(s.seed, 'workspace', t, 'selection', j) : deriveSeed(s.seed, 'workspace', t, version ?? 'baseline');
    const ws = await runMass(design, sel[j]!, runDeps, { experimentId, version, seed, budget: s.budget, about: about({ iteration, ...(selecting && { selection: j }) }), author: version ? 'optimizer' : 'human' });
    put('workspace', `t${t}/${name}${sfx(j, '/')}`, summaryOf(ws), t);
    emit({ type: 'workspace', taskIndex: t, iteration, version, score: ws.grade.score, reused, ...(selecting && { selection: j }) });
    return ws;
  };
  /** The version on every task of the selection set, in order. */
  const workspaces = async (design: MassDesign | null, version: number | null, iteration: number): Promise<Workspace[]> => {
    const out: Workspace[] = [];
    for (let j = 0; j < sel.length; j++) out.push(await workspace(design, version, iteration, j));
    return out;
  };
  /** Every verdict of the task in order, with its two workspaces as shown (for the audit's swapped sample). */
  const judged: Array<{ key: string; a: Workspace; b: Workspace; task: Task; winner: Verdict['winner']; seed: number; experimentId: string; about: Record<string, unknown> }> = [];
  /** Judges candidate `cand` (version k) against `other`, orientation by a seeded coin. */
  const compareOne = async (cand: Workspace, k: number, other: Workspace, against: string, kind: 'baseline' | 'arbitration' | 'direct', iteration: number, j: number) => {
    const extra = j ? [j] : [];
    const side = selecting ? balancedSide(s.seed, t, k, kind, j) : deriveSeed(s.seed, 'orient', t, k, kind) % 2 === 0 ? 'A' : 'B';
    const [a, b] = side === 'A' ? [cand, other] : [other, cand];
    const judgeSeed = deriveSeed(s.seed, 'judge', t, k, kind, ...extra);
    const at = selecting ? { selection: j } : {};
    const v: Verdict = s.judge === 'verifier' ? verifierVerdict(a, b) : await judgePair(a, b, s.rubric, deps.provider, { ...deps, experimentId: id(`v${k}.vs-${against}${sfx(j, '.')}`), task: sel[j]!, seed: judgeSeed, maxTokens: s.judgeTokens, about: about({ iteration, kind, candidate: k, against, ...at }), ...(pairJudge && { pairJudge, tieWhenSame: true }) });
    const key = `t${t}/v${k}/${kind}${sfx(j, '/')}`;
    // A pair the judge was not asked about (tieWhenSame) is no sample of its position consistency.
    if (v.asked !== false) judged.push({ key, a, b, task: sel[j]!, winner: v.winner, seed: judgeSeed, experimentId: id(`v${k}.vs-${against}${sfx(j, '.')}.swap`), about: about({ iteration, kind, candidate: k, against, ...at, audit: 'swap' }) });
    const candidateWon = v.valid && v.winner === side;
    put('verdict', key, { iteration, kind, candidate: k, against, ...at, candidateSide: side, a: a.runId, b: b.runId, winner: v.winner, rationale: v.rationale, valid: v.valid, candidateWon, experimentId: v.experimentId, ...(v.asked === false && { asked: false }) }, t);
    emit({ type: 'verdict', taskIndex: t, iteration, version: k, against, winner: v.winner, candidateWon, valid: v.valid });
    const outcome = !v.valid || v.winner === 'tie' ? 'tie' : candidateWon ? 'candidate' : against === 'baseline' ? 'baseline' : 'champion';
    return { rationale: v.rationale, candidateWon, outcome };
  };
  /**
   * Compares the candidate with `other` on every task of the selection set (one verdict per task,
   * paired by task and seed) and applies `selectionVerdict`; with no selection set, the one verdict.
   */
  const compare = async (cand: Workspace[], k: number, other: Workspace[], against: string, kind: 'baseline' | 'arbitration' | 'direct', iteration: number) => {
    if (!selecting) return compareOne(cand[0]!, k, other[0]!, against, kind, iteration, 0);
    const pairs: Array<'candidate' | 'other' | 'tie'> = [];
    for (let j = 0; j < sel.length; j++) {
      const one = await compareOne(cand[j]!, k, other[j]!, against, kind, iteration, j);
      pairs.push(one.outcome === 'tie' ? 'tie' : one.candidateWon ? 'candidate' : 'other');
    }
    const r = selectionVerdict(pairs);
    put('selection', `t${t}/v${k}/${kind}`, { iteration, kind, candidate: k, against, tasks: sel.length, wins: r.wins, losses: r.losses, ties: r.ties, meanGain: r.meanGain, candidateWon: r.accepted, rule: 'wins > losses' }, t);
    emit({ type: 'selection', taskIndex: t, iteration, version: k, against, wins: r.wins, losses: r.losses, ties: r.ties, candidateWon: r.accepted });
    const outcome = r.accepted ? 'candidate' : r.wins === r.losses ? 'tie' : against === 'baseline' ? 'baseline' : 'champion';
    return { rationale: `on ${sel.length} tasks: won ${r.wins}, lost ${r.losses}, tied ${r.ties}`, candidateWon: r.accepted, outcome };
  };

  const designs = new Map<number, MassDesign>([[0, spec.firstDesign]]);
  const spaces = new Map<number, Workspace[]>();
  const history: HistoryEntry[] = [];
  let champion: number | null = null;
  let current = 0;
  let rejected = 0;
  const setChampion = (k: number, iteration: number, reason: string) => {
    put('champion', `t${t}/i${iteration}`, { iteration, version: k, previous: champion, reason }, t);
    emit({ type: 'champion', taskIndex: t, iteration, version: k, previous: champion });
    champion = k;
  };
  put('design', `t${t}/v0`, { version: 0, iteration: 0, parent: null, source: 'first', design: designJson(spec.firstDesign), text: renderMassDesign(spec.firstDesign), diff: diffMassDesigns(null, spec.firstDesign) }, t);
  const baseline = s.rule === 'baseline' ? await workspaces(null, null, 0) : undefined;

  for (let iteration = 0; iteration < s.iterations; iteration++) {
    let k = 0;
    if (iteration > 0) {
      const cur = designs.get(current)!;
      const input = { task, taskPrompt: spaces.get(current)![0]!.taskPrompt, current: { version: current, design: cur }, best: champion === null ? undefined : { version: champion, design: designs.get(champion)! }, first: spec.firstDesign, evidence: evidenceOf(spaces.get(current)![0]!), history };
      const call = { experimentId: id(`i${iteration}.optimizer`), seed: deriveSeed(s.seed, 'optimizer', t, iteration), maxTokens: s.optimizerTokens, temperature: s.optimizerTemperature, catalogue: s.catalogue, limits: s.limits, about: about({ iteration }) };
      // The edit language offers only valid designs not tried yet (every version of this task).
      const opt = s.optimizerMode === 'edit' ? await optimizeEdit(input, spec.family, deps, { ...call, menu: s.editMenu!, tried: [...designs.values()], ...(s.proposer && { random: true }) }) : await optimize(input, spec.family, deps, call);
      const same = opt.design && [...designs.values()].find((d) => designJson(d) === designJson(opt.design!));
      const issues = opt.design ? (same ? [{ code: 'UNCHANGED', path: '', message: 'the proposal repeats a design already tried' }] : []) : opt.issues;
      k = issues.length ? -1 : designs.size;
      put('proposal', `t${t}/i${iteration}`, { iteration, from: current, accepted: !issues.length, version: issues.length ? null : k, issues, proposal: opt.proposal ?? null, experimentId: opt.experimentId }, t);
      if (issues.length) {
        rejected++;
        put('iteration', `t${t}/i${iteration}`, { iteration, version: null, rejected: true, champion }, t);
        emit({ type: 'rejected', taskIndex: t, iteration, issues: issues.map((i) => `${i.code} ${i.path}`.trim()) });
        continue;
      }
      const diff = diffMassDesigns(cur, opt.design!);
      designs.set(k, opt.design!);
      put('design', `t${t}/v${k}`, { version: k, iteration, parent: current, source: 'optimizer', design: designJson(opt.design!), text: renderMassDesign(opt.design!), diff, proposal: opt.proposal }, t);
    }
    const ws = await workspaces(designs.get(k)!, k, iteration);
    spaces.set(k, ws);
    const diff = k === 0 ? '' : diffText(diffMassDesigns(designs.get(current)!, designs.get(k)!));
    let lost = false;
    if (s.rule === 'baseline') {
      const base = await compare(ws, k, baseline!, 'baseline', 'baseline', iteration);
      history.push({ key: `v${k}_vs_baseline`, outcome: base.outcome, rationale: base.rationale, diff });
      lost = base.outcome === 'baseline';
      if (base.candidateWon) {
        if (champion === null) setChampion(k, iteration, 'first version to beat the baseline');
        else {
          const arb = await compare(ws, k, spaces.get(champion)!, `v${champion}`, 'arbitration', iteration);
          history.push({ key: `v${k}_vs_v${champion}`, outcome: arb.outcome, rationale: arb.rationale, diff: '' });
          lost = arb.outcome === 'champion';
          if (arb.candidateWon) setChampion(k, iteration, `beat the baseline and champion v${champion} in arbitration`);
        }
      }
    } else if (k === 0) setChampion(0, iteration, 'the first design (direct rule)');
    else {
      const direct = await compare(ws, k, spaces.get(champion!)!, `v${champion}`, 'direct', iteration);
      history.push({ key: `v${k}_vs_v${champion} (direct)`, outcome: direct.outcome, rationale: direct.rationale, diff });
      lost = direct.outcome === 'champion';
      if (direct.candidateWon) setChampion(k, iteration, `beat champion v${champion} directly`);
    }
    put('iteration', `t${t}/i${iteration}`, { iteration, version: k, rejected: false, champion }, t);
    // Without a selection set the next edit is of the version just run, as MASS does; with one, of
    // that version unless it lost its comparison (more pairs lost than won), else of the champion.
    current = selecting && lost ? (champion ?? 0) : k;
  }
  // The judge audit's swapped sample: the same pair and seed with B shown as A (position consistency, core/guards judgeAudit).
  for (const index of auditSample(judged.length, s.auditSwaps ?? 0, deriveSeed(s.seed, 'audit', t))) {
    const j = judged[index]!;
    const v = s.judge === 'verifier' ? verifierVerdict(j.b, j.a) : await judgePair(j.b, j.a, s.rubric, deps.provider, { ...deps, experimentId: j.experimentId, task: j.task, seed: j.seed, maxTokens: s.judgeTokens, about: j.about, ...(pairJudge && { pairJudge, tieWhenSame: true }) });
    put('verdict-swap', j.key, { index, a: j.b.runId, b: j.a.runId, first: j.winner, swapped: v.winner, valid: v.valid, experimentId: v.experimentId }, t);
  }
  const result: EvolveTaskResult = {
    taskIndex: t,
    taskId: task.id,
    champion,
    versions: designs.size,
    rejected,
    championScore: champion === null ? null : spaces.get(champion)![0]!.grade.score,
    baselineScore: baseline ? baseline[0]!.grade.score : null,
  };
  if (selecting) {
    const mean = (w: Workspace[]) => w.reduce((x, y) => x + y.grade.score, 0) / w.length;
    result.selectionScores = { tasks: sel.length, champion: champion === null ? null : mean(spaces.get(champion)!), first: mean(spaces.get(0)!) };
  }
  put('result', `t${t}`, result, t);
  emit({ type: 'task-done', taskIndex: t, champion, versions: designs.size });
  return result;
}

/**
 * The external verifier's verdict on a pair (EvolveSpec.judge `verifier`): the workspace with the
 * higher grade from the family's grader wins, equal grades tie. Pure, no model call.
 */
export function verifierVerdict(a: Workspace, b: Workspace): Verdict {
  const [x, y] = [a.grade.score, b.grade.score];
  return { winner: x > y ? 'A' : y > x ? 'B' : 'tie', rationale: `external grader: A ${x.toFixed(2)}, B ${y.toFixed(2)}`, valid: true };
}

/** A workspace as the loop records it (no times: a resumed or replayed loop writes the same value). */
export function summaryOf(ws: Workspace) {
  return {
    experimentId: ws.experimentId,
    runId: ws.runId,
    version: ws.version,
    status: ws.status,
    answer: ws.answer ?? null,
    score: ws.grade.score,
    correct: ws.grade.correct,
    delegated: ws.delegated,
    handoffs: ws.handoffs,
    contractFailures: ws.contractFailures.map((f) => `${f.agent}: ${f.code}`),
    tokens: ws.tokens.prompt + ws.tokens.completion,
  };
}
