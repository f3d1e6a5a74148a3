/**
 * The endpoints of one model reference: each with a concurrency limit (a slot per request in
 * flight, FIFO waiting beyond it), and calls spread by least outstanding requests (in flight plus
 * waiting), ties to the endpoint listed first — the "least outstanding requests" rule of load
 * balancers (e.g. AWS Application Load Balancer's `least_outstanding_requests` algorithm).
 *
 * Backpressure and failover (issue 26; docs/scale.md):
 * - An endpoint's limit starts at its `concurrency` and follows AIMD, TCP's congestion rule
 *   (Chiu & Jain 1989; RFC 5681's additive increase, multiplicative decrease): a 429 or 503 halves
 *   it (at least 1) — once per round, i.e. only for a request sent after the last decrease, so a
 *   burst of refusals counts once — and each answered call adds 1/limit, so it climbs back by one
 *   per limit's worth of answers, never above `concurrency`.
 * - A call goes to an endpoint with a free slot under its limit (the fewest in flight; ties to the
 *   first listed); when every one is full it waits on the one least loaded for its limit.
 * - Waiting calls are granted least attained service first (Rai, Urvoy-Keller & Biersack, "Analysis
 *   of LAS scheduling for job size distributions with high variance", SIGMETRICS 2003): the call
 *   of the task that has started the fewest calls on this pool so far goes first, ties in arrival
 *   order. With more tasks in flight than slots (core/schedule defaults.ts TASKS_PER_SLOT) a task
 *   that has just started is not queued behind the later calls of older tasks, so the last tasks
 *   of an experiment do not finish alone on an idle server (the tail); a plain FIFO keeps tasks
 *   that started together in step to the end. Only *when* a call starts depends on it, never what
 *   it returns.
 * - An endpoint that cannot be reached (refused, reset, timed out) is taken out: no call goes to
 *   it for 1 s, doubled on each further failure up to 30 s (a circuit breaker, Nygard, "Release
 *   It!", 2007); its waiting calls move to the others. After the pause it takes one call (the
 *   probe); an answer puts it back. When every endpoint is out, calls wait for the first to be
 *   tried again.
 * Every decision is handed to `onDecision` (the provider keeps them for the experiment).
 */
import { endpointId, ModelError, type EndpointDecision, type EndpointSpec } from '../../core/model/index.ts';

/** How a call on a slot ended, as the pool's rules see it. */
export type CallOutcome = 'ok' | 'overloaded' | 'unreachable' | 'failed';

interface Waiter {
  grant: (slot: Slot) => void;
  cancel: (e: Error) => void;
  /** Calls its task had started on this pool when it came (the LAS rank), then its arrival number. */
  rank: number;
  seq: number;
}

/** The task counts kept for the LAS rank are dropped past this many tasks (a long-lived pool; the rank is only an order hint). */
const MAX_TASKS_TRACKED = 100_000;

/** One endpoint's state. */
interface Slot {
  spec: EndpointSpec;
  id: string;
  active: number;
  waiting: Waiter[];
  /** AIMD limit, 1..spec.concurrency (fractional between steps). */
  limit: number;
  /** Bumped on each decrease: a refusal of a request sent before it does not halve again. */
  round: number;
  /** Epoch ms until which it is out (0: in). */
  outUntil: number;
  /** Consecutive unreachable calls. */
  failures: number;
}

/** A slot held on one endpoint; `release(outcome)` it when the request ends (idempotent; no outcome: neutral). */
export interface Lease {
  spec: EndpointSpec;
  release(outcome?: CallOutcome, reason?: string): void;
}

/** Options of {@link EndpointPool}. */
export interface PoolOptions {
  /** Receives each decision as it is taken. */
  onDecision?: (d: EndpointDecision) => void;
  /** Epoch ms (tests). */
  now?: () => number;
  /** First pause of an unreachable endpoint, ms (default 1,000; doubled per failure). */
  outMs?: number;
  /** Longest pause, ms (default 30,000). */
  maxOutMs?: number;
}

export class EndpointPool {
  private readonly slots: Slot[];
  private readonly now: () => number;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Calls started per task (LAS rank); cleared when the pool is idle. */
  private readonly attained = new Map<string, number>();
  private arrivals = 0;

