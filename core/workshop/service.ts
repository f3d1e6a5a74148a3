/**
 * The workshop service: rehearsal (each step run once for real, its result recorded in the
 * store), and a session that serves a scenario to a room — from the rehearsal (`room`: no step
 * runs, so no model is loaded) or running each step when the presenter opens it (`live`).
 * Steps run through a `StepRunner` port the composition root provides (the CLI runs the step's
 * Flowlab command); this module never loads a model itself.
 */
import type { Store } from '../store/index.ts';
import { AttendeeRegistry, type AttendeeEntry } from './attendees.ts';
import { scenarioHash, WorkshopError, type Scenario, type ScenarioStep } from './scenario.ts';
import { applyControl, initialState, scorePredictions, secondsLeft, type WorkshopControl, type WorkshopState } from './steps.ts';
import type { StepResult } from './truth.ts';
import type { WorkshopStepView, WorkshopView } from './view.ts';
import { errorMessage } from '../errors.ts';

/** Runs one step for real (the CLI's adapter runs its command against the store). */
export interface StepRunner {
  run(step: ScenarioStep, index: number): Promise<StepResult>;
}

/** The store source of a scenario's rehearsal. */
export const rehearsalSource = (s: Scenario): string => `rehearsal:${s.id}:${scenarioHash(s)}`;
const sessionSource = (id: string): string => `session:${id}`;

/** Longest attendee id accepted (letters, digits, `-`, `_`). */
export const MAX_ATTENDEE_ID = 64;

/**
 * Rehearses a scenario: runs every step that has no recorded result for this version of the
 * scenario (all of them with `force`), in order, recording each as soon as it finishes.
 * `onStep` hears each step before it runs (`ran: false` when the recorded one is reused).
 * Resolves with the ids of the steps run and reused. A step that fails rejects (those before it stay recorded).
 */
export async function rehearse(store: Store, scenario: Scenario, runner: StepRunner, opts: { force?: boolean; onStep?: (step: ScenarioStep, index: number, ran: boolean) => void } = {}): Promise<{ ran: string[]; reused: string[] }> {
  const source = rehearsalSource(scenario);
  const ran: string[] = [];
  const reused: string[] = [];
  for (const [i, step] of scenario.steps.entries()) {
    if (!opts.force && store.workshops.getResult(source, step.id)) {
      opts.onStep?.(step, i, false);
      reused.push(step.id);
      continue;
    }
    opts.onStep?.(step, i, true);
    const result = await runner.run(step, i);
    store.workshops.putResult(source, step.id, i, JSON.stringify(result));
    ran.push(step.id);
  }
  return { ran, reused };
}

/** The steps of a scenario that have a rehearsal recorded. */
export function rehearsedSteps(store: Store, scenario: Scenario): string[] {
  return store.workshops.listResults(rehearsalSource(scenario)).map((r) => r.stepId);
}

/** Options of a {@link WorkshopSession}. */
export interface WorkshopSessionOptions {
  store: Store;
  scenario: Scenario;
  mode: 'room' | 'live';
  /** Default `ws-<scenario id>-<epoch ms>`. */
  sessionId?: string;
  /** Live mode: runs a step when the presenter opens it. Room mode never calls it. */
  runner?: StepRunner;
  /** The attendees' page URL shown as a QR code. */
  attendeeUrl?: string;
  /** Default `Date.now`. */
  now?: () => number;
  /** Live mode: hears a step's run end (its error when it failed). */
  onStepDone?: (stepId: string, error?: unknown) => void;
  /** Most attendees in the room at once (the presenter's cap, 1..10000). Default {@link DEFAULT_ROOM_CAP}. */
  roomCap?: number;
}

/** The room cap when the presenter sets none. */
export const DEFAULT_ROOM_CAP = 300;

/**
 * One session of a scenario in a room. State and predictions live in the store (one row per
 * session, one per attendee and step); step results are read as stored, byte for byte.
 */
