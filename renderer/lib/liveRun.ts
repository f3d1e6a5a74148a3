/**
 * The live view of a running experiment, folded from pushed LabEvents (pure). The store batches
 * events per animation frame and applies them here in one go, so a burst of `node` events costs
 * one React update. One task run is "watched" at a time: the graph shows its nodes lighting up.
 */
import type { ExperimentLabEvent } from '../../core/api/lab.ts';
import type { FailureClass } from '../../core/api/client.ts';

/** A node's live state in the watched run. */
export type LiveNodeState = 'running' | 'ok' | 'failed' | 'cascade' | 'skipped';

export interface LiveNode {
  state: LiveNodeState;
  attempt: number;
  failureClass?: FailureClass;
  simulated?: boolean;
}

export interface LiveTaskRun {
  runId: string;
  taskIndex?: number;
  finished: boolean;
  status?: 'completed' | 'failed' | 'cancelled';
  correct?: boolean;
  nodes: Record<string, LiveNode>;
}

export interface LiveRun {
  experimentId: string;
  status: 'starting' | 'running' | 'completed' | 'cancelled' | 'failed';
  done: number;
  total: number;
  message?: string;
  /**
   * Runs finished so far, by outcome (each run in exactly one): completed and graded correct,
   * completed and wrong, failed, cancelled. See runTally for the one definition of "done".
   */
  runsCorrect: number;
  runsWrong: number;
  runsFailed: number;
  runsCancelled: number;
  /** The task run drawn on the graph. */
  watching: string | null;
  /** Unfinished runs (and the watched one), by run id. */
  runs: Record<string, LiveTaskRun>;
  /** Simulated faults seen so far (node events with `simulated`). */
  simulatedNodes: number;
  /** Rollouts per task G of a rollouts experiment (its runs are task/rollout); 0 for a run or blame-eval. */
  group: number;
}

/**
 * The runs an experiment started with `r` plans, as `flowlab run` counts them (`runs stored N / M
 * planned`): rollouts `limit × group`; a blame-eval `runs` (default `limit`); a run `limit`.
 */
export function plannedRuns(r: { kind?: 'run' | 'rollouts'; limit: number; group?: number; inject?: readonly string[]; runs?: number }): number {
  if (r.kind === 'rollouts') return r.limit * (r.group ?? 1);
  return r.inject?.length ? (r.runs ?? r.limit) : r.limit;
}

/** A fresh live run right after `startRun` answered. */
export function startLiveRun(experimentId: string, total = 0, group = 0): LiveRun {
  return { experimentId, status: 'starting', done: 0, total, runsCorrect: 0, runsWrong: 0, runsFailed: 0, runsCancelled: 0, watching: null, runs: {}, simulatedNodes: 0, group };
}

/** True once the experiment ended (completed, cancelled or failed). */
export function isFinished(live: LiveRun | null): boolean {
  return !!live && (live.status === 'completed' || live.status === 'cancelled' || live.status === 'failed');
}

/**
 * The followed run after the connection came back, from its stored row (`getExperiment`): its end
 * (`interrupted` reads as cancelled, with how to finish it) and the runs stored meanwhile, whose
 * events were missed (they count as `earlier` in the tally); unchanged while it still runs.
 */
export function settledFromStored(live: LiveRun, stored: { status: string; runsDone: number }): LiveRun {
  if (stored.status === 'running') return live;
  const status = stored.status === 'completed' || stored.status === 'failed' ? stored.status : 'cancelled';
  const message = stored.status === 'interrupted' ? 'interrupted: the server stopped while it ran; Resume finishes it' : live.message;
  return { ...live, status, done: Math.max(live.done, stored.runsDone), ...(message !== undefined && { message }) };
}

/** The counters of a live run, defined once: done = correct + wrong + failed + cancelled + earlier. */
export interface RunTally {
  done: number;
  total: number;
  correct: number;
  wrong: number;
  failed: number;
  cancelled: number;
  /** Runs the host reports done that finished before this page saw them (a reload mid-run): outcome unknown here. */
  earlier: number;
}

/**
 * The counters shown for a live run. Every finished run is counted in exactly one outcome; runs
 * the host counted before this page was watching (`live.done` above the outcomes seen) are
 * `earlier`, so the parts always add up to `done`.
 */
