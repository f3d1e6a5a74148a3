/**
 * The room's attendees as identities the host issues, never ids a request body names: each join
 * mints a fresh attendee id (`at-` + 12 random hex digits), up to the presenter's room cap; the
 * presenter can remove one (their predictions are deleted and they cannot call again). The host
 * (host/workshop.ts) binds an id to its holder with a signed cookie; this registry only keeps who
 * joined, when, from which address, and who was removed. In memory: a session lives as long as
 * its server.
 */
import { randomBytes } from 'node:crypto';
import { WorkshopError } from './scenario.ts';

/** One joined attendee, as the presenter sees them. */
export interface AttendeeEntry {
  id: string;
  /** Epoch ms of the join. */
  joinedAt: number;
  /** The network address the join came from (as the socket reports it). */
  address: string;
}

/** Largest room cap accepted (`--room-cap`). */
export const MAX_ROOM_CAP = 10_000;

/** Who joined a session (see the module comment). */
export class AttendeeRegistry {
  private readonly joined = new Map<string, AttendeeEntry>();
  private readonly removed = new Set<string>();

  /** `cap`: most attendees at once (1..MAX_ROOM_CAP). @throws WorkshopError `BAD_REQUEST` for another cap. */
  constructor(readonly cap: number, private readonly now: () => number = Date.now) {
    if (!Number.isInteger(cap) || cap < 1 || cap > MAX_ROOM_CAP) throw new WorkshopError('BAD_REQUEST', `the room cap must be an integer from 1 to ${MAX_ROOM_CAP} (got ${cap})`);
  }

  /** Mints a new attendee from `address`. @throws WorkshopError `ROOM_FULL` when `cap` attendees are in. */
  join(address: string): AttendeeEntry {
    if (this.joined.size >= this.cap) throw new WorkshopError('ROOM_FULL', `the room is full: ${this.cap} attendee(s) joined, the presenter's cap`);
    const entry: AttendeeEntry = { id: `at-${randomBytes(6).toString('hex')}`, joinedAt: this.now(), address };
    this.joined.set(entry.id, entry);
    return entry;
  }

  /** Whether `id` joined and was not removed. */
  has(id: string): boolean {
    return this.joined.has(id);
  }

  /** Whether the presenter removed `id`. */
  wasRemoved(id: string): boolean {
    return this.removed.has(id);
  }

  /** Removes `id` (its seat is freed). @throws WorkshopError `NOT_ATTENDEE` for an id that is not in the room. */
  remove(id: string): AttendeeEntry {
    const entry = this.joined.get(id);
    if (!entry) throw new WorkshopError('NOT_ATTENDEE', `no attendee ${id.slice(0, 80)} is in the room`);
    this.joined.delete(id);
    this.removed.add(id);
    return entry;
  }

  /** The attendees in the room, in order of joining. */
  list(): AttendeeEntry[] {
    return [...this.joined.values()];
  }

  get size(): number {
    return this.joined.size;
  }
}
