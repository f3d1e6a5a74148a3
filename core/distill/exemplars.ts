import type { RunWithEvents } from '../store/index.ts';
import type { ModelCallRecord } from '../trace/events.ts';

/** One model call of the role in an exemplar run: what it was asked and what it answered. */
export interface ExemplarTurn {
  nodeId: string;
  attempt: number;
  prompt: string;
  completion: string;
}

/** One of a role's trajectories, picked as an example for the teacher. */
export interface Exemplar {
  runId: string;
  taskIndex: number;
  taskId: string;
  /** The role's ladder reward h_ρ in this run. */
  reward: number;
  /** The grader's score of the run's answer (0..1). */
  score: number;
  correct: boolean;
  /**
   * True when the run is simulated: faults were injected (`run.simulated`, or a simulated
   * node event), or a call was answered by a simulated model (its name says "simulated", as the
   * scripted provider's does). Cards distilled from it are marked simulated.
   */
  simulated: boolean;
  /** The role's calls in this run, in trace order (calls that errored are left out). */
  turns: ExemplarTurn[];
}

export interface PickOptions {
  /**
   * Keep only runs graded correct (FloWright: successes only gave +1.44, keeping failures +0.53).
   * With a tiny model there may be no correct run at all: the result is then empty.
   */
  onlySuccesses?: boolean;
}

/** Whether a model name marks a simulated model (the scripted provider is "scripted (simulated)"). */
export const isSimulatedModel = (name: string | undefined) => name !== undefined && /\bsimulated\b/i.test(name);

/**
 * The role's `k` best trajectories among `runs`, by the role's ladder reward h_ρ (highest first;
 * ties: higher grader score, then task order). A run counts only when it has a ladder entry for
 * the role and at least one completed model call of the role (an exemplar shows the role's own
 * prompts and completions). With `onlySuccesses` only correct runs count. Pure.
 */
export function pickExemplars(runs: readonly RunWithEvents[], role: string, k: number, opts: PickOptions = {}): Exemplar[] {
  const candidates: Exemplar[] = [];
  for (const { run, events } of runs) {
    const ladder = run.ladder?.[role];
    if (!ladder) continue;
    if (opts.onlySuccesses && !run.correct) continue;
    const turns: ExemplarTurn[] = [];
    let simulated = Boolean(run.simulated);
    for (const e of [...events].sort((a, b) => a.seq - b.seq)) {
      if (e.simulated) simulated = true;
      for (const c of e.calls) {
        if (isSimulatedModel(c.model)) simulated = true;
        if (c.role === role && usable(c)) turns.push({ nodeId: e.nodeId, attempt: e.attempt, prompt: c.prompt, completion: c.completion });
      }
    }
    if (turns.length === 0) continue;
    candidates.push({ runId: run.runId, taskIndex: run.taskIndex, taskId: run.taskId, reward: ladder.reward, score: run.score, correct: run.correct, simulated, turns });
  }
  candidates.sort((a, b) => b.reward - a.reward || b.score - a.score || a.taskIndex - b.taskIndex);
  return candidates.slice(0, Math.max(0, k));
}

const usable = (c: ModelCallRecord) => !c.error && c.completion.trim() !== '';
