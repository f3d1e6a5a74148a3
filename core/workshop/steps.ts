/**
 * The workshop's step state machine and prediction scoring, pure. The presenter moves between
 * steps (next, prev, goto), reveals the current step's answer and resets the session; attendees
 * submit one prediction per step (a later one replaces theirs) until the reveal.
 */
import { WorkshopError } from './scenario.ts';

/** Where a session stands. */
export interface WorkshopState {
  /** The current step (0-based). */
  stepIndex: number;
  /** Epoch ms the current step was opened: its timer counts from here. */
  startedAt: number;
  /** Ids of the steps whose answer is revealed (stays revealed when the presenter goes back). */
  revealed: string[];
  /** Bumped on every change, so a polling page sees that something moved. */
  version: number;
}

/** What the presenter can do. */
export type WorkshopControl =
  | { action: 'next' }
  | { action: 'prev' }
  | { action: 'goto'; index: number }
  | { action: 'reveal' }
  | { action: 'reset' }
  | { action: 'restart-timer' };

export const CONTROL_ACTIONS = ['next', 'prev', 'goto', 'reveal', 'reset', 'restart-timer'] as const;

/** The state a new session starts in. */
export function initialState(now: number): WorkshopState {
  return { stepIndex: 0, startedAt: now, revealed: [], version: 1 };
}

/**
 * The state after `control`. `stepIds` are the scenario's steps in order; `ready(id)` says
 * whether a step's result exists (a reveal needs it). Moving to another step restarts the
 * timer; moving past either end, or to a missing index, is an error, as is revealing twice.
 * `reset` goes back to step 1 with nothing revealed (the predictions are deleted by the caller).
 * Errors: WorkshopError `BAD_REQUEST` (no such step), `WRONG_PHASE` (reveal twice, reveal before the result).
 */
export function applyControl(state: WorkshopState, control: WorkshopControl, stepIds: readonly string[], now: number, ready: (stepId: string) => boolean): WorkshopState {
  const go = (index: number): WorkshopState => {
    if (!Number.isInteger(index) || index < 0 || index >= stepIds.length) {
      throw new WorkshopError('BAD_REQUEST', `there is no step ${index + 1}: the scenario has steps 1 to ${stepIds.length}`);
    }
    return { ...state, stepIndex: index, startedAt: now, version: state.version + 1 };
  };
  switch (control.action) {
    case 'next':
      return go(state.stepIndex + 1);
    case 'prev':
      return go(state.stepIndex - 1);
    case 'goto':
      return go(control.index);
    case 'restart-timer':
      return { ...state, startedAt: now, version: state.version + 1 };
    case 'reset':
      return { stepIndex: 0, startedAt: now, revealed: [], version: state.version + 1 };
    case 'reveal': {
      const id = stepIds[state.stepIndex]!;
      if (state.revealed.includes(id)) throw new WorkshopError('WRONG_PHASE', `step ${state.stepIndex + 1} (${id}) is already revealed`);
      if (!ready(id)) throw new WorkshopError('WRONG_PHASE', `step ${state.stepIndex + 1} (${id}) has no result yet: it is still running or was not rehearsed`);
      return { ...state, revealed: [...state.revealed, id], version: state.version + 1 };
    }
  }
}

/** One attendee's prediction for a step. */
export interface Prediction {
  attendee: string;
  choice: string;
  /** Epoch ms of the (latest) submission. */
  at: number;
}

/** How the room did on a step. */
export interface PredictionScore {
  total: number;
  correct: number;
  /** correct / total; null with no predictions. */
  share: number | null;
  /** Predictions per offered choice (every choice listed, zeros included). */
  byChoice: Record<string, number>;
}

/** Scores the room's predictions against the truth (a prediction of a choice not offered counts as wrong and is listed under its id). */
export function scorePredictions(choices: readonly string[], predictions: readonly Pick<Prediction, 'choice'>[], truth: string): PredictionScore {
  const byChoice: Record<string, number> = Object.fromEntries(choices.map((c) => [c, 0]));
  let correct = 0;
  for (const p of predictions) {
    byChoice[p.choice] = (byChoice[p.choice] ?? 0) + 1;
    if (p.choice === truth) correct++;
  }
  return { total: predictions.length, correct, share: predictions.length ? correct / predictions.length : null, byChoice };
}

/** Seconds left on a step's timer at `now` (0 once it has run out). */
export function secondsLeft(state: Pick<WorkshopState, 'startedAt'>, seconds: number, now: number): number {
  return Math.max(0, Math.ceil(seconds - (now - state.startedAt) / 1000));
}
