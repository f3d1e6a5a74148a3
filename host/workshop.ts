/**
 * The attendee token of a workshop (`flowlab workshop`): an allow-list of exactly the workshop
 * methods an attendee needs — the session's state, submitting a prediction, and reading the
 * workshop's own experiments (their summary, runs and traces). Every other method is refused
 * (403 FORBIDDEN) before it runs, as is the event stream (host/server.ts `guests`); reads of an
 * experiment or run the workshop did not write are refused too.
 */
import { ApiError, type ApiMethod } from '../core/api/index.ts';
import type { Store } from '../core/store/index.ts';

/** The methods an attendee token may call. */
export const ATTENDEE_METHODS: readonly ApiMethod[] = ['getWorkshop', 'submitPrediction', 'getExperiment', 'listRuns', 'getRunTrace'];

/** What the guard needs of the session: the experiments its steps wrote so far. */
export interface WorkshopExperiments {
  experimentIds(): Set<string>;
}

const field = (payload: unknown, key: string): unknown => (payload !== null && typeof payload === 'object' ? (payload as Record<string, unknown>)[key] : undefined);

/**
 * The attendee token's check, for `startLabServer({ guests: [{ token, allow }] })`.
 * Throws ApiError `FORBIDDEN` for a method off the list, or an experiment (or a run of one) that
 * is not the workshop's; a payload it cannot read is left to the method's own validation.
 */
export function attendeeAllow(session: WorkshopExperiments, store: Store): (method: ApiMethod, payload: unknown) => void {
  return (method, payload) => {
    if (!ATTENDEE_METHODS.includes(method)) throw new ApiError('FORBIDDEN', `${method}: the attendee token may only follow the workshop and submit predictions`, method);
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
