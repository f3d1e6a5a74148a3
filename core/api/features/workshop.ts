/**
 * The workshop feature: the session as the presenter's and attendees' pages see it, an
 * attendee's prediction, the presenter's controls. Answered by the `WorkshopHost` a workshop
 * server passes to `createHandlers` (core/workshop `WorkshopSession`); without one every method is
 * `UNAVAILABLE`. Which token may call which method is the host's business (host/workshop.ts: the
 * attendee allow-list).
 */
import * as z from 'zod';
import type { WorkshopView } from '../../workshop/view.ts';
import { ApiError } from '../errors.ts';
import { defineFeature } from '../feature.ts';
import { Name, NoPayload } from '../fields.ts';

export type { Choice, PredictionScore, RevealChart, RevealFact, StepResult, WorkshopStepSummary, WorkshopStepView, WorkshopView } from '../../workshop/view.ts';

/**
 * `submitPrediction`'s payload: who, for which step, which choice. With an attendee token the
 * host replaces `attendee` by the identity issued at `joinWorkshop` (host/workshop.ts): the body's
 * own value is never counted.
 */
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

/** `joinWorkshop`'s answer: the caller's attendee id and how many are in the room. */
export interface JoinedWorkshop {
  attendee: string;
  joined: number;
}

/** One attendee as the presenter sees them (`listAttendees`). */
export interface AttendeeView {
  id: string;
  joinedAt: number;
  address: string;
}

/** What a workshop server provides (cli/commands/workshop.ts adapts core/workshop `WorkshopSession`). */
export interface WorkshopHost {
  view(): WorkshopView;
  /** Confirms a joined `attendee` (the host's guard minted it), or mints one for a caller that names none. */
  join(attendee?: string): JoinedWorkshop;
  attendees(): AttendeeView[];
  remove(attendee: string): { removed: string; predictionsDeleted: number };
  submit(attendee: string, stepId: string, choice: string): { predictions: number };
  control(c: { action: 'next' | 'prev' | 'reveal' | 'reset' | 'restart-timer' } | { action: 'goto'; index: number }): WorkshopView;
}

/** The workshop methods (synchronous on the host). Errors: `UNAVAILABLE` (no workshop here), `BAD_REQUEST` (another step, a choice not offered, a reveal before the result or after one). */
export interface WorkshopApi {
  /** The session: scenario, steps, the current step with its prediction count and, once revealed, the truth and the room's score. */
  getWorkshop(payload?: Record<string, never>): WorkshopView;
  /**
   * Joins the room (attendee token): the host issues an identity, bound to the caller by a signed
   * cookie, within the presenter's room cap. Errors: `FORBIDDEN` (room full, removed), `RATE_LIMITED`.
   */
  joinWorkshop(payload?: { attendee?: string }): JoinedWorkshop;
  /** The attendees in the room, in order of joining (presenter only). */
  listAttendees(payload?: Record<string, never>): AttendeeView[];
  /** The presenter removes an attendee: seat freed, predictions deleted, later calls refused (403). */
  removeAttendee(payload: { attendee: string }): { removed: string; predictionsDeleted: number };
  /** An attendee's prediction for the current step (a later one replaces theirs). */
  submitPrediction(payload: SubmitPredictionPayload): { predictions: number };
  /** The presenter's controls: next, prev, goto, reveal, reset (deletes the predictions), restart-timer. */
  controlWorkshop(payload: ControlWorkshopPayload): WorkshopView;
}

const Attendee = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, - or _');

export const workshopFeature = defineFeature<WorkshopApi>()({
  name: 'workshop',
  payloads: {
    getWorkshop: NoPayload,
    joinWorkshop: z.strictObject({ attendee: Attendee.optional() }).optional(),
    submitPrediction: z.strictObject({ attendee: Attendee, stepId: Name, choice: Name }),
    controlWorkshop: z.strictObject({ action: z.enum(['next', 'prev', 'goto', 'reveal', 'reset', 'restart-timer']), index: z.int('must be an integer').min(0, 'must be at least 0').max(100, 'must be at most 100').optional() })
      .refine((c) => (c.action === 'goto') === (c.index !== undefined), { message: 'index is given with goto, and only with goto', path: ['index'] }),
    listAttendees: NoPayload,
    removeAttendee: z.strictObject({ attendee: Attendee }),
  },
  handlers: (deps: { workshop?: WorkshopHost | undefined }) => {
    const workshop = (method: string): WorkshopHost => {
      if (!deps.workshop) throw new ApiError('UNAVAILABLE', `${method}: no workshop runs on this host; start one with \`flowlab workshop <scenario>\``, method);
      return deps.workshop;
    };
    return {
      getWorkshop: () => workshop('getWorkshop').view(),
      joinWorkshop: (payload) => workshop('joinWorkshop').join(payload?.attendee),
      submitPrediction: ({ attendee, stepId, choice }) => workshop('submitPrediction').submit(attendee, stepId, choice),
      controlWorkshop: ({ action, index }) => workshop('controlWorkshop').control(action === 'goto' ? { action, index: index! } : { action }),
      listAttendees: () => workshop('listAttendees').attendees(),
      removeAttendee: ({ attendee }) => workshop('removeAttendee').remove(attendee),
    };
  },
});