  constructor(specs: readonly EndpointSpec[], private readonly options: PoolOptions = {}) {
    this.slots = specs.map((spec) => ({ spec, id: endpointId(spec), active: 0, waiting: [], limit: spec.concurrency, round: 0, outUntil: 0, failures: 0 }));
    this.now = options.now ?? Date.now;
  }

  /** Requests outstanding (in flight + waiting) per endpoint, in the order given. */
  outstanding(): number[] {
    return this.slots.map((s) => s.active + s.waiting.length);
  }

  /** Each endpoint's current limit (whole calls) and whether it is out, in the order given. */
  limits(): Array<{ endpoint: string; limit: number; out: boolean }> {
    const now = this.now();
    return this.slots.map((s) => ({ endpoint: s.id, limit: this.capacity(s, now), out: s.outUntil > now }));
  }

  /** Whether an endpoint other than `spec` is in now (a retry can go there without waiting). */
  hasOther(spec: EndpointSpec): boolean {
    const now = this.now();
    return this.slots.some((s) => s.spec !== spec && s.outUntil <= now);
  }

  /** Calls a slot may hold now: 0 while out, 1 for the probe after, else its AIMD limit. */
  private capacity(s: Slot, now: number): number {
    if (s.outUntil > now) return 0;
    if (s.failures > 0) return 1;
    return Math.max(1, Math.floor(s.limit));
  }

