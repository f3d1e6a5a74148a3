/**
 * One evolution, planned from its options the same way wherever it starts: `flowlab evolve`
 * (cli/commands/evolve.ts) and the lab's `startEvolve` (host/massJobs.ts) both call
 * {@link planEvolution} and, after the loop, {@link heldoutOfEvolution} — so an evolution started
 * from the window is the one the CLI would run (same tasks, selection set, first design, id and
 * spec) and can be resumed or replayed by either.
 */
import type { MassRecord, Store } from '../store/index.ts';
import { getDataset } from '../tasks/index.ts';
import type { Task } from '../tasks/types.ts';
import { parseMassDesign, type DesignCatalogue } from './design.ts';
import { MassError } from './errors.ts';
import { defaultEvolutionId } from './evolutionId.ts';
import { FIRST_DESIGNS, massFamily } from './family.ts';
import { compareOnHeldout, type DesignComparison } from './heldout.ts';
import { EVOLVE_DEFAULTS, type EvolveEvent, type EvolveSpec, type OptimizerMode } from './inner.ts';
import type { MassDesign, MassFamily } from './types.ts';
import type { MassRunDeps } from './run.ts';

/**
 * `--select-tasks` when not given, for a new evolution: 4 for a family with an edit menu
 * (learn-design: the smallest even k, so a judge that answers one position cannot make a champion;
 * docs/mass-inner.md measures k = 1, 4 and 16 there), 1 otherwise (one verdict per comparison, as
 * MASS does; learn-tool and learn-word evolutions keep their ids and settings).
 */
export const SELECT_TASKS_DEFAULT = { editMenu: 4, other: 1 } as const;

/** The options of one evolution (`flowlab evolve`'s flags, the lab's `startEvolve` fields). */
export interface EvolutionOptions {
  dataset: string;
  /** The model file or endpoint reference (names the default id). */
  model: string;
  split: string;
  limit: number;
  offset: number;
  iterations: number;
  rule: 'baseline' | 'direct';
  seed: number;
  /** The evolution id; default {@link defaultEvolutionId} with `-verifier`, `-random`, `-sel<k>` as the options make it. */
  id?: string;
  /** The first design's text (a file's); default the family's FIRST_DESIGNS. */
  designText?: string;
  /** Where designText came from, for its error. */
  designSource?: string;
  optimizer?: OptimizerMode;
  judge: 'self' | 'verifier' | 'pair';
  proposer: 'model' | 'random';
  /** Training tasks each version runs on (1 + the selection set); default the stored evolution's, else SELECT_TASKS_DEFAULT. */
  selectTasks?: number;
  /** Verdicts per task judged again with A and B swapped; default the stored evolution's, else EVOLVE_DEFAULTS.auditSwaps. */
  auditSwaps?: number;
  /** Held-out tasks the champion and version 0 are compared on after the loop (none when absent). */
  heldout?: number;
  heldoutSplit: string;
}

/** An evolution ready to run: its family, tasks, selection set, first design, id and spec. */
export interface EvolutionPlan {
  evolutionId: string;
  family: MassFamily;
  tasks: Task[];
  selection: Task[];
  selectTasks: number;
  catalogue: DesignCatalogue;
  firstDesign: MassDesign;
  spec: EvolveSpec;
  /** What `recordEvolution` stores as the evolution's settings. */
  settings: Record<string, unknown>;
}

/**
 * Plans evolution `o` against `store` (a stored evolution of that id lends its selection size and
 * audit setting when the options do not name them); `name` spells an option in messages (the
 * CLI's `--select-tasks`, the API's `selectTasks`). Errors: MassError `UNKNOWN_FAMILY` (field
 * `dataset`), `BAD_OPTIONS` naming the option's field (`limit`, `selectTasks`, `proposer`,
 * `optimizer`, `heldoutSplit`), `INVALID_DESIGN` (field `design`, every issue listed); a dataset's
 * own errors (a split it lacks) as thrown by its loader.
 */