export function runTally(live: Pick<LiveRun, 'done' | 'total' | 'runsCorrect' | 'runsWrong' | 'runsFailed' | 'runsCancelled'>): RunTally {
  const seen = live.runsCorrect + live.runsWrong + live.runsFailed + live.runsCancelled;
  const earlier = Math.max(0, live.done - seen);
  return { done: seen + earlier, total: Math.max(live.total, seen + earlier), correct: live.runsCorrect, wrong: live.runsWrong, failed: live.runsFailed, cancelled: live.runsCancelled, earlier };
}

/** The tally in words, runs as `flowlab run` counts them (`runs stored 10 / 300 planned`; a rollouts experiment plans G runs per task): `10 / 300 runs · ✓ 1 correct · ✗ 6 wrong · ⚠ 2 failed · ⊘ 1 cancelled` (every outcome always shown, so the parts visibly add up). */
export function tallyText(t: RunTally): string {
  const parts = [`✓ ${t.correct} correct`, `✗ ${t.wrong} wrong`, `⚠ ${t.failed} failed`, `⊘ ${t.cancelled} cancelled`];
  if (t.earlier) parts.push(`${t.earlier} earlier (before this page was watching)`);
  return `${t.done} / ${t.total || '?'} runs · ${parts.join(' · ')}`;
}

/** Progress 0..1 (0 when the total is not known yet). */
export function progressOf(live: Pick<LiveRun, 'done' | 'total'>): number {
  return live.total > 0 ? Math.min(1, live.done / live.total) : 0;
}

/**
 * Applies a batch of events in order. Events of other experiments are ignored. Returns the same
 * object when nothing changed (so selectors do not re-render).
 */
export function applyLabEvents(live: LiveRun | null, events: readonly ExperimentLabEvent[]): LiveRun | null {
  if (!live) return live;
  let next: LiveRun = live;
  let changed = false;
  const touch = (): LiveRun => {
    if (!changed) {
      next = { ...next, runs: { ...next.runs } };
      changed = true;
    }
    return next;
  };
  for (const e of events) {
    if (e.experimentId !== live.experimentId) continue;
    const s = touch();
    switch (e.type) {
      case 'experiment': {
        s.status = e.status;
        s.done = e.done;
        s.total = e.total;
        if (e.message !== undefined) s.message = e.message;
        break;
      }
      case 'run': {
        if (s.status === 'starting') s.status = 'running';
        s.done = Math.max(s.done, e.done);
        s.total = e.total;
        if (e.status === 'failed') s.runsFailed++;
        else if (e.status === 'cancelled') s.runsCancelled++;
        else if (e.correct) s.runsCorrect++;
        else s.runsWrong++;
        const run = s.runs[e.runId] ?? { runId: e.runId, finished: false, nodes: {} };
        s.runs[e.runId] = { ...run, taskIndex: e.taskIndex, finished: true, status: e.status, correct: e.correct };
        // Forget finished runs other than the watched one.
        for (const id of Object.keys(s.runs)) if (s.runs[id]!.finished && id !== s.watching) delete s.runs[id];
        break;
      }
      case 'node': {
        if (s.status === 'starting') s.status = 'running';
        const run = s.runs[e.runId] ?? { runId: e.runId, finished: false, nodes: {} };
        const prev = run.nodes[e.nodeId];
        // A late event for an earlier attempt never overwrites a newer one.
        if (prev && prev.attempt > e.attempt) break;
        const node: LiveNode =
          e.phase === 'started'
            ? { state: 'running', attempt: e.attempt, simulated: prev?.attempt === e.attempt ? prev.simulated : undefined }
            : { state: e.status ?? 'ok', attempt: e.attempt, failureClass: e.failureClass, simulated: e.simulated };
        if (e.phase === 'finished' && e.simulated) s.simulatedNodes++;
        s.runs[e.runId] = { ...run, nodes: { ...run.nodes, [e.nodeId]: node } };
        // Watch this run when nothing is watched, or the watched run has finished.
        const watched = s.watching ? s.runs[s.watching] : undefined;
        if (!watched || (watched.finished && s.watching !== e.runId)) {
          if (s.watching && watched?.finished) delete s.runs[s.watching];
          s.watching = e.runId;
        }
        break;
      }
      default:
        e satisfies never;
    }
  }
  return changed ? next : live;
}

/** The watched run's node states (empty before the first node event). */
export function watchedNodes(live: LiveRun | null): Record<string, LiveNode> {
  if (!live?.watching) return {};
  return live.runs[live.watching]?.nodes ?? {};
}
