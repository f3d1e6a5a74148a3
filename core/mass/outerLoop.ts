/**
 * Starting an outer loop (`flowlab rank`, `flowlab rsi`, the lab's startRank / startRsi) from its
 * settings, the one shape both front ends build: the task family, how many training (and
 * held-out) tasks, where each task's champion comes from, and the loop's options. The settings
 * are written once under the loop id (`outer-settings`, key `settings`, in `mass_records`); a
 * rerun under the same id must give the same ones (only rsi's cycle count may grow), so a loop's
 * thresholds, seeds and cuts are facts of the loop, and its replay (outerReplay.ts) reads them back.
 */
import type { ModelProvider } from '../model/provider.ts';
import { canonicalJson, type Store } from '../store/index.ts';
import { getDataset } from '../tasks/index.ts';
import type { Task } from '../tasks/types.ts';
import type { Trainer } from '../training/port.ts';
import { championOf } from './champions.ts';
import { MassError } from './errors.ts';
import { defaultStepsInFlight } from './inFlight.ts';
import { massFamily } from './family.ts';
import type { OuterEvent } from './outer.ts';
import { runRank, type RankResult } from './rank.ts';
import { runRsi, type RsiDeps, type RsiEvent, type RsiOptions, type RsiReport } from './rsi.ts';
import type { MassDesign } from './types.ts';

export const OUTER_SETTINGS = 'outer-settings';

/** What starts one outer loop; JSON-safe (it is stored). */
export interface OuterSettings {
  command: 'rank' | 'rsi';
  /** The MASS task family (core/mass/family.ts), e.g. `learn-tool`. */
  dataset: string;
  /** Training tasks: the train split, from the start. */
  tasks: number;
  /** rsi: held-out tasks (the heldout split, from the start). */
  heldout?: number;
  /** Each task's champion from this stored inner loop (`flowlab evolve` on the same tasks), instead of `options.design`. */
  champions?: string;
  /** The loop's options; `cycles` is given per start (rsi may continue with more). */
  options: Omit<RsiOptions, 'cycles'>;
}

/** The settings stored under `loopId`, if any. */
export function outerSettingsOf(store: Store, loopId: string): OuterSettings | undefined {
  return store.mass.get(loopId, OUTER_SETTINGS, 'settings')?.value as OuterSettings | undefined;
}

/**
 * Writes `s` under its loop id once; a rerun must give the same settings. Errors: MassError
 * `MISMATCH` naming each setting that differs from the stored one.
 */
export function recordOuterSettings(store: Store, s: OuterSettings): void {
  const loopId = s.options.loopId;
  const stored = outerSettingsOf(store, loopId);
  if (!stored) {
    store.mass.put({ evolutionId: loopId, kind: OUTER_SETTINGS, key: 'settings', value: s });
    return;
  }
  const flat = (x: OuterSettings) => ({ ...x, options: undefined, ...Object.fromEntries(Object.entries(x.options).map(([k, v]) => [`options.${k}`, v])) });
  const [a, b] = [flat(stored) as Record<string, unknown>, flat(s) as Record<string, unknown>];
  const differ = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => canonicalJson(a[k] ?? null) !== canonicalJson(b[k] ?? null)).sort();
  if (differ.length) throw new MassError('MISMATCH', `loop ${loopId} was started with other settings (${differ.join(', ')}); give the same ones to resume it, or another loop id`, { field: differ[0]! });
}

/**
 * The training (and held-out) tasks of the settings. Errors: MassError `UNKNOWN_FAMILY`,
 * `BAD_OPTIONS` (field `tasks` or `heldout`: more tasks than the split has — refused before
 * anything runs, not silently cut), dataset errors.
 */
export function tasksOf(s: OuterSettings): { train: Task[]; heldout: Task[] } {
  const family = massFamily(s.dataset);
  const ds = getDataset(family.dataset);
  const train = ds.load({ split: 'train', limit: s.tasks });
  if (train.length < s.tasks) throw new MassError('BAD_OPTIONS', `tasks ${s.tasks}: ${s.dataset}/train has ${train.length}`, { field: 'tasks' });
  const heldout = s.heldout ? ds.load({ split: 'heldout', limit: s.heldout }) : [];
  if (s.heldout && heldout.length < s.heldout) throw new MassError('BAD_OPTIONS', `heldout ${s.heldout}: ${s.dataset}/heldout has ${heldout.length}`, { field: 'heldout' });
  return { train, heldout };
}

