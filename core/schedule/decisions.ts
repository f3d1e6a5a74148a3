import type { EndpointDecision } from '../model/provider.ts';

/**
 * One line summing up an experiment's endpoint decisions per endpoint, in the order endpoints
 * first appear: `endpoint decisions: http://a/v1#m limit 32 -> 2 (5 decreases on 429/503, 3
 * increases); http://b/v1#m taken out 1x, back 1x`. Empty when there were none. Pure.
 */
export function describeDecisions(decisions: readonly EndpointDecision[], startLimits: ReadonlyMap<string, number> = new Map()): string {
  const by = new Map<string, EndpointDecision[]>();
  for (const d of decisions) by.set(d.endpoint, [...(by.get(d.endpoint) ?? []), d]);
  const parts: string[] = [];
  for (const [endpoint, ds] of by) {
    const n = (a: EndpointDecision['action']) => ds.filter((d) => d.action === a).length;
    const bits: string[] = [];
    const moved = ds.filter((d) => d.action === 'decrease' || d.action === 'increase');
    if (moved.length) {
      const from = startLimits.get(endpoint);
      bits.push(`limit ${from === undefined ? '' : `${from} -> `}${moved[moved.length - 1]!.limit} (${n('decrease')} decrease${n('decrease') === 1 ? '' : 's'} on 429/503, ${n('increase')} increase${n('increase') === 1 ? '' : 's'})`);
    }
    if (n('remove')) bits.push(`taken out ${n('remove')}x, back ${n('restore')}x`);
    parts.push(`${endpoint} ${bits.join(', ')}`);
  }
  return parts.length ? `endpoint decisions (docs/scale.md): ${parts.join('; ')}` : '';
}
