/**
 * One background job a slice starts and follows through the host's pushed events: the MASS
 * tab's job (store/mass.ts) and the Studies view's (store/studies.ts). The host sends the job's
 * `running` event, and maybe a first progress line, before its start answers, so events of a job
 * not known yet are kept (the latest EARLY_EVENTS) and folded in once the start answers with the
 * job's id; after that each event of the job is folded into it, and `onEnd` runs once when it ends.
 */

/** Events of a job whose start has not answered yet, kept at most. */
export const EARLY_EVENTS = 500;

/** A job as a view shows it: the latest progress lines and the count. */
export interface FollowedJob {
  lines: string[];
  done?: number;
  total?: number;
}

/** `job` with one progress event folded in: its line appended (the latest `keep` kept), its count taken. */
export function withProgress<J extends FollowedJob>(job: J, e: { line: string; done?: number; total?: number }, keep: number): J {
  return { ...job, lines: [...job.lines, e.line].slice(-keep), ...(e.done !== undefined && { done: e.done }), ...(e.total !== undefined && { total: e.total }) };
}

/** What {@link followJob} needs of the slice. */
export interface JobFollowOptions<J, E> {
  /** The job an event belongs to, and a job's id. */
  idOfEvent(e: E): string;
  idOfJob(job: J): string;
  fold(job: J, e: E): J;
  ended(job: J): boolean;
  /** The followed job in the slice's state (null: none). */
  get(): J | null;
  set(job: J): void;
  /** Runs once when the followed job ends (reload the lists it changed). */
  onEnd(job: J): Promise<void>;
}

/** Follows the slice's job (see the module comment). */
export function followJob<J, E>(o: JobFollowOptions<J, E>): {
  /** Forgets the kept events (a new start is under way). */
  reset(): void;
  /** The job a start answered with, the events that came before the answer folded in. */
  started(job: J): J;
  /** Takes a pushed event of a job. */
  receive(e: E): void;
} {
  const early: E[] = [];
  return {
    reset() {
      early.length = 0;
    },
    started(job) {
      let j = job;
      for (const e of early.splice(0)) if (o.idOfEvent(e) === o.idOfJob(j)) j = o.fold(j, e);
      return j;
    },
    receive(e) {
      const job = o.get();
      if (!job || o.idOfJob(job) !== o.idOfEvent(e)) {
        early.push(e);
        if (early.length > EARLY_EVENTS) early.shift();
        return;
      }
      const next = o.fold(job, e);
      o.set(next);
      if (o.ended(next) && !o.ended(job)) void o.onEnd(next);
    },
  };
}
