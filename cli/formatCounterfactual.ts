/** The report of `flowlab counterfactual` (core/experiments/counterfactual.ts). */
import Table from 'cli-table3';
import type { CounterfactualReport } from '../core/experiments/index.ts';

const pct = (x: number | null) => (x === null ? '-' : `${(x * 100).toFixed(0)}%`);
const style = { head: [], border: [], compact: true };

/** Causal precision per role and failure class, silent runs located, the agreement table and SIMULATED fault flips, as text. */
export function formatCounterfactual(r: CounterfactualReport, opts: { simulated?: boolean } = {}): string {
  const prec = new Table({ head: ['blamed role / class', 'failed runs', 'blamed fixes tried', 'flipped', 'causal precision', 'runs another fix flipped'], style });
  for (const [k, c] of Object.entries(r.byRoleClass)) prec.push([k, String(c.runs), String(c.tried), String(c.flipped), pct(c.rate), String(c.otherFlipped)]);
  const rows = Object.keys(r.agreement);
  const cols = [...new Set(rows.flatMap((row) => Object.keys(r.agreement[row]!)))].sort();
  const agree = new Table({ head: ['structure \\ counterfactual', ...cols], style });
  for (const row of rows) agree.push([row, ...cols.map((c) => String(r.agreement[row]![c] ?? 0))]);
  const byRole = Object.entries(r.silent.byRole).map(([role, n]) => `${role} ${n}`).join(', ') || 'none';
  const inj = r.injected;
  const injRoles = Object.entries(inj.byRole).map(([role, c]) => `${role} ${c.flipped}/${c.tried}`).join(', ');
  return [
    `Counterfactual blame of ${r.experimentId}: ${r.runs} failed or silent run(s), ${r.forks} fork(s) (intervene ${r.intervene}, with ${r.with}); ${r.untried} node run(s) not tried (no corrected output).`,
    'Causal precision of structural blame (fixing the blamed node flips the run to success):',
    Object.keys(r.byRoleClass).length ? prec.toString() : '  (no failed run with a structural root)',
    'Agreement: structurally blamed role (rows) vs counterfactual cause (columns: the role of the most upstream node whose fix flips the run):',
    agree.toString(),
    `Agreement rate: ${pct(r.agreementRate)} of runs.`,
    `Silent runs (wrong, no node failed): ${r.silent.runs}; given a located cause (a fix upstream of the answer node flips them): ${r.silent.located} (${pct(r.silent.fraction)}) [${byRole}]; flipped only by the answer node's oracle: ${r.silent.answerOnly}.`,
    ...(inj.tried || inj.latent || opts.simulated
      ? [`SIMULATED faults: fixing the injected node flips ${inj.flipped}/${inj.tried} single-fault run(s) (${pct(inj.rate)})${injRoles ? ` [${injRoles}]` : ''}; not single-fault: ${inj.latent} run(s) hid a second planned fault below the first, ${inj.natural} failed on the model's own further down.`]
      : []),
    '',
  ].join('\n');
}