/** What starting a loop needs besides its settings. */
export interface OuterStartDeps {
  store: Store;
  signal?: AbortSignal;
  /** Replay: the provider serving one step's recorded calls. */
  providerFor?: (experimentId: string) => ModelProvider;
  /** Where the per-task champions' evolution is read (default `store`; a replay reads the recording). */
  championStore?: Store;
  /**
   * Runs and judge calls in flight at once (`--parallel`, core/mass/inFlight.ts); default: the
   * base model's, as an experiment's (defaultStepsInFlight: 1 for a local GGUF file). Not a
   * setting of the loop: the records, exports and versions are the same at any value, and a loop
   * resumes under another.
   */
  parallel?: number;
}

const champion = (deps: OuterStartDeps, s: OuterSettings) => (task: Task, taskIndex: number): { design: MassDesign | null; version: number | null } =>
  championOf(deps.championStore ?? deps.store, s.champions!, taskIndex, task);

/** Runs (or resumes) a `rank` loop; see runRank. Errors: `recordOuterSettings`'s, then runRank's. */
export async function startRank(deps: OuterStartDeps & { provider: ModelProvider; onEvent?: (e: OuterEvent) => void }, s: OuterSettings): Promise<RankResult> {
  const o = s.options;
  const tasks = tasksOf(s).train;
  if (s.champions) tasks.forEach((t, i) => champion(deps, s)(t, i)); // refuse a missing champion before anything runs
  recordOuterSettings(deps.store, s);
  return runRank({
    store: deps.store, provider: deps.provider, family: massFamily(s.dataset), tasks, config: { mass: { loopId: o.loopId } }, parallel: deps.parallel ?? defaultStepsInFlight(o.baseModel),
    ...(deps.signal && { signal: deps.signal }), ...(deps.onEvent && { onEvent: deps.onEvent }), ...(deps.providerFor && { providerFor: deps.providerFor }),
    ...(s.champions && { champion: champion(deps, s) }),
  }, { ...o.outer, prefix: o.loopId, design: o.design, ...(o.tamperer && { tamperer: o.tamperer }), outDir: o.outDir, thresholds: o.thresholds, judge: `self-judge (${o.baseModel.split(/[\\/]/).pop()})`, ...(o.allowUnreliableJudge && { allowUnreliableJudge: true }) });
}

/** Runs (or resumes) `cycles` cycles of an rsi loop; see runRsi. Errors: `recordOuterSettings`'s, then runRsi's. */
export async function startRsi(
  deps: OuterStartDeps & { trainer: Trainer; makeProvider: (file: string) => Promise<ModelProvider>; onEvent?: (e: RsiEvent) => void; recordedVersion?: RsiDeps['recordedVersion'] },
  s: OuterSettings,
  cycles: number,
): Promise<RsiReport> {
  const { train, heldout } = tasksOf(s);
  if (s.champions) train.forEach((t, i) => champion(deps, s)(t, i));
  recordOuterSettings(deps.store, s);
  const pick = champion(deps, s);
  return runRsi({
    store: deps.store, trainer: deps.trainer, makeProvider: deps.makeProvider, family: massFamily(s.dataset), trainTasks: train, heldoutTasks: heldout,
    config: { mass: { loopId: s.options.loopId } }, parallel: deps.parallel ?? defaultStepsInFlight(s.options.baseModel),
    ...(s.champions && { champion: async (task, _p, c) => pick(task, c.taskIndex) }),
    ...(deps.signal && { signal: deps.signal }), ...(deps.onEvent && { onEvent: deps.onEvent }), ...(deps.providerFor && { providerFor: deps.providerFor }),
    ...(deps.recordedVersion && { recordedVersion: deps.recordedVersion }),
  }, { ...s.options, cycles });
}
