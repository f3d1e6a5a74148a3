import type { NodeEvent } from '../trace/index.ts';
import type { RunRecord } from '../results/index.ts';
import { StoreError } from './errors.ts';

/**
 * The enum checks of the trace tables, run in code before a row is written (in the write's
 * transaction): `runs.status`, `node_events.kind`, `status`, `failure_class`. They replace the
 * tables' CHECK constraints (schema.ts migration 5); the 0/1 columns need none, the codec writes
 * only 0 or 1. A bad value is `INVALID_RECORD`, naming the record and the column.
 */
const RUN_STATUS: ReadonlySet<string> = new Set<RunRecord['status']>(['completed', 'failed', 'cancelled']);
const NODE_KIND: ReadonlySet<string> = new Set<NodeEvent['kind']>(['agent', 'tool', 'skill']);
const NODE_STATUS: ReadonlySet<string> = new Set<NodeEvent['status']>(['ok', 'failed', 'cascade', 'skipped']);
const FAILURE_CLASS: ReadonlySet<string> = new Set<NonNullable<NodeEvent['failureClass']>>(['wiring', 'execution', 'cascade', 'infrastructure']);

/** Throws `INVALID_RECORD` unless `run.status` is a run status. */
export function checkRun(run: RunRecord): void {
  if (!RUN_STATUS.has(run.status)) bad(`run ${run.runId}`, 'status', run.status, RUN_STATUS);
}

/** Throws `INVALID_RECORD` unless the event's kind, status and failure class (when set) are known values. */
export function checkEvent(runId: string, e: NodeEvent): void {
  if (NODE_KIND.has(e.kind) && NODE_STATUS.has(e.status) && (e.failureClass == null || FAILURE_CLASS.has(e.failureClass))) return;
  const where = `run ${runId} node ${e.nodeId} attempt ${e.attempt} (seq ${e.seq})`;
  if (!NODE_KIND.has(e.kind)) bad(where, 'kind', e.kind, NODE_KIND);
  if (!NODE_STATUS.has(e.status)) bad(where, 'status', e.status, NODE_STATUS);
  bad(where, 'failureClass', e.failureClass, FAILURE_CLASS);
}

function bad(where: string, column: string, value: unknown, allowed: ReadonlySet<string>): never {
  throw new StoreError('INVALID_RECORD', `${where}: ${column} ${JSON.stringify(value) ?? String(value)} is not one of ${[...allowed].join(', ')}`, where);
}