export function planEvolution(o: EvolutionOptions, store: Store | undefined, name: (field: string) => string = (f) => f): EvolutionPlan {
  const family = massFamily(o.dataset);
  const stored = o.id ? (store?.mass.get(o.id, 'evolution', 'settings')?.value as { selection?: unknown[]; auditSwaps?: number } | undefined) : undefined;
  const selectTasks = o.selectTasks ?? (stored ? 1 + (stored.selection?.length ?? 0) : undefined) ?? (family.editMenu && o.optimizer !== 'free' ? SELECT_TASKS_DEFAULT.editMenu : SELECT_TASKS_DEFAULT.other);
  const need = o.limit + selectTasks - 1;
  const loaded = getDataset(o.dataset).load({ split: o.split, limit: need, offset: o.offset });
  if (loaded.length < need) throw new MassError('BAD_OPTIONS', `${name('limit')} ${o.limit} and ${name('selectTasks')} ${selectTasks} need ${need} tasks of ${o.dataset}/${o.split} from offset ${o.offset}; it has ${loaded.length}`, { field: 'limit' });
  // Refused before any model loads: an edit optimizer without a menu, a held-out split the dataset lacks.
  if (o.proposer === 'random' && (o.optimizer === 'free' || !family.editMenu)) throw new MassError('BAD_OPTIONS', `${name('proposer')} random draws among the edit language's edits: it needs ${name('optimizer')} edit and a family with a menu (learn-design)`, { field: 'proposer' });
  if (o.judge === 'pair' && !family.pairJudge) throw new MassError('BAD_OPTIONS', `${name('judge')} pair reads the family's own pairwise prompt; ${o.dataset} has none (learn-design and learn-unit have one)`, { field: 'judge' });
  if (o.optimizer === 'edit' && !family.editMenu) throw new MassError('BAD_OPTIONS', `${name('optimizer')} edit needs a family with an edit menu; ${o.dataset} has none (use ${name('optimizer')} free; learn-design has one)`, { field: 'optimizer' });
  const splits = getDataset(o.dataset).splits;
  if (o.heldout && !splits.includes(o.heldoutSplit)) throw new MassError('BAD_OPTIONS', `${name('heldoutSplit')} ${o.heldoutSplit}: ${o.dataset} has no such split (splits: ${splits.join(', ')})`, { field: 'heldoutSplit' });
  if (o.heldout) {
    // Refused before the loop, not cut to the split's size after it.
    const held = getDataset(o.dataset).load({ split: o.heldoutSplit, limit: o.heldout }).length;
    if (held < o.heldout) throw new MassError('BAD_OPTIONS', `${name('heldout')} ${o.heldout}: ${o.dataset}/${o.heldoutSplit} has ${held} tasks`, { field: 'heldout' });
  }
  const catalogue = { checks: family.checks.names() };
  const first = parseMassDesign(o.designText ?? FIRST_DESIGNS[o.dataset], catalogue);
  if (!first.ok) throw new MassError('INVALID_DESIGN', `${o.designSource ?? 'the default design'}: the design does not validate:\n${first.issues.map((i) => `  ${i.code} ${i.path || '(design)'}: ${i.message}`).join('\n')}`, { field: 'design' });
  const evolutionId = o.id ?? `${defaultEvolutionId(o.dataset, o.seed, o.rule, o.model)}${o.judge === 'verifier' ? '-verifier' : o.judge === 'pair' ? '-pair' : ''}${o.proposer === 'random' ? '-random' : ''}${selectTasks > 1 ? `-sel${selectTasks}` : ''}`;
  const tasks = loaded.slice(0, o.limit);
  const selection = loaded.slice(o.limit);
  // A resumed evolution keeps its stored audit setting unless the options name one (a different one is refused as MISMATCH).
  const storedSettings = store?.mass.get(evolutionId, 'evolution', 'settings')?.value as { auditSwaps?: number } | undefined;
  const auditSwaps = o.auditSwaps ?? (storedSettings ? (storedSettings.auditSwaps ?? 0) : EVOLVE_DEFAULTS.auditSwaps);
  const spec: EvolveSpec = {
    evolutionId, family, tasks, firstDesign: first.design, iterations: o.iterations, rule: o.rule, seed: o.seed, catalogue, auditSwaps,
    ...(o.optimizer && { optimizerMode: o.optimizer }), ...(o.judge !== 'self' && { judge: o.judge }), ...(o.proposer === 'random' && { proposer: 'random' as const }), ...(selection.length && { selection }),
  };
  const settings = { dataset: o.dataset, split: o.split, iterations: o.iterations, rule: o.rule, ...(auditSwaps > 0 && { auditSwaps }), ...(selection.length && { selectTasks }) };
  return { evolutionId, family, tasks, selection, selectTasks, catalogue, firstDesign: first.design, spec, settings };
}

