import { agentKey } from './whoAndWhen.ts';
import type { AgentConfusion, AttributionRecord, AttributionScore, OfficialScore } from './types.ts';

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

/**
 * The official scorer's agent test (ag2ai/Agents_Failure_Attribution, `Automated_FA/evaluate.py`:
 * `actual_agent in pred['predicted_agent']`): the label as written (`label.rawAgent`, else
 * `label.agent`) is a case-sensitive substring of the predicted agent.
 */
export function agentCorrectOfficial(r: AttributionRecord): boolean {
  return r.prediction !== null && r.prediction.agent.includes(r.label.rawAgent ?? r.label.agent);
}

/**
 * The official scorer's step test (same file: `actual_step in pred['predicted_step']`): the
 * labelled step's decimal text is a substring of the predicted step's, so gold 1 matches a
 * predicted 10, 12 or 21. Looser than `stepCorrect` (integer equality).
 */
export function stepCorrectOfficial(r: AttributionRecord): boolean {
  return r.prediction !== null && String(r.prediction.step).includes(String(r.label.step));
}

/**
 * Agent and step accuracy as the official scorer counts them (`agentCorrectOfficial`,
 * `stepCorrectOfficial`), over all logs (an abstention is wrong; the official script divides by
 * every labelled file too) and over covered logs. Shapes as `scoreAttribution`.
 */
export function scoreOfficial(records: readonly AttributionRecord[]): OfficialScore {
  let covered = 0;
  let agentHits = 0;
  let stepHits = 0;
  for (const r of records) {
    if (!r.prediction) continue;
    covered++;
    if (agentCorrectOfficial(r)) agentHits++;
    if (stepCorrectOfficial(r)) stepHits++;
  }
  const logs = records.length;
  const frac = (hits: number) => ({ overAll: logs ? hits / logs : 0, overCovered: covered ? hits / covered : null });
  return { logs, covered, agentAccuracy: frac(agentHits), stepAccuracy: frac(stepHits) };
}
