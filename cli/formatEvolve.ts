/**
 * What `flowlab evolve` prints after the loop about the optimizer and the champions: how many
 * proposals were valid (parsed into a valid design), accepted (a new version), cut off; how many
 * distinct edits the proposer made (a proposer that always names the same edit is labelled
 * CONSTANT); and, with `--heldout n`, each task's champion against version 0 on held-out tasks
 * (core/mass/heldout.ts).
 */
import type { MassRunDeps } from '../core/mass/index.ts';
import { compareOnHeldout, parseMassDesign, type DesignCatalogue, type DesignComparison, type MassDesign } from '../core/mass/index.ts';
import type { MassRecord } from '../core/store/index.ts';
import { getDataset } from '../core/tasks/index.ts';
import { CommandError } from './errors.ts';
import type { Io } from './io.ts';

interface ProposalRecord {
  accepted: boolean;
  issues: Array<{ code: string }>;
  proposal: { edit?: Record<string, unknown>; changes_from_previous?: string } | null;
}

export interface ProposalStats {
  proposals: number;
  /** Parsed into a valid design (accepted, or valid but a repeat: UNCHANGED). */
  valid: number;
  accepted: number;
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
  const pct = (k: number) => (ps.length ? ` (${((100 * k) / ps.length).toFixed(0)}%)` : '');
  const text = ps.length
    ? `Proposals (proposer: ${proposer}): ${ps.length}; valid ${valid}${pct(valid)}; accepted ${ps.filter((p) => p.accepted).length}; cut off or outside the grammar ${cutOff}${edits.length ? `; ${distinctEdits} distinct edit(s), by op: ${Object.entries(ops).map(([k, v]) => `${k} ${v}`).join(', ')}` : ''}${constant ? '\nCONSTANT PROPOSER: every proposal was the same edit; a champion it found is a constant proposer\'s.' : ''}${proposer.startsWith('RANDOM') ? '\nRANDOM PROPOSER (SIMULATED): the champions were found by random edits, not by the model.' : ''}\n`
    : 'Proposals: none (one iteration runs version 0 only)\n';
  return { proposals: ps.length, valid, accepted: ps.filter((p) => p.accepted).length, cutOff, ops, distinctEdits, constant, text };
}

/** A task's stored design of version k (record `design` `t<t>/v<k>`). */
function storedDesignOf(records: readonly MassRecord[], t: number, k: number, catalogue: DesignCatalogue): MassDesign | undefined {
  const rec = records.find((r) => r.kind === 'design' && r.key === `t${t}/v${k}`);
  const p = rec && parseMassDesign((rec.value as { design: string }).design, catalogue);
  return p?.ok ? p.design : undefined;
}

/**
 * With `--heldout n`: each task's champion (when it is not version 0) against version 0 on the
 * first n tasks of the held-out split. Prints why a task has nothing to compare.
 */
export async function heldoutComparisons(evolutionId: string, dataset: string, o: { heldout?: number; heldoutSplit: string; seed: number }, records: readonly MassRecord[], first: MassDesign, catalogue: DesignCatalogue, deps: MassRunDeps, io: Io): Promise<Array<{ taskIndex: number; champion: number; comparison: DesignComparison }>> {
  const tasks = getDataset(dataset).load({ split: o.heldoutSplit, limit: o.heldout! });
  const out: Array<{ taskIndex: number; champion: number; comparison: DesignComparison }> = [];
  for (const r of records.filter((x) => x.kind === 'result')) {
    const { taskIndex, champion } = r.value as { taskIndex: number; champion: number | null };
    if (champion === null || champion === 0) {
      io.stderr(`task ${taskIndex}: champion ${champion === null ? 'none' : 'v0'}: no held-out comparison against version 0\n`);
      continue;
    }
    const design = storedDesignOf(records, taskIndex, champion, catalogue);
    if (!design) throw new CommandError('NOT_FOUND', `task ${taskIndex}: the stored design of champion v${champion} is missing or does not parse`);
    io.stderr(`task ${taskIndex}: held-out comparison of v0 and champion v${champion} on ${tasks.length} ${o.heldoutSplit} task(s)\n`);
    const comparison = await compareOnHeldout({ evolutionId: `${evolutionId}.t${taskIndex}`, tasks, base: { label: 'v0', design: first }, candidate: { label: `v${champion}`, design }, seed: o.seed }, deps);
    out.push({ taskIndex, champion, comparison });
  }
  return out;
}