/** One task's held-out comparison of version 0 and its champion. */
export interface HeldoutOfTask {
  taskIndex: number;
  champion: number;
  comparison: DesignComparison;
}

/**
 * After the loop: version 0 against each task's champion on the first `o.heldout` tasks of
 * `o.heldoutSplit` (core/mass/heldout.ts: same seed per task, sign test, bootstrap interval). A task
 * whose champion is none or v0 is skipped with a line to `say`. Errors: MassError `NOT_FOUND` (a
 * champion's stored design is missing or does not parse); the runs' own.
 */
export async function heldoutOfEvolution(plan: Pick<EvolutionPlan, 'evolutionId' | 'firstDesign' | 'catalogue'>, o: Pick<EvolutionOptions, 'dataset' | 'heldout' | 'heldoutSplit' | 'seed'>, records: readonly MassRecord[], deps: MassRunDeps, say: (line: string) => void): Promise<HeldoutOfTask[]> {
  if (!o.heldout) return [];
  const tasks = getDataset(o.dataset).load({ split: o.heldoutSplit, limit: o.heldout });
  const out: HeldoutOfTask[] = [];
  for (const r of records.filter((x) => x.kind === 'result')) {
    const { taskIndex, champion } = r.value as { taskIndex: number; champion: number | null };
    if (champion === null || champion === 0) {
      say(`task ${taskIndex}: champion ${champion === null ? 'none' : 'v0'}: no held-out comparison against version 0\n`);
      continue;
    }
    const design = storedDesignOf(records, taskIndex, champion, plan.catalogue);
    if (!design) throw new MassError('NOT_FOUND', `task ${taskIndex}: the stored design of champion v${champion} is missing or does not parse`);
    say(`task ${taskIndex}: held-out comparison of v0 and champion v${champion} on ${tasks.length} ${o.heldoutSplit} task(s)\n`);
    const comparison = await compareOnHeldout({ evolutionId: `${plan.evolutionId}.t${taskIndex}`, tasks, base: { label: 'v0', design: plan.firstDesign }, candidate: { label: `v${champion}`, design }, seed: o.seed }, deps);
    out.push({ taskIndex, champion, comparison });
  }
  return out;
}

/** A task's stored design of version k (record `design` `t<t>/v<k>`). */
function storedDesignOf(records: readonly MassRecord[], t: number, k: number, catalogue: DesignCatalogue): MassDesign | undefined {
  const rec = records.find((r) => r.kind === 'design' && r.key === `t${t}/v${k}`);
  const p = rec && parseMassDesign((rec.value as { design: string }).design, catalogue);
  return p?.ok ? p.design : undefined;
}

/** One line (no newline) of an evolution's progress, as `flowlab evolve` prints it and the lab's MASS job shows it. */
export function evolveEventLine(e: EvolveEvent): string {
  const at = `task ${e.taskIndex}${'iteration' in e ? ` it ${e.iteration}` : ''}`;
  switch (e.type) {
    case 'workspace':
      return `${at}: ${e.version === null ? 'baseline' : `v${e.version}`}${e.selection ? ` (selection task ${e.selection})` : ''} ran, external score ${e.score.toFixed(2)}${e.reused ? ' (stored)' : ''}`;
    case 'rejected':
      return `${at}: proposal rejected: ${e.issues.slice(0, 3).join('; ')}${e.issues.length > 3 ? ` (+${e.issues.length - 3})` : ''}`;
    case 'verdict':
      return `${at}: judge v${e.version} vs ${e.against}: ${e.valid ? e.winner : 'no valid verdict'} -> ${e.candidateWon ? 'candidate wins' : 'candidate does not win'}`;
    case 'selection':
      return `${at}: v${e.version} vs ${e.against} on ${e.wins + e.losses + e.ties} training tasks: won ${e.wins}, lost ${e.losses}, tied ${e.ties} -> ${e.candidateWon ? 'accepted (wins > losses)' : 'not accepted'}`;
    case 'champion':
      return `${at}: champion v${e.version}${e.previous === null ? '' : ` (was v${e.previous})`}`;
    case 'task-done':
      return `task ${e.taskIndex}: done, ${e.versions} version(s), champion ${e.champion === null ? 'none' : `v${e.champion}`}`;
    default:
      return e satisfies never;
  }
}
