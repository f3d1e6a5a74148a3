import { agentKey } from './whoAndWhen.ts';
import type { AgentConfusion, AttributionRecord, AttributionScore } from './types.ts';

/** The `predictedAs` key of logs without a prediction. */
export const NO_PREDICTION = '(none)';

/** True when the prediction names the labelled agent (compared with `agentKey`: normalised, case-insensitive). */
export function agentCorrect(r: AttributionRecord): boolean {
  return r.prediction !== null && agentKey(r.prediction.agent) === agentKey(r.label.agent);
}

/** True when the prediction names the labelled step (`Number(mistake_step)`). The agent need not match. */
export function stepCorrect(r: AttributionRecord): boolean {
  return r.prediction !== null && r.prediction.step === r.label.step;
}

/**
 * Scores attribution records the way the Who&When paper does (Zhang et al., ICML 2025): agent-level
 * accuracy (predicted agent = `mistake_agent`) and step-level accuracy (predicted step =
 * `mistake_step`), each independently. Because our methods may abstain, each is reported over all
 * logs (an abstention counts as wrong) and over the covered logs (those with a prediction).
 *
 * @returns `{logs, covered, agentAccuracy: {overAll, overCovered}, stepAccuracy: {overAll, overCovered},
 *   perAgent}`: fractions in 0..1; `overAll` is 0 with no logs; `overCovered` is null when nothing is
 *   covered. `perAgent` groups logs by labelled agent (its first spelling seen) with what they were
 *   predicted as.
 */
export function scoreAttribution(records: readonly AttributionRecord[]): AttributionScore {
  let covered = 0;
  let agentHits = 0;
  let stepHits = 0;
  const byAgent = new Map<string, AgentConfusion>();
  for (const r of records) {
    const key = agentKey(r.label.agent);
    let c = byAgent.get(key);
    if (!c) byAgent.set(key, (c = { agent: r.label.agent, labelled: 0, covered: 0, agentCorrect: 0, stepCorrect: 0, predictedAs: {} }));
    c.labelled++;
    const as = r.prediction ? r.prediction.agent : NO_PREDICTION;
    c.predictedAs[as] = (c.predictedAs[as] ?? 0) + 1;
    if (!r.prediction) continue;
    covered++;
    c.covered++;
    if (agentCorrect(r)) {
      agentHits++;
      c.agentCorrect++;
    }
    if (stepCorrect(r)) {
      stepHits++;
      c.stepCorrect++;
    }
  }
  const logs = records.length;
  const frac = (hits: number) => ({ overAll: logs ? hits / logs : 0, overCovered: covered ? hits / covered : null });
  const perAgent = [...byAgent.values()].sort((a, b) => b.labelled - a.labelled || a.agent.localeCompare(b.agent));
  return { logs, covered, agentAccuracy: frac(agentHits), stepAccuracy: frac(stepHits), perAgent };
}
