/**
 * What `flowlab evolve` prints after the loop about the optimizer and the champions: how many
 * proposals were valid (parsed into a valid design), made a new version, won their comparison
 * (a champion change: `champion` records after version 0), cut off; how many
 * distinct edits the proposer made (a proposer that always names the same edit is labelled
 * CONSTANT). The held-out comparisons are core/mass/evolveJob.ts `heldoutOfEvolution`.
 */
import type { MassRecord } from '../core/store/index.ts';

interface ProposalRecord {
  accepted: boolean;
  issues: Array<{ code: string }>;
  proposal: { edit?: Record<string, unknown>; changes_from_previous?: string } | null;
}

export interface ProposalStats {
  proposals: number;
  /** Parsed into a valid design (accepted, or valid but a repeat: UNCHANGED). */
  valid: number;
  /** Made a new version (the validator accepted the design). */
  accepted: number;
  /** Became champion (won their comparison): `champion` records of a later version than 0. */
  won: number;
  /** Champions a verdict chose (every `champion` record but version 0 under the direct rule, which the rule sets). */
  judged: number;
  /** Replies cut off or outside the grammar (UNPARSABLE, UNPARSABLE_OUTPUT, NOT_A_PROPOSAL). */
  cutOff: number;
  /** Edit mode: how often each op was proposed; distinct edits (op and fields). */
  ops: Record<string, number>;
  distinctEdits: number;
  constant: boolean;
  text: string;
}

/** The optimizer's proposals of an evolution, counted from its records (`proposal` kind). */
export function proposalStats(records: readonly MassRecord[], proposer: string): ProposalStats {
  const ps = records.filter((r) => r.kind === 'proposal').map((r) => r.value as ProposalRecord);
  const valid = ps.filter((p) => p.accepted || (p.issues.length > 0 && p.issues.every((i) => i.code === 'UNCHANGED'))).length;
  const cutOff = ps.filter((p) => p.issues.some((i) => ['UNPARSABLE', 'UNPARSABLE_OUTPUT', 'NOT_A_PROPOSAL'].includes(i.code))).length;
  const edits = ps.map((p) => p.proposal?.edit).filter((e): e is Record<string, unknown> => !!e);
  const ops: Record<string, number> = {};
  for (const e of edits) ops[String(e.op)] = (ops[String(e.op)] ?? 0) + 1;
  const distinctEdits = new Set(edits.map((e) => JSON.stringify(e))).size;
  const constant = edits.length > 1 && distinctEdits === 1;
  const champions = records.filter((r) => r.kind === 'champion').map((r) => r.value as { iteration?: unknown; reason?: unknown });
  const won = champions.filter((c) => Number(c.iteration) > 0).length;
  // Champions the judge chose: all but version 0 under the direct rule (set by the rule, not a verdict).
  const judged = champions.filter((c) => !String(c.reason ?? '').startsWith('the first design')).length;
  const pct = (k: number) => (ps.length ? ` (${((100 * k) / ps.length).toFixed(0)}%)` : '');
  const text = ps.length
    ? `Proposals (proposer: ${proposer}): ${ps.length}; valid ${valid}${pct(valid)}; new versions ${ps.filter((p) => p.accepted).length}, of which ${won} became champion; cut off or outside the grammar ${cutOff}${edits.length ? `; ${distinctEdits} distinct edit(s), by op: ${Object.entries(ops).map(([k, v]) => `${k} ${v}`).join(', ')}` : ''}${constant ? '\nCONSTANT PROPOSER: every proposal was the same edit; a champion it found is a constant proposer\'s.' : ''}${proposer.startsWith('RANDOM') ? (won ? '\nRANDOM PROPOSER (SIMULATED): the champions were found by random edits, not by the model.' : '\nRANDOM PROPOSER (SIMULATED): the edits were random, not the model\'s; none became champion.') : ''}\n`
    : 'Proposals: none (one iteration runs version 0 only)\n';
  return { proposals: ps.length, valid, accepted: ps.filter((p) => p.accepted).length, won, judged, cutOff, ops, distinctEdits, constant, text };
}
