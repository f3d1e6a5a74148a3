/**
 * The attendee token of a workshop (`flowlab workshop`): an allow-list of exactly the workshop
 * methods an attendee needs — the session's state, joining, submitting a prediction, and reading
 * the workshop's own experiments (their summary, runs and traces). Every other method is refused
 * (403 FORBIDDEN) before it runs, as is the event stream (host/server.ts `guests`); reads of an
 * experiment or run the workshop did not write are refused too.
 *
 * Everyone in the room holds the same attendee token (it is in the QR code), so the token says
 * nothing about who is calling. Identity comes from `joinWorkshop`: the session mints an attendee
 * id (core/workshop/attendees.ts, within the presenter's room cap) and the answer sets it as an
 * HMAC-SHA-256-signed cookie (`flowlab_attendee=<id>.<mac>`, HttpOnly, SameSite=Strict; key random
 * per server, RFC 2104). A prediction counts for the cookie's identity: the `attendee` field of
 * the body is replaced by it, so made-up ids count as the caller. Calls are rate-limited per
 * network address and per attendee (token buckets, host/rateLimit.ts; 429 with `Retry-After`),
 * joins per address more tightly; the presenter's token is never limited.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ApiError, type ApiMethod } from '../core/api/index.ts';
import type { Store } from '../core/store/index.ts';
import { RateLimiter, type RateShape } from './rateLimit.ts';
import type { GuestAdmission, GuestRequest } from './server.ts';

/** The methods an attendee token may call. */
export const ATTENDEE_METHODS: readonly ApiMethod[] = ['getWorkshop', 'joinWorkshop', 'submitPrediction', 'getExperiment', 'listRuns', 'getRunTrace'];

/** The attendee identity cookie's name. */
export const ATTENDEE_COOKIE = 'flowlab_attendee';

/** What the guard needs of the session: the experiments its steps wrote so far, and its attendees. */
export interface WorkshopExperiments {
  experimentIds(): Set<string>;
  /** Mints an attendee joining from `address`. @throws an error the API maps to 403 when the room is full. */
  join(address: string): { id: string };
  attendees: { has(id: string): boolean; wasRemoved(id: string): boolean };
}

/** Rate limits of attendee calls (token buckets). */
export interface AttendeeLimits {
  /** Every call of one attendee. Default burst 20, 2 per second. */
  perAttendee: RateShape;
  /** Every call from one network address (several phones may share one). Default burst 120, 20 per second. */
  perAddress: RateShape;
  /** Joins from one network address. Default burst 10, one per 6 seconds. */
  joinsPerAddress: RateShape;
}

/** The default limits: a phone polling every 2 s and tapping a choice stays far below them. */
export const DEFAULT_ATTENDEE_LIMITS: AttendeeLimits = {
  perAttendee: { burst: 20, perSecond: 2 },
  perAddress: { burst: 120, perSecond: 20 },
  joinsPerAddress: { burst: 10, perSecond: 1 / 6 },
};

/** An ApiError `RATE_LIMITED` with the seconds to wait (the server sends them as `Retry-After`). */
export class RateLimitedError extends ApiError {
  constructor(message: string, method: string, readonly retryAfter: number) {
    super('RATE_LIMITED', message, method);
  }
}

const field = (payload: unknown, key: string): unknown => (payload !== null && typeof payload === 'object' ? (payload as Record<string, unknown>)[key] : undefined);

/**
 * The attendee token's check, for `startLabServer({ guests: [{ token, allow }] })`: the allow-list,
 * the workshop's own experiments, identity by signed cookie and the rate limits (module comment).
 * Throws ApiError `FORBIDDEN` (off the list, another experiment, no identity, removed, room full)
 * or {@link RateLimitedError}; a payload it cannot read is left to the method's own validation.
 */
