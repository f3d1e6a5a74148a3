/**
 * A link to one run's trace in the lab (pure): `#/trace/<experiment id>/<run id>`, each part
 * URI-encoded (run ids hold a `/`: `<experiment-id>/<task-index>`). The lab opens the Trace view
 * at that run when it starts on such a hash (App.tsx); the workshop's reveal links the runs a step
 * wrote this way (it could not open their traces).
 */

const PREFIX = '#/trace/';

/** The hash that opens `runId` of `experimentId` in the Trace view. */
export function traceHash(experimentId: string, runId: string): string {
  return `${PREFIX}${encodeURIComponent(experimentId)}/${encodeURIComponent(runId)}`;
}

/** The run a `#/trace/<experiment>/<run>` hash names; null for any other hash or a malformed one. */
export function traceRoute(hash: string): { experimentId: string; runId: string } | null {
  if (!hash.startsWith(PREFIX)) return null;
  const parts = hash.slice(PREFIX.length).split('/');
  if (parts.length !== 2 || !parts[0] || !parts[1]) return null;
  try {
    return { experimentId: decodeURIComponent(parts[0]), runId: decodeURIComponent(parts[1]) };
  } catch {
    return null; // a malformed escape (%E0%A4%A)
  }
}
