/**
 * The guard of the one `job` event (core/jobs `JobEvent`), without zod, so the sandboxed preload
 * and the renderer can check what arrives over IPC or SSE (jobs.ts re-exports it).
 */
import type { JobEvent } from '../jobs/kind.ts';

const STATUSES: readonly string[] = ['running', 'completed', 'cancelled', 'failed'];

/** Whether `value` is a well-formed `job` event (checked without zod, for the preload and the renderer). */
export function isJobEvent(value: unknown): value is JobEvent {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const e = value as Record<string, unknown>;
  const str = (v: unknown, max = 400) => typeof v === 'string' && v.length > 0 && v.length <= max;
  const count = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;
  const opt = (v: unknown, ok: (x: unknown) => boolean) => v === undefined || ok(v);
  return (
    e['type'] === 'job' && str(e['kind'], 100) && str(e['id']) && STATUSES.includes(e['status'] as string) &&
    opt(e['done'], count) && opt(e['total'], count) && opt(e['summary'], (v) => typeof v === 'string' && v.length <= 400) &&
    opt(e['message'], (v) => typeof v === 'string' && v.length <= 2000)
  );
}
