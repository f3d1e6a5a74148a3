/**
 * Label-free priors and the `hybrid` method on Who&When logs (Zhang et al., ICML 2025): what a
 * method must beat. On the Hand-Crafted logs most decisive mistakes are made by the first worker
 * agent to act (a web or file surfer that misreads the task or the page), so "the first message
 * of a worker agent" is a strong prior; "always the most often blamed agent" is the majority-class
 * baseline. `hybrid` is structure first (`attributeSurfaced` with team authorship and the crash
 * rule) and this prior where structure sees no failure.
 */
import { isTerminalAgent, type AuthorshipOptions } from './authorship.ts';
import { attributeSurfaced, type SurfacingOptions } from './surfaced.ts';
import { agentKey, isHumanStep } from './whoAndWhen.ts';
import type { AttributionRecord, Prediction, WhoAndWhenLog } from './types.ts';

/** The structural part of `hybrid` (and the `structural` method): team authorship, a harness crash as the speaker's execution failure. */
export const STRUCTURAL_OPTIONS: Readonly<SurfacingOptions> = { authorship: 'team', harnessCrash: 'execution' };

/** The orchestrators of a log: agents named `Orchestrator` (any case) and every speaker that issues `(-> X)` instructions. */
export function orchestratorsOf(log: Pick<WhoAndWhenLog, 'steps'>): Set<string> {
  const out = new Set<string>(['orchestrator']);
  for (const s of log.steps) if (/\(\s*->/.test(s.rawAgent)) out.add(agentKey(s.agent));
  return out;
}

/**
 * The first-worker prior: the first message of a worker agent — any speaker but the human, an
 * orchestrator (`orchestratorsOf`) and a terminal (`opts.isTerminal`). Agent = its speaker,
 * step = its index; null when no worker speaks. Reads no label.
 */
export function firstWorkerPrediction(log: WhoAndWhenLog, opts: AuthorshipOptions = {}): Prediction | null {
  const isTerminal = opts.isTerminal ?? isTerminalAgent;
  const orchestrators = orchestratorsOf(log);
  for (const s of log.steps) {
    if (isHumanStep(s) || isTerminal(s.agent) || orchestrators.has(agentKey(s.agent))) continue;
    return { agent: s.agent, step: s.index };
  }
  return null;
}

/**
 * The majority class: the agent most often named by `mistake_agent` over `logs` (normalised,
 * case-insensitive; ties to the name first seen), with its first spelling. Unscorable logs are
 * not counted. This reads the labels of the set (as any majority-class baseline reads its
 * training labels); it names one agent for every log. Null for no scorable log.
 */
export function majorityAgent(logs: readonly WhoAndWhenLog[]): string | null {
  const counts = new Map<string, { agent: string; n: number }>();
  for (const l of logs) {
    if (l.unscorable !== undefined || !l.label.agent) continue;
    const k = agentKey(l.label.agent);
    const c = counts.get(k);
    if (c) c.n++;
    else counts.set(k, { agent: l.label.agent, n: 1 });
  }
  let best: { agent: string; n: number } | null = null;
  for (const c of counts.values()) if (!best || c.n > best.n) best = c;
  return best?.agent ?? null;
}

/** `agent` at its first message in the log; null when it never speaks (the step cannot be named). */
export function majorityPrediction(log: WhoAndWhenLog, agent: string): Prediction | null {
  const s = log.steps.find((x) => agentKey(x.agent) === agentKey(agent));
  return s ? { agent: s.agent, step: s.index } : null;
}

/** An empty record of a log: its id and label, no prediction. */
export function baseRecord(log: WhoAndWhenLog): AttributionRecord {
  return { logId: log.id, label: { agent: log.label.agent, step: log.label.step, rawAgent: log.label.rawAgent }, prediction: null, calls: 0 };
}

/**
 * The `hybrid` method: structure first — `attributeSurfaced(log, {...STRUCTURAL_OPTIONS, ...opts})`
 * — and where structure blames no agent, the first-worker prior. The note says which one answered.
 */
export function hybridRecord(log: WhoAndWhenLog, opts: SurfacingOptions = {}): AttributionRecord {
  const rec = baseRecord(log);
  const a = attributeSurfaced(log, { ...STRUCTURAL_OPTIONS, ...opts });
  if (a.prediction) {
    rec.prediction = a.prediction;
    rec.note = `structure: ${a.failure ? a.failure.rule : 'root failure'}`;
    return rec;
  }
  rec.prediction = firstWorkerPrediction(log, opts);
  rec.note = rec.prediction ? 'prior: first worker message (structure saw no failure blamed on an agent)' : 'no failure and no worker message';
  return rec;
}

/** `firstWorkerPrediction` as a scored record. */
export function firstWorkerRecord(log: WhoAndWhenLog, opts: AuthorshipOptions = {}): AttributionRecord {
  const rec = baseRecord(log);
  rec.prediction = firstWorkerPrediction(log, opts);
  if (!rec.prediction) rec.note = 'no worker message';
  return rec;
}

/** `majorityPrediction` as a scored record (`agent` from `majorityAgent` over the evaluated set). */
export function majorityRecord(log: WhoAndWhenLog, agent: string | null): AttributionRecord {
  const rec = baseRecord(log);
  rec.prediction = agent ? majorityPrediction(log, agent) : null;
  if (!rec.prediction) rec.note = agent ? `${agent} never speaks` : 'no majority agent';
  return rec;
}
