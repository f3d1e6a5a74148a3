import { createHash, randomInt } from 'node:crypto';
import { asExperimentId, type ExperimentId } from '../ids.ts';

/**
 * A new readable, sortable experiment id: `exp-<yyyymmdd>-<hhmmss>-<4 base36>` in UTC,
 * e.g. `exp-20250314-092653-k3x9`. Ids sort by creation second; the suffix separates
 * experiments created in the same second (1 in 1.68 million collision chance per pair).
 */
export function newExperimentId(now: Date = new Date()): ExperimentId {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const date = `${p(now.getUTCFullYear(), 4)}${p(now.getUTCMonth() + 1)}${p(now.getUTCDate())}`;
  const time = `${p(now.getUTCHours())}${p(now.getUTCMinutes())}${p(now.getUTCSeconds())}`;
  const suffix = randomInt(36 ** 4).toString(36).padStart(4, '0');
  return asExperimentId(`exp-${date}-${time}-${suffix}`);
}

/** The sha256 of a workflow's YAML text (UTF-8), as 64 lowercase hex characters. */
export function computeWorkflowHash(yaml: string): string {
  return createHash('sha256').update(yaml, 'utf8').digest('hex');
}
