/**
 * Re-running a stored experiment or train loop into a scratch database (`flowlab verify`,
 * `flowlab repeat`): the experiment's row and planned tasks (all, or a sample) are copied there
 * and finished by the experiment service's `resume` — same workflow text, models, seeds and
 * settings — and a train loop is started again from its stored plan under the same loop id.
 * The scratch folder is removed afterwards unless kept.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { launchTrainLoop, loopPlanOf, startExperiment, storedLoopSpec } from '../core/experiments/index.ts';
import { compareRuns, compareVersions, experimentDigest, fingerprintDifferences, loopVersionHashes, runsDigest, versionsDigest, type Fingerprint, type RunsComparison, type VersionsComparison } from '../core/repro/index.ts';
import { openStore, type SqliteStore, type TrainLoopRow } from '../core/store/index.ts';
import type { LoopEvent } from '../core/training/index.ts';
import { parseWorkflow } from '../core/workflow/index.ts';
import { loadTrainer } from '../models/factory.ts';
import { asCli, CommandError } from './errors.ts';
import { cliDeps, toolsOfExperiment } from './wiring.ts';
import type { Io } from './io.ts';
import { progress, settled } from './progress.ts';

/** A scratch database in a fresh temp folder. */
export function scratchStore(keep?: string): { store: SqliteStore; dir: string; dispose: () => void } {
  const dir = keep ? path.resolve(keep) : mkdtempSync(path.join(os.tmpdir(), 'flowlab-verify-'));
  const store = openStore(path.join(dir, 'verify.db'), { write: true });
  return {
    store,
    dir,
    dispose: () => {
      store.close();
      if (!keep) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** What re-running an experiment found. */
export interface ExperimentRerun {
  experimentId: string;
  comparison: RunsComparison;
  /** Output digests over the compared tasks: original, re-run. */
  digest: { original: string; rerun: string };
  /** Fingerprint fields that differ between the original's record and the re-run's (code, libraries, files). */
  fingerprintChanges: string[];
  repeatability: string;
  /** The original's stored output digest (of all its tasks), when it had one. */
  storedDigest?: string;
}

/**
 * Copies experiment `id` of `src` into `scratch` with the tasks in `only` (all when absent),
 * runs them through `resume`, and compares the runs task by task (core/repro compareRuns).
 */
/**
 * Why an experiment of this kind cannot be re-run from its stored spec (null: it can): a fork
 * re-runs from its parent's recording with its intervention, a MASS step belongs to its loop, an
 * import has no model calls to make again.
 */
export function notRerunnable(kind: string, mass: boolean): string | null {
  if (kind === 'fork') return 'is a fork: it re-runs from its parent\'s recording with its intervention, so check it offline with flowlab replay, or make it again with flowlab fork';
  if (kind === 'mass' || mass) return 'is a step of a MASS loop: check the loop against its recorded calls with flowlab evolve --replay <id>, flowlab rank --replay <loop> or flowlab rsi --replay <loop>';
  if (kind === 'import') return 'was imported from a trace file: it holds no model calls to re-run';
  return null;
}

export async function rerunExperiment(src: SqliteStore, scratch: SqliteStore, id: string, db: string, io: Io, only?: ReadonlySet<number>): Promise<ExperimentRerun> {
  const exp = src.getExperiment(id);
  const other = notRerunnable(exp.kind, exp.config?.mass !== undefined);
  if (other) throw new CommandError('WRONG_KIND', `${id} ${other}`);
  const tasks = src.listTasks(exp.id).filter((t) => !only || only.has(t.taskIndex));
  const { id: _i, createdAt: _c, updatedAt: _u, finishedAt: _f, status: _s, pid: _p, ...spec } = exp;
  scratch.createExperiment({ ...spec, id: exp.id, tasks });
  scratch.setExperimentStatus(exp.id, 'interrupted');
  for (const card of src.improve.listCards()) scratch.improve.saveCard(card);
  const tools = toolsOfExperiment(exp.config, db, io);
  const bar = progress(io, (e) => io.stderr(`Re-running ${e.experimentId} into a scratch database: ${e.total} task(s).\n`));
  const handle = await asCli(() => startExperiment({ kind: 'resume', experimentId: exp.id, models: {} }, cliDeps(scratch, tools), { onEvent: bar.onEvent }));
  settled(await bar.follow(handle));
  const { graph } = parseWorkflow(exp.workflowYaml, { tools });
  const events = (s: SqliteStore) => (runId: string) => s.getRunEvents(runId);
  const keepTask = <T extends { taskIndex: number }>(xs: T[]) => xs.filter((x) => !only || only.has(x.taskIndex));
  const comparison = compareRuns(
    { runs: keepTask(src.listRuns(exp.id)), events: events(src) },
    { runs: scratch.listRuns(exp.id), events: events(scratch) },
    { nodes: graph.nodes.map((n) => ({ id: n.id })), edges: graph.edges.map((e) => ({ from: e.from, to: e.to, ...(e.maxIterations !== undefined && { maxIterations: e.maxIterations }) })) },
    only,
  );
  const digest = {
    original: runsDigest(keepTask(src.listRuns(exp.id)), keepTask(src.getExperimentCalls(exp.id))),
    rerun: experimentDigest(scratch, exp.id),
  };
  const a = src.repro.find(exp.id);
  const b = scratch.repro.find(exp.id);
  const fingerprintChanges = a && b ? fingerprintDifferences(a.fingerprint as unknown as Fingerprint, b.fingerprint as unknown as Fingerprint).filter((k) => k !== 'inputs.tasks') : a ? [] : ['(the original has no reproducibility record: made before fingerprints were stored)'];
  return { experimentId: exp.id, comparison, digest, fingerprintChanges, repeatability: (b ?? a)?.repeatability ?? 'exact', ...(a?.outputDigest && { storedDigest: a.outputDigest }) };
}

/** What re-running a train loop found. */
export interface LoopRerun {
  loopId: string;
  comparison: VersionsComparison;
  digest: { original: string; rerun: string };
  fingerprintChanges: string[];
  repeatability: string;
}

/** Runs stored loop `loop` of `src` again from its plan into `scratch` (versions under its folder) and compares version hashes. */
export async function rerunTrainLoop(src: SqliteStore, scratch: { store: SqliteStore; dir: string }, loop: TrainLoopRow, io: Io): Promise<LoopRerun> {
  const deps = cliDeps(scratch.store);
  for (const id of Object.values(loopPlanOf(loop).startVersions)) {
    for (const v of src.weights.lineage(id).reverse()) if (!scratch.store.weights.find(v.id)) scratch.store.weights.save(v);
  }
  const spec = { ...storedLoopSpec(loop, src, deps.tools!, undefined, deps.models.verify), versionsDir: path.join(scratch.dir, 'versions') };
  const trainer = await loadTrainer();
  io.stderr(`Re-running train loop ${loop.id} (${loop.iterations} iterations) into a scratch database.\n`);
  const onEvent = (e: LoopEvent) => {
    if (e.type === 'iteration') io.stderr(`iteration ${e.metrics.iteration}: score ${e.metrics.score.toFixed(3)}\n`);
  };
  const handle = launchTrainLoop(spec, { ...deps, trainer }, { onEvent }, false);
  await handle.done;
  const a = loopVersionHashes(src, loop.id);
  const b = loopVersionHashes(scratch.store, loop.id);
  const ra = src.repro.find(loop.id);
  const rb = scratch.store.repro.find(loop.id);
  const fingerprintChanges = ra && rb ? fingerprintDifferences(ra.fingerprint as unknown as Fingerprint, rb.fingerprint as unknown as Fingerprint) : ra ? [] : ['(the original has no reproducibility record: made before fingerprints were stored)'];
  return { loopId: loop.id, comparison: compareVersions(a, b), digest: { original: versionsDigest(a), rerun: versionsDigest(b) }, fingerprintChanges, repeatability: (rb ?? ra)?.repeatability ?? 'exact' };
}