export class WorkshopSession {
  readonly id: string;
  readonly scenario: Scenario;
  readonly mode: 'room' | 'live';
  private readonly store: Store;
  private readonly now: () => number;
  private readonly source: string;
  private readonly running = new Map<string, Promise<void>>();
  private readonly failed = new Map<string, string>();
  private attendeeUrl: string | null;
  /** Who joined (identities the host issued); see attendees.ts. */
  readonly attendees: AttendeeRegistry;

  constructor(private readonly opts: WorkshopSessionOptions) {
    this.store = opts.store;
    this.scenario = opts.scenario;
    this.mode = opts.mode;
    this.now = opts.now ?? Date.now;
    this.id = opts.sessionId ?? `ws-${opts.scenario.id}-${this.now()}`;
    this.attendeeUrl = opts.attendeeUrl ?? null;
    this.attendees = new AttendeeRegistry(opts.roomCap ?? DEFAULT_ROOM_CAP, this.now);
    if (opts.mode === 'live' && !opts.runner) throw new WorkshopError('BAD_REQUEST', 'live mode needs a step runner');
    this.source = opts.mode === 'room' ? rehearsalSource(opts.scenario) : sessionSource(this.id);
    this.store.workshops.createSession({ id: this.id, scenarioId: opts.scenario.id, scenarioHash: scenarioHash(opts.scenario), mode: opts.mode, state: { ...initialState(this.now()) } });
    this.startIfLive();
  }

  /** Sets the attendee URL once the server knows its port. */
  setAttendeeUrl(url: string): void {
    this.attendeeUrl = url;
  }

  private state(): WorkshopState {
    return this.store.workshops.getSession(this.id).state as unknown as WorkshopState;
  }

  /** The recorded result of a step, as stored (JSON text), or undefined. */
  resultText(stepId: string): string | undefined {
    return this.store.workshops.getResult(this.source, stepId)?.json;
  }

  private result(stepId: string): StepResult | undefined {
    const text = this.resultText(stepId);
    return text === undefined ? undefined : (JSON.parse(text) as StepResult);
  }

  /** Live mode: starts the current step's run when it has no result and is not running. */
  private startIfLive(): void {
    if (this.mode !== 'live') return;
    const { stepIndex } = this.state();
    const step = this.scenario.steps[stepIndex]!;
    if (this.running.has(step.id) || this.resultText(step.id) !== undefined) return;
    this.failed.delete(step.id);
    const run = this.opts.runner!.run(step, stepIndex).then(
      (result) => {
        this.store.workshops.putResult(this.source, step.id, stepIndex, JSON.stringify(result));
        this.bump();
        this.opts.onStepDone?.(step.id);
      },
      (err: unknown) => {
        this.failed.set(step.id, errorMessage(err));
        this.bump();
        this.opts.onStepDone?.(step.id, err);
      },
    ).finally(() => this.running.delete(step.id));
    this.running.set(step.id, run);
  }

  private bump(): void {
    if (this.store.closed) return;
    const s = this.state();
    this.store.workshops.saveState(this.id, { ...s, version: s.version + 1 });
  }

  /** Resolves when no live run is in flight. */
  async settled(): Promise<void> {
    while (this.running.size) await Promise.all([...this.running.values()]);
  }

  /** The session as the pages see it. */
  view(): WorkshopView {
    const state = this.state();
    const now = this.now();
    const step = this.scenario.steps[state.stepIndex]!;
    return {
      sessionId: this.id,
      scenario: { id: this.scenario.id, title: this.scenario.title, summary: this.scenario.summary },
      mode: this.mode,
      version: state.version,
      now,
      attendeeUrl: this.attendeeUrl,
      attendees: { joined: this.attendees.size, cap: this.attendees.cap },
      steps: this.scenario.steps.map((s) => ({ id: s.id, title: s.title, ready: this.resultText(s.id) !== undefined, revealed: state.revealed.includes(s.id) })),
      step: this.stepView(step, state, now),
    };
  }

