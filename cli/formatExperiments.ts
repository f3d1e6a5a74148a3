/** Result tables of the experiment commands: blame evaluations and rollouts (run/resume: format.ts). */
import Table from 'cli-table3';
import type { BlameReport } from '../core/blame/index.ts';
import type { RolloutSummary, RolloutsConfig } from '../core/rollouts/index.ts';

const p = (x: number | null) => (x === null ? '-' : x.toFixed(2));

/** The blame table of `blame-eval` (and `resume` of one): per role, per fault kind, cascades, unseen and natural failures. */
export function formatBlame(b: BlameReport, id: string, inject: string[], accuracy: number): string {
  const roles = new Table({ head: ['role', 'precision', 'recall', 'injected', 'blamed'], style: { head: [], border: [], compact: true } });
  for (const [r, v] of Object.entries(b.byRole)) roles.push([r, p(v.precision), p(v.recall), String(v.injected), String(v.blamed)]);
  const kinds = new Table({ head: ['fault kind', 'precision', 'recall', 'injected', 'surfaced', 'unseen by structure'], style: { head: [], border: [], compact: true } });
  for (const [k, v] of Object.entries(b.byKind)) {
    if (!v.injected) continue;
    kinds.push([k, p(v.precision), p(v.recall), String(v.injected), String(v.surfaced), `${v.injected - v.surfaced} (${(((v.injected - v.surfaced) / v.injected) * 100).toFixed(0)}%)`]);
  }
  const nat = Object.entries(b.natural.byRole).map(([r, n]) => `${r} ${n}`).join(', ') || 'none';
  return [
    `Blame evaluation with SIMULATED faults (${inject.join(', ')}), ${b.runs} runs, accuracy ${(accuracy * 100).toFixed(1)}%`,
    roles.toString(),
    kinds.toString(),
    `Cascades below injected faults not blamed: ${b.cascadesNotBlamed} / ${b.cascadesTotal}`,
    ...designLines(b),
    `Faults structure cannot see (no node failed: wrong answers, dropped optional fields): ${b.unseen} (${(b.unseenShare * 100).toFixed(0)}% of injected) — only the correctness rung carries them.`,
    `Natural failures (the model's own, not counted in precision): ${b.natural.roots} root(s) [${nat}], ${b.natural.ambiguous} ambiguous, ${b.natural.infrastructure} infrastructure.`,
    `Experiment: ${id}`,
    '',
  ].join('\n');
}

/** The design-fault lines of a blame report: cascades behind a bad wire, kinds with no place in a design. */
function designLines(b: BlameReport): string[] {
  if (!b.designCascades) return [];
  const na = Object.entries(b.byKind).filter(([, v]) => v.notApplicable).map(([k, v]) => `${k} ${v.notApplicable}`).join(', ') || 'none';
  return [
    `Cascades behind a SIMULATED bad wire (design faults) not blamed: ${b.designCascades.notBlamed} / ${b.designCascades.total}`,
    `Design faults drawn but not applicable (no place for them in the design; nothing injected): ${na}`,
  ];
}

/** The advantages table of `rollouts` (and `resume` of one). */
export function formatRollouts(id: string, s: RolloutSummary, cfg: RolloutsConfig, wall: number): string {
  const t = new Table({ head: ['role', 'reward h mean', 'h std', 'advantage mean', 'advantage std', 'zero-spread groups'], style: { head: [], border: [], compact: true } });
  for (const [role, r] of Object.entries(s.roles)) {
    t.push([role, r.reward.mean.toFixed(3), r.reward.std.toFixed(3), r.advantage.mean.toFixed(3), r.advantage.std.toFixed(3), `${r.zeroSpreadGroups} / ${s.groups}`]);
  }
  return [
    `Rollouts: ${s.groups} groups x G=${cfg.group} = ${s.trajectories} trajectories (${cfg.mode}; learning roles ${cfg.learningRoles.join(', ')}), ${wall.toFixed(2)} s`,
    t.toString(),
    `Groups with no signal (every learning role's h equal): ${s.zeroSpreadGroups}; groups with equal outcomes (no Flow-GRPO signal): ${s.zeroSpreadOutcomeGroups}.`,
    `Advantages stored per run and role (ladder and flow-grpo). Export for TRL: flowlab export ${id} --out <dir>`,
    `Experiment: ${id}`,
    '',
  ].join('\n');
}
