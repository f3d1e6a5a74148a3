import type { RoleName } from '../ids.ts';
import type { CreditResult } from '../blame/credit/types.ts';
import type { NodeStatus, FailureClass } from '../trace/events.ts';
import type { LadderWeights } from '../workflow/graph.ts';

/**
 * Default rung weights. FloWright does not publish its weights; these are ours, shown by
 * `flowlab run` and editable per role in the workflow YAML (`roles.<name>.weights`).
 * With them h ranges from −0.5 (credit −1, nothing else) to 1.0 (every rung, no blame).
 */
export const DEFAULT_WEIGHTS: LadderWeights = { format: 0.1, validity: 0.1, completion: 0.2, correctness: 0.6, credit: 0.5 };

/** The rungs, in ladder order (1..5). */
export const RUNGS = ['format', 'validity', 'completion', 'correctness', 'credit'] as const;
export type Rung = (typeof RUNGS)[number];

/** The rung values, weights and reward of one role's ladder (a run's, or a mean across runs). */
export interface LadderScores {
  /** f: share of the role's outputs that parsed as written (0..1; a repaired output does not count). */
  format: number;
  /** v_ρ: share of the role's contributions that were valid: run nodes whose contract held, wired nodes with no wiring fault (0..1). */
  validity: number;
  /** e: the workflow ran to an answer (0 or 1). */
  completion: number;
  /** a: the grader's score of the answer (0..1). */
  correctness: number;
  /** c_ρ = −|F_ρ| / |V_ρ| (−1..0). */
  credit: number;
  weights: LadderWeights;
  /** h_ρ = w_f·f + w_v·v_ρ + w_e·e + w_a·a + w_c·c_ρ. */
  reward: number;
  /** 0..5: the last rung reached with every rung below it passed (format 1 … credit 5); a mean may be fractional. */
  highestRung: number;
}

export interface RoleLadder extends LadderScores {
  role: RoleName;
  /** Nodes the role ran that executed (not cascaded, skipped, or stopped by the harness). */
  nodesRun: number;
  /** Nodes the role wired. */
  nodesWired: number;
  /**
   * The role's node outputs that parsed only once repaired (JSON taken from a fenced block or
   * prose; core/model/repair.ts): they do not count as formatted on f. Absent when 0.
   */
  repaired?: number;
  /**
   * The role's node outputs whose model call stopped at `max_tokens` (stop reason `maxTokens`),
   * the node still ok: flagged here, not taken off f (a cut structured output that does not
   * parse already fails f as UNPARSABLE_OUTPUT). Absent when 0.
   */
  cut?: number;
}

export interface LadderNode {
  id: string;
  runBy?: RoleName;
  wiredBy: RoleName[];
}
export interface LadderEvent {
  nodeId: string;
  attempt: number;
  status: NodeStatus;
  failureClass?: FailureClass;
  errorCode?: string;
  /** The node run's model calls (how each stopped; whether its output was repaired). */
  calls?: ReadonlyArray<{ stopReason?: string; repair?: string }>;
}

/** How a node run's output was written: repaired (its last call's JSON was found inside the text) and/or cut at max_tokens. */
export function outputFlags(ev: Pick<LadderEvent, 'calls'>): { repaired: boolean; cut: boolean } {
  const last = ev.calls?.at(-1);
  return { repaired: last?.repair !== undefined, cut: last?.stopReason === 'maxTokens' };
}

/** Codes meaning the node produced no parsable output (the format rung fails). */
const FORMAT_FAILURES = new Set(['UNPARSABLE_OUTPUT', 'TIMEOUT', 'AGENT_ERROR']);

/**
 * The hierarchical reward ladder of one run, per role (FloWright, "hierarchical reward ladder"; docs/credit.md):
 * h_ρ = w_f·f + w_v·v_ρ + w_e·e + w_a·a + w_c·c_ρ.
 * The paper writes f without ρ; we score format on the role's own nodes (with one role, the
 * run's). Nodes stopped by an infrastructure fault, cascaded or skipped do not count for or
 * against a role's f and v. A role with no node run or wired has f = v = 0 (rung 0).
 * Pure: same inputs, same ladder.
 * @param roles roles with their (partial) weights; defaults fill the rest.
 * @param outcome `completed`: the run reached an answer; `score`: the grader's 0..1.
 */
export function computeLadder(
  roles: ReadonlyArray<{ name: RoleName; weights?: Partial<LadderWeights> }>,
  nodes: readonly LadderNode[],
  events: readonly LadderEvent[],
  credit: CreditResult,
  outcome: { completed: boolean; score: number },
): Record<string, RoleLadder> {
  const final = new Map<string, LadderEvent>();
  for (const e of events) {
    const prev = final.get(e.nodeId);
    if (!prev || e.attempt >= prev.attempt) final.set(e.nodeId, e);
  }
  const out: Record<string, RoleLadder> = {};
  for (const role of roles) {
    let ran = 0;
    let parsed = 0;
    let valid = 0;
    let wired = 0;
    let wiredOk = 0;
    let repaired = 0;
    let cut = 0;
    for (const node of nodes) {
      const ev = final.get(node.id);
      if (node.runBy === role.name && ev && (ev.status === 'ok' || ev.status === 'failed') && ev.failureClass !== 'infrastructure' && ev.failureClass !== 'wiring') {
        ran++;
        const flags = outputFlags(ev);
        if (flags.repaired) repaired++;
        if (flags.cut && ev.status === 'ok') cut++;
        if (!(ev.status === 'failed' && FORMAT_FAILURES.has(ev.errorCode ?? '')) && !flags.repaired) parsed++;
        if (ev.status === 'ok') valid++;
      }
      if (node.wiredBy.includes(role.name)) {
        wired++;
        if (!(ev?.status === 'failed' && ev.failureClass === 'wiring')) wiredOk++;
      }
    }
    const weights = { ...DEFAULT_WEIGHTS, ...role.weights };
    const f = ran + wired ? (parsed + wired) / (ran + wired) : 0;
    const v = ran + wired ? (valid + wiredOk) / (ran + wired) : 0;
    const e = outcome.completed ? 1 : 0;
    const a = Math.min(1, Math.max(0, outcome.score));
    const c = credit.byRole[role.name]?.credit ?? 0;
    const reward = weights.format * f + weights.validity * v + weights.completion * e + weights.correctness * a + weights.credit * c;
    const passed = [f === 1 && ran + wired > 0, v === 1 && ran + wired > 0, e === 1, a >= 1, c === 0];
    let highestRung = 0;
    while (highestRung < 5 && passed[highestRung]) highestRung++;
    out[role.name] = { role: role.name, format: f, validity: v, completion: e, correctness: a, credit: c, weights, reward: round(reward), highestRung, nodesRun: ran, nodesWired: wired, ...(repaired && { repaired }), ...(cut && { cut }) };
  }
  return out;
}

const round = (x: number) => Math.round(x * 1e12) / 1e12;