  /**
   * A slot on the endpoint chosen by the rules above (`avoid`: an endpoint to pass over while
   * another is in — a retry after a refusal goes elsewhere), waiting while every one is full.
   * `task` (the call's task key) ranks it among waiting calls (least attained service first);
   * without one it ranks as a task's first call.
   * @throws ModelError `ABORTED` when `signal` aborts while waiting.
   */
  acquire(signal: AbortSignal | undefined, ref: string, avoid?: EndpointSpec, task?: string): Promise<Lease> {
    const now = this.now();
    const inSlots = this.slots.filter((s) => s.outUntil <= now);
    const preferred = inSlots.length > 1 && avoid ? inSlots.filter((s) => s.spec !== avoid) : inSlots;
    let free: Slot | undefined;
    for (const s of preferred) if (s.active < this.capacity(s, now) && s.waiting.length === 0 && (!free || s.active < free.active)) free = s;
    if (free) return Promise.resolve(this.lease(free, task));
    const queue = this.queueFor(preferred.length ? preferred : this.slots, now);
    return new Promise<Lease>((resolve, reject) => {
      const onAbort = () => entry.cancel(new ModelError('ABORTED', `call (ref "${ref}") was aborted while waiting for ${queue.spec.baseUrl}`, ref, { cause: signal?.reason }));
      const entry: Waiter = {
        rank: task === undefined ? 0 : (this.attained.get(task) ?? 0),
        seq: this.arrivals++,
        grant: (slot) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.lease(slot, task));
        },
        cancel: (e: Error) => {
          signal?.removeEventListener('abort', onAbort);
          for (const s of this.slots) {
            const i = s.waiting.indexOf(entry);
            if (i >= 0) s.waiting.splice(i, 1);
          }
          reject(e);
        },
      };
      queue.waiting.push(entry);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.wakeAt();
    });
  }

  /** The slot to wait on: the one least loaded for its limit (outstanding / limit), ties to the first; when all are out, the first back. */
  private queueFor(candidates: Slot[], now: number): Slot {
    const live = candidates.filter((s) => s.outUntil <= now);
    if (live.length === 0) return candidates.reduce((a, b) => (b.outUntil < a.outUntil ? b : a));
    let best = live[0]!;
    const load = (s: Slot) => (s.active + s.waiting.length) / Math.max(1, this.capacity(s, now));
    for (const s of live) if (load(s) < load(best)) best = s;
    return best;
  }

  private lease(slot: Slot, task: string | undefined): Lease {
    slot.active++;
    if (task !== undefined) {
      if (this.attained.size >= MAX_TASKS_TRACKED && !this.attained.has(task)) this.attained.clear();
      this.attained.set(task, (this.attained.get(task) ?? 0) + 1);
    }
    const round = slot.round;
    let held = true;
    return {
      spec: slot.spec,
      release: (outcome, reason) => {
        if (!held) return;
        held = false;
        slot.active--;
        if (outcome) this.learn(slot, outcome, round, reason ?? outcome);
        this.pump();
        if (this.slots.every((s) => s.active === 0 && s.waiting.length === 0)) this.attained.clear();
      },
    };
  }

  /** The rules of the module comment, for one call's outcome. */
  private learn(s: Slot, outcome: CallOutcome, round: number, reason: string): void {
    const now = this.now();
    const max = s.spec.concurrency;
    if (outcome === 'ok') {
      if (s.failures > 0) {
        s.failures = 0;
        s.outUntil = 0;
        this.decide({ at: now, endpoint: s.id, action: 'restore', limit: this.capacity(s, now), reason: 'answered again' });
      }
      if (s.limit < max) {
        const before = Math.floor(s.limit);
        s.limit = Math.min(max, s.limit + 1 / s.limit);
        if (Math.floor(s.limit) > before) this.decide({ at: now, endpoint: s.id, action: 'increase', limit: Math.floor(s.limit), reason: 'answered' });
      }
    } else if (outcome === 'overloaded') {
      if (round !== s.round) return; // sent before the last decrease: that round is counted
      s.round++;
      const to = Math.max(1, Math.floor(s.limit / 2));
      if (to === Math.floor(s.limit) && s.limit <= 1) return; // at the floor already
      s.limit = to;
      this.decide({ at: now, endpoint: s.id, action: 'decrease', limit: to, reason });
    } else if (outcome === 'unreachable') {
      s.failures++;
      const pause = Math.min(this.options.maxOutMs ?? 30_000, (this.options.outMs ?? 1_000) * 2 ** (s.failures - 1));
      s.outUntil = now + pause;
      this.decide({ at: now, endpoint: s.id, action: 'remove', limit: 0, reason, retryAt: s.outUntil });
      // Its waiting calls go to the endpoints still in (or stay, when none is).
      const moved = s.waiting.splice(0);
      for (const w of moved) this.queueFor(this.slots.filter((x) => x !== s), now).waiting.push(w);
      this.wakeAt();
    }
  }

  private decide(d: EndpointDecision): void {
    this.options.onDecision?.(d);
  }

  /** Grants waiting calls where slots are free; a call waiting on an endpoint that is out moves to a free one. */
  private pump(): void {
    const now = this.now();
    for (const s of this.slots) {
      while (s.waiting.length && s.active < this.capacity(s, now)) takeFirst(s.waiting).grant(s);
    }
    // Calls queued on a full endpoint while another has room (its limit grew, or one came back): move them.
    for (const s of this.slots) {
      while (s.waiting.length) {
        const free = this.slots.find((x) => x.waiting.length === 0 && x.active < this.capacity(x, now));
        if (!free) break;
        takeFirst(s.waiting).grant(free);
      }
    }
  }

  /** Wakes the pool when the first endpoint that is out may take its probe, while calls wait. */
  private wakeAt(): void {
    if (this.timer) return;
    const now = this.now();
    const waiting = this.slots.some((s) => s.waiting.length);
    const next = Math.min(...this.slots.filter((s) => s.outUntil > now).map((s) => s.outUntil));
    if (!waiting || !Number.isFinite(next)) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.pump();
      this.wakeAt();
    }, next - now);
  }

  /** Rejects every waiting request with `error` (dispose). */
  cancelWaiting(error: Error): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const s of this.slots) for (const w of [...s.waiting]) w.cancel(error);
  }
}

/** Removes and returns the waiter to grant first: the least attained service (`rank`), ties in arrival order. `queue` is not empty. */
function takeFirst(queue: Waiter[]): Waiter {
  let best = 0;
  for (let i = 1; i < queue.length; i++) {
    const w = queue[i]!;
    const b = queue[best]!;
    if (w.rank < b.rank || (w.rank === b.rank && w.seq < b.seq)) best = i;
  }
  return queue.splice(best, 1)[0]!;
}
