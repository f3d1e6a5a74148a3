/**
 * The one scheduler of work in flight: a global budget of slots (tasks, runs or judge calls in
 * flight at once, across everything this process runs) shared by lanes, one lane per experiment
 * (or study cell, or tournament) with its own width (its `--parallel`). When a slot frees, it goes
 * to the lane with work queued and the fewest slots held (ties: the lane after the one served
 * last, round robin), so experiments started together share the budget evenly whatever their
 * widths — "max-min fairness" of processor sharing (Bertsekas & Gallager, Data Networks, 6.5.2).
 *
 * The scheduler decides only *when* a piece of work starts, never what it computes: results are
 * committed in id order by {@link runOrdered}, so nothing stored depends on timing or on the
 * budget (docs/scale.md; STYLE.md item 18). Pure TypeScript, no I/O.
 */

/** One piece of queued work of a lane. */
interface Entry {
  start: () => void;
  skip: () => void;
}

interface LaneState {
  readonly label: string;
  /** The group whose budget it also counts against (a study's cells). */
  group?: GroupState;
  width: number;
  active: number;
  maxActive: number;
  queue: Entry[];
  closed: boolean;
}

interface GroupState {
  readonly name: string;
  capacity: number;
  active: number;
  members: Set<string>;
}

/**
 * A budget inside the global one for a set of lanes named in advance (a study's cell
 * experiments): together they hold at most `capacity` slots, shared by the same fairness rule, so
 * cells running at once each widen as the others end.
 */
export class Group {
  constructor(
    private readonly scheduler: Scheduler,
    private readonly state: GroupState,
  ) {}

  /** Lanes opened later under `label` (an experiment id) count against this group. */
  add(label: string): void {
    this.state.members.add(label);
  }

  /** Forgets the group: lanes opened later are not in it (lanes open now keep it until they close). */
  close(): void {
    this.scheduler.dropGroup(this.state);
  }
}

/** In-flight figures of a scheduler or a lane (for progress bars and the bench). */
export interface InFlightStats {
  /** Slots held now. */
  inFlight: number;
  /** The most slots held at once since creation. */
  maxInFlight: number;
}

/**
 * A lane's view of the scheduler: work submitted here runs when the lane is below its width and
 * the scheduler grants it a slot. Close it when done (queued work is skipped).
 */
export class Lane {
  constructor(
    private readonly scheduler: Scheduler,
    private readonly state: LaneState,
  ) {}

  /** The lane's label (the experiment id, a study cell, ...). */
  get label(): string {
    return this.state.label;
  }

  /** Most pieces of this lane's work in flight at once. */
  get width(): number {
    return this.state.width;
  }

  /** Slots this lane holds now and the most it held. */
  stats(): InFlightStats {
    return { inFlight: this.state.active, maxInFlight: this.state.maxActive };
  }

  /**
   * Runs `work` once a slot is granted and resolves with its result (rejects with its error); the
   * slot is held until `work` settles. Resolves `{ skipped: true }` when the lane is closed or
   * `dropQueued()` runs before a slot is granted (the work never starts).
   */
  submit<R>(work: () => Promise<R>): Promise<{ skipped: true } | { skipped: false; value: R }> {
    if (this.state.closed) return Promise.resolve({ skipped: true });
    return new Promise((resolve, reject) => {
      const entry: Entry = {
        start: () => {
          let p: Promise<R>;
          try {
            p = work();
          } catch (err) {
            p = Promise.reject(err);
          }
          p.then(
            (value) => {
              this.scheduler.release(this.state);
              resolve({ skipped: false, value });
            },
            (err: unknown) => {
              this.scheduler.release(this.state);
              reject(err);
            },
          );
        },
        skip: () => resolve({ skipped: true }),
      };
      this.state.queue.push(entry);
      this.scheduler.pump();
    });
  }

  /** Skips every piece of work queued and not started (each resolves `{ skipped: true }`). */
  dropQueued(): void {
    for (const e of this.state.queue.splice(0)) e.skip();
  }

  /** Drops queued work and leaves the scheduler; work in flight finishes and frees its slots. Idempotent. */
  close(): void {
    this.dropQueued();
    this.state.closed = true;
    this.scheduler.leave(this.state);
  }
}

