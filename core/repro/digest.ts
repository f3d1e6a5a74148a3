/**
 * Output digests (`flowlab verify`): sha256 over what an experiment or a train loop produced, in
 * an order made of ids (task index, node id, attempt, call index; role, iteration), never of
 * completion time, so two runs that produced the same outputs have the same digest.
 */
import type { ExperimentCall, Store } from '../store/index.ts';
import type { RunRecord } from '../results/index.ts';
import { inputOrder } from '../training/samples.ts';
import { sha256Of } from './fingerprint.ts';

/** What of a run its digest covers: its grade and answer (timings and ids left out). */
function runPart(r: RunRecord): unknown[] {
  return [r.taskIndex, r.taskId, r.status, r.answer ?? null, r.score, r.correct, r.seed];
}

/** What of a call its digest covers: where it sat, its seed and parameters, what was sampled. */
function callPart(c: ExperimentCall): unknown[] {
  return [c.taskIndex, c.nodeId, c.attempt, c.callIndex, c.seed, c.params, c.completion, c.completionTokenIds ?? null, c.error ?? null];
}

/** The digest of stored runs and calls (any order in; sorted by ids here). */
export function runsDigest(runs: readonly RunRecord[], calls: readonly ExperimentCall[]): string {
  const sortedRuns = [...runs].sort((a, b) => a.taskIndex - b.taskIndex);
  return sha256Of({ runs: sortedRuns.map(runPart), calls: inputOrder(calls).map(callPart) });
}

/** The digest of an experiment's stored runs and model calls. Errors: the store's (`NOT_FOUND`). */
export function experimentDigest(store: Store, experimentId: string): string {
  return runsDigest(store.listRuns(experimentId), store.getExperimentCalls(experimentId));
}

/** One weight version as a train loop's digest covers it. */
export interface VersionHash {
  role: string;
  iteration: number;
  /** sha256 (hex) of the version's GGUF file. */
  sha256: string;
}

/** The digest of a train loop's versions (sorted by role, then iteration). */
export function versionsDigest(versions: readonly VersionHash[]): string {
  const sorted = [...versions].sort((a, b) => (a.role < b.role ? -1 : a.role > b.role ? 1 : a.iteration - b.iteration));
  return sha256Of(sorted.map((v) => [v.role, v.iteration, v.sha256]));
}