export function attendeeAllow(session: WorkshopExperiments, store: Store, opts: { limits?: Partial<AttendeeLimits>; now?: () => number } = {}): (method: ApiMethod, payload: unknown, request: GuestRequest) => GuestAdmission | void {
  const limits = { ...DEFAULT_ATTENDEE_LIMITS, ...opts.limits };
  const now = opts.now ?? Date.now;
  const byAttendee = new RateLimiter(limits.perAttendee, now);
  const byAddress = new RateLimiter(limits.perAddress, now);
  const joins = new RateLimiter(limits.joinsPerAddress, now);
  const key = randomBytes(32);
  const mac = (id: string) => createHmac('sha256', key).update(id).digest('base64url');
  const cookieFor = (id: string) => `${ATTENDEE_COOKIE}=${id}.${mac(id)}; Path=/api; HttpOnly; SameSite=Strict`;
  const identity = (cookie: string | undefined): string | undefined => {
    const raw = cookie?.split(';').map((c) => c.trim()).find((c) => c.startsWith(`${ATTENDEE_COOKIE}=`))?.slice(ATTENDEE_COOKIE.length + 1);
    const dot = raw?.lastIndexOf('.') ?? -1;
    if (!raw || dot < 1) return undefined;
    const id = raw.slice(0, dot);
    const given = Buffer.from(raw.slice(dot + 1));
    const want = Buffer.from(mac(id));
    return given.length === want.length && timingSafeEqual(given, want) ? id : undefined;
  };
  const limit = (limiter: RateLimiter, k: string, what: string, method: string) => {
    const wait = limiter.take(k);
    if (wait > 0) throw new RateLimitedError(`${method}: too many calls ${what}; try again in ${wait} s`, method, wait);
  };

  return (method, payload, request) => {
    if (!ATTENDEE_METHODS.includes(method)) throw new ApiError('FORBIDDEN', `${method}: the attendee token may only follow the workshop and submit predictions`, method);
    limit(byAddress, request.address, `from ${request.address}`, method);
    const me = identity(request.cookie);
    if (me !== undefined && session.attendees.wasRemoved(me)) throw new ApiError('FORBIDDEN', `${method}: the presenter removed you from the room`, method);
    const joined = me !== undefined && session.attendees.has(me) ? me : undefined;
    if (joined) limit(byAttendee, joined, 'from you', method);

    if (method === 'joinWorkshop') {
      if (joined) return { payload: { attendee: joined } };
      limit(joins, request.address, `joining from ${request.address}`, method);
      const { id } = session.join(request.address);
      return { payload: { attendee: id }, setCookie: cookieFor(id) };
    }
    if (method === 'submitPrediction') {
      if (!joined) throw new ApiError('FORBIDDEN', `${method}: join the workshop first (joinWorkshop): predictions count per joined attendee`, method);
      const body = payload !== null && typeof payload === 'object' && !Array.isArray(payload) ? (payload as Record<string, unknown>) : {};
      return { payload: { ...body, attendee: joined } };
    }
    const own = (experimentId: unknown, what: string) => {
      if (typeof experimentId === 'string' && !session.experimentIds().has(experimentId)) {
        throw new ApiError('FORBIDDEN', `${method}: ${what} is not one of this workshop's experiments`, method);
      }
    };
    if (method === 'getExperiment') own(field(payload, 'id'), `experiment ${String(field(payload, 'id')).slice(0, 100)}`);
    if (method === 'listRuns') own(field(payload, 'experimentId'), `experiment ${String(field(payload, 'experimentId')).slice(0, 100)}`);
    if (method === 'getRunTrace') {
      const runId = field(payload, 'runId');
      if (typeof runId !== 'string') return;
      let experimentId: string | undefined;
      try {
        experimentId = store.getRun(runId).experimentId;
      } catch {
        experimentId = undefined;
      }
      if (experimentId === undefined || !session.experimentIds().has(experimentId)) throw new ApiError('FORBIDDEN', `${method}: run ${runId.slice(0, 100)} is not one of this workshop's runs`, method);
    }
  };
}
