/**
 * What the workshop's pages see (types only, so the renderer can import them through
 * core/api/features/workshop.ts): the session, its steps, the current step, and after its reveal the
 * truth with the room's score.
 */
import type { Choice } from './scenario.ts';
import type { PredictionScore } from './steps.ts';
import type { StepResult } from './truth.ts';

export type { Choice, PredictionScore, StepResult };
export type { RevealChart, RevealFact } from './truth.ts';

/** A step in the session's list. */
export interface WorkshopStepSummary {
  id: string;
  title: string;
  /** Its result exists (rehearsed, or run live). */
  ready: boolean;
  revealed: boolean;
}

/** The current step. */
export interface WorkshopStepView {
  index: number;
  id: string;
  title: string;
  text: string;
  prompt: string;
  choices: Choice[];
  /** The timer, in seconds, and when it started (epoch ms). */
  seconds: number;
  startedAt: number;
  secondsLeft: number;
  /** `ready`: its result exists; `running`: live mode is running it; `failed`: the live run failed (`problem`); `missing`: not rehearsed. */
  status: 'ready' | 'running' | 'failed' | 'missing';
  problem?: string;
  /** How many attendees have predicted. */
  predictions: number;
  revealed: boolean;
  /** After the reveal only: what ran, the truth, and how the room did. */
  reveal?: { result: StepResult; truthLabel: string; text: string; score: PredictionScore };
}

/** `getWorkshop`'s answer. */
export interface WorkshopView {
  sessionId: string;
  scenario: { id: string; title: string; summary: string };
  mode: 'room' | 'live';
  /** Bumped by every step change, reveal or reset. */
  version: number;
  /** The host's clock (epoch ms), so pages draw the timer without trusting their own. */
  now: number;
  /** The attendees' page (with the attendee token), for the QR code. */
  attendeeUrl: string | null;
  /** Attendees in the room (identities issued at join) and the presenter's cap. */
  attendees: { joined: number; cap: number };
  steps: WorkshopStepSummary[];
  step: WorkshopStepView;
}
