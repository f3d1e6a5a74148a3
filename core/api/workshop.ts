/**
 * The lab's API for workshop mode (types only, so the renderer can use them): the session as the
 * presenter's and attendees' pages see it, an attendee's prediction, the presenter's controls.
 * Answered by the `WorkshopHost` a workshop server passes to `createHandlers` (core/workshop
 * `WorkshopSession`); without one every method is `UNAVAILABLE`. Which token may call which
 * method is the host's business (host/workshop.ts: the attendee allow-list).
 */
import type { WorkshopView } from '../workshop/view.ts';

export type { Choice, PredictionScore, RevealChart, RevealFact, StepResult, WorkshopStepSummary, WorkshopStepView, WorkshopView } from '../workshop/view.ts';

/** `submitPrediction`'s payload: who (a random id the attendee's page keeps), for which step, which choice. */
export interface SubmitPredictionPayload {
  attendee: string;
  stepId: string;
  choice: string;
}

/** `controlWorkshop`'s payload: the presenter's action (`goto` takes the 0-based step `index`). */
export interface ControlWorkshopPayload {
  action: 'next' | 'prev' | 'goto' | 'reveal' | 'reset' | 'restart-timer';
  index?: number;
}

/** What a workshop server provides (core/workshop `WorkshopSession` fits it). */
export interface WorkshopHost {
  view(): WorkshopView;
  submit(attendee: string, stepId: string, choice: string): { predictions: number };
  control(c: { action: 'next' | 'prev' | 'reveal' | 'reset' | 'restart-timer' } | { action: 'goto'; index: number }): WorkshopView;
}

/** The workshop methods of `FlowlabApi`. Errors: `UNAVAILABLE` (no workshop here), `BAD_REQUEST` (another step, a choice not offered, a reveal before the result or after one). */
export interface WorkshopApiAdditions {
  /** The session: scenario, steps, the current step with its prediction count and, once revealed, the truth and the room's score. */
  getWorkshop(payload?: Record<string, never>): WorkshopView;
  /** An attendee's prediction for the current step (a later one replaces theirs). */
  submitPrediction(payload: SubmitPredictionPayload): { predictions: number };
  /** The presenter's controls: next, prev, goto, reveal, reset (deletes the predictions), restart-timer. */
  controlWorkshop(payload: ControlWorkshopPayload): WorkshopView;
}