/**
 * A global in-flight budget shared fairly by lanes. `capacity` (default {@link DEFAULT_CAPACITY})
 * bounds the slots held at once over all lanes; each lane is also bounded by its own width.
 */
export class Scheduler {
  private capacity: number;
  private active = 0;
  private maxActive = 0;
  private readonly lanes: LaneState[] = [];
  private readonly groups: GroupState[] = [];
  /** Index (in `lanes`) of the lane served last: ties go to the next one. */
  private last = -1;

  constructor(options: { capacity?: number } = {}) {
    this.capacity = checkWidth(options.capacity ?? DEFAULT_CAPACITY, 'capacity');
  }

  /** Sets the global budget (slots already held are kept; new grants wait below it). @throws RangeError for a non-positive or non-integer value. */
  setCapacity(capacity: number): void {
    this.capacity = checkWidth(capacity, 'capacity');
    this.pump();
  }

  /** The global budget. */
  get budget(): number {
    return this.capacity;
  }

  /** Slots held now over all lanes and the most held at once. */
  stats(): InFlightStats {
    return { inFlight: this.active, maxInFlight: this.maxActive };
  }

  /** Lanes open now, with their slots held (for progress views). */
  laneStats(): Array<{ label: string; width: number } & InFlightStats> {
    return this.lanes.map((l) => ({ label: l.label, width: l.width, inFlight: l.active, maxInFlight: l.maxActive }));
  }

  /**
   * A new lane of at most `width` pieces of work in flight (an experiment's `--parallel`).
   * @throws RangeError when `width` is not a positive integer.
   */
  lane(label: string, width: number): Lane {
    const state: LaneState = { label, width: checkWidth(width, 'width'), active: 0, maxActive: 0, queue: [], closed: false };
    const group = this.groups.find((g) => g.members.has(label));
    if (group) state.group = group;
    this.lanes.push(state);
    return new Lane(this, state);
  }

  /**
   * A group budget of `capacity` slots for the lanes later opened under the labels `add`ed to it.
   * @throws RangeError when `capacity` is not a positive integer.
   */
  group(name: string, capacity: number): Group {
    const state: GroupState = { name, capacity: checkWidth(capacity, 'group capacity'), active: 0, members: new Set() };
    this.groups.push(state);
    return new Group(this, state);
  }

  /** @internal */
  dropGroup(g: GroupState): void {
    const i = this.groups.indexOf(g);
    if (i >= 0) this.groups.splice(i, 1);
  }

  /** @internal A lane's slot freed. */
  release(lane: LaneState): void {
    if (lane.group) lane.group.active--;
    lane.active--;
    this.active--;
    this.pump();
  }

  /** @internal A lane closed. */
  leave(lane: LaneState): void {
    const i = this.lanes.indexOf(lane);
    if (i < 0) return;
    this.lanes.splice(i, 1);
    if (this.last >= i) this.last--;
  }

  /** @internal Grants free slots: to the eligible lane holding the fewest, ties round robin after the last served. */
  pump(): void {
    while (this.active < this.capacity) {
      const n = this.lanes.length;
      let pick = -1;
      for (let k = 1; k <= n; k++) {
        const i = (this.last + k + n) % n;
        const l = this.lanes[i]!;
        if (l.queue.length === 0 || l.active >= l.width || (l.group && l.group.active >= l.group.capacity)) continue;
        if (pick < 0 || l.active < this.lanes[pick]!.active) pick = i;
      }
      if (pick < 0) return;
      const lane = this.lanes[pick]!;
      this.last = pick;
      lane.active++;
      if (lane.group) lane.group.active++;
      lane.maxActive = Math.max(lane.maxActive, lane.active);
      this.active++;
      this.maxActive = Math.max(this.maxActive, this.active);
      lane.queue.shift()!.start();
    }
  }
}

/** The process-wide budget when nothing sets one: 256 pieces of work in flight. */
export const DEFAULT_CAPACITY = 256;

function checkWidth(n: number, what: string): number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`scheduler ${what} must be a positive integer (got ${n})`);
  return n;
}

let shared: Scheduler | undefined;

/**
 * The scheduler every command and the lab share in this process (one global budget, fair across
 * the experiments started together). The lab host and the CLI may lower its budget with
 * `setCapacity`; tests make their own `new Scheduler()`.
 */
export function processScheduler(): Scheduler {
  return (shared ??= new Scheduler());
}