  private stepView(step: ScenarioStep, state: WorkshopState, now: number): WorkshopStepView {
    const result = this.result(step.id);
    const predictions = this.store.workshops.listPredictions(this.id, step.id);
    const revealed = state.revealed.includes(step.id);
    const problem = this.failed.get(step.id);
    const status = result ? 'ready' : this.running.has(step.id) ? 'running' : problem !== undefined ? 'failed' : 'missing';
    const view: WorkshopStepView = {
      index: state.stepIndex, id: step.id, title: step.title, text: step.text, prompt: step.question.prompt, choices: step.question.choices,
      seconds: step.seconds, startedAt: state.startedAt, secondsLeft: secondsLeft(state, step.seconds, now), status, predictions: predictions.length, revealed,
      ...(problem !== undefined && { problem }),
    };
    if (revealed && result) {
      const truth = step.question.choices.find((c) => c.id === result.truth);
      view.reveal = { result, truthLabel: truth?.label ?? result.truth, text: step.reveal, score: scorePredictions(step.question.choices.map((c) => c.id), predictions, result.truth) };
    }
    return view;
  }

  /**
   * An attendee's prediction for the current step (a later one replaces theirs).
   * Errors: WorkshopError `BAD_REQUEST` (another step, a choice not offered, a bad attendee id), `WRONG_PHASE` (already revealed).
   */
  submit(attendee: string, stepId: string, choice: string): { predictions: number } {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(attendee)) throw new WorkshopError('BAD_REQUEST', `attendee id must be 1-${MAX_ATTENDEE_ID} letters, digits, - or _`);
    if (this.attendees.wasRemoved(attendee)) throw new WorkshopError('NOT_ATTENDEE', `attendee ${attendee} was removed by the presenter`);
    const state = this.state();
    const step = this.scenario.steps[state.stepIndex]!;
    if (step.id !== stepId) throw new WorkshopError('BAD_REQUEST', `step "${stepId}" is not the current step (the room is on step ${state.stepIndex + 1}, "${step.id}")`);
    if (state.revealed.includes(step.id)) throw new WorkshopError('WRONG_PHASE', `step "${step.id}" is revealed: predictions are closed`);
    if (!step.question.choices.some((c) => c.id === choice)) throw new WorkshopError('BAD_REQUEST', `"${choice}" is not a choice of step "${step.id}" (choices: ${step.question.choices.map((c) => c.id).join(', ')})`);
    this.store.workshops.putPrediction(this.id, step.id, attendee, choice);
    return { predictions: this.store.workshops.listPredictions(this.id, step.id).length };
  }

  /** A new attendee joining from `address` (an identity the host binds to its holder). @throws WorkshopError `ROOM_FULL`. */
  join(address: string): AttendeeEntry {
    const entry = this.attendees.join(address);
    this.bump();
    return entry;
  }

  /** The presenter removes an attendee: their seat is freed, their predictions deleted, their later calls refused. @throws WorkshopError `NOT_ATTENDEE`. */
  removeAttendee(id: string): { removed: AttendeeEntry; predictionsDeleted: number } {
    const removed = this.attendees.remove(id);
    const predictionsDeleted = this.store.workshops.deleteAttendee(this.id, id);
    this.bump();
    return { removed, predictionsDeleted };
  }

  /** The presenter's controls (core/workshop/steps.ts `applyControl`); `reset` also deletes the room's predictions. */
  control(c: WorkshopControl): WorkshopView {
    const state = this.state();
    const next = applyControl(state, c, this.scenario.steps.map((s) => s.id), this.now(), (id) => this.resultText(id) !== undefined);
    if (c.action === 'reset') this.store.workshops.resetSession(this.id, { ...next });
    else this.store.workshops.saveState(this.id, { ...next });
    this.startIfLive();
    return this.view();
  }

  /** The experiments the session's steps wrote (recorded so far): the only ones an attendee may read. */
  experimentIds(): Set<string> {
    return new Set(this.scenario.steps.flatMap((s) => this.result(s.id)?.experimentIds ?? []));
  }

  /** Every step with its result (if any) and the room's predictions: what the report shows. */
  reportSteps(): Array<{ step: ScenarioStep; result?: StepResult; revealed: boolean; predictions: Array<{ choice: string }> }> {
    const state = this.state();
    return this.scenario.steps.map((step) => {
      const result = this.result(step.id);
      return { step, ...(result && { result }), revealed: state.revealed.includes(step.id), predictions: this.store.workshops.listPredictions(this.id, step.id) };
    });
  }
}
