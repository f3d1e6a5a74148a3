/**
 * Does an evolved design beat version 0 on tasks the loop never saw? Runs two designs on the same
 * held-out tasks with the same seed per task (common random numbers: a difference is the design's,
 * not the sampler's), grades each run with the family's external grader, and compares them pairwise:
 * the mean paired difference with a percentile bootstrap interval and the exact two-sided sign test
 * (core/stats). Every run is an ordinary stored `mass` step named `<evolution>.heldout.<label>.<task>`,
 * so the comparison resumes (stored runs are read back, not run again) and each run replays.
 */
import { bootstrapMeanCI, signTest, type BootstrapCI, type SignTest } from '../stats/index.ts';
import { deriveSeed } from '../random.ts';
import type { Task } from '../tasks/types.ts';
import { MassError } from './errors.ts';
import { runMass, type MassRunDeps } from './run.ts';
import type { MassBudget } from './compile.ts';
import type { MassDesign } from './types.ts';

export interface HeldoutSpec {
  /** Names the steps: `<evolutionId>.heldout.<label>.<task id>`. */
  evolutionId: string;
  tasks: readonly Task[];
  /** The reference design (version 0) and the one tested against it (the champion). */
  base: { label: string; design: MassDesign };
  candidate: { label: string; design: MassDesign };
  seed: number;
  budget?: MassBudget;
}

export interface DesignComparison {
  base: string;
  candidate: string;
  n: number;
  /** Mean external score per design. */
  baseMean: number;
  candidateMean: number;
  /** Per task, in task order: [base score, candidate score]. */
  scores: Array<[number, number]>;
  /** Candidate − base, mean with a 95% percentile bootstrap interval (10,000 resamples, seed 0). */
  diff: BootstrapCI;
  sign: SignTest;
  /** The same, split by the task's `meta.novelty` (learn-design's held-out split: in-template, new-wording), when tasks carry it. */
  byNovelty: Record<string, { n: number; baseMean: number; candidateMean: number }>;
  wallSeconds: number;
}

/**
 * Runs `spec.base` and `spec.candidate` on every task (see the module comment) and compares them.
 * Errors: MassError `BAD_OPTIONS` (no task), and those of `runMass`.
 */
export async function compareOnHeldout(spec: HeldoutSpec, deps: MassRunDeps & { onRun?: (label: string, task: Task, score: number) => void }): Promise<DesignComparison> {
  if (!spec.tasks.length) throw new MassError('BAD_OPTIONS', 'no held-out task to compare on', { field: 'tasks' });
  const t0 = performance.now();
  const scores: Array<[number, number]> = [];
  for (const task of spec.tasks) {
    const seed = deriveSeed(spec.seed, 'heldout', task.id);
    const pair: number[] = [];
    for (const { label, design } of [spec.base, spec.candidate]) {
      const ws = await runMass(design, task, deps, { experimentId: `${spec.evolutionId}.heldout.${label}.${task.id.replace(/\//g, '-')}`, version: null, seed, budget: spec.budget, about: { evolutionId: spec.evolutionId, heldout: label } });
      deps.onRun?.(label, task, ws.grade.score);
      pair.push(ws.grade.score);
    }
    scores.push([pair[0]!, pair[1]!]);
  }
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const diffs = scores.map(([a, b]) => b - a);
  const byNovelty: DesignComparison['byNovelty'] = {};
  spec.tasks.forEach((task, i) => {
    const k = task.meta?.novelty;
    if (typeof k !== 'string') return;
    const e = (byNovelty[k] ??= { n: 0, baseMean: 0, candidateMean: 0 });
    e.n++;
    e.baseMean += scores[i]![0];
    e.candidateMean += scores[i]![1];
  });
  for (const e of Object.values(byNovelty)) {
    e.baseMean /= e.n;
    e.candidateMean /= e.n;
  }
  return {
    base: spec.base.label,
    candidate: spec.candidate.label,
    n: scores.length,
    baseMean: mean(scores.map((s) => s[0])),
    candidateMean: mean(scores.map((s) => s[1])),
    scores,
    diff: bootstrapMeanCI(diffs, { seed: 0 }),
    sign: signTest(diffs),
    byNovelty,
    wallSeconds: (performance.now() - t0) / 1000,
  };
}

/** One line per comparison, e.g. `held-out (48 tasks): v0 0.229 -> v3 0.417, diff +0.188 [0.09, 0.29], sign test 19+/4- (25 ties) p = 0.0026`. */
export function formatHeldout(c: DesignComparison): string {
  const f = (x: number) => x.toFixed(3);
  const nov = Object.entries(c.byNovelty).map(([k, e]) => `${k} (${e.n}): ${f(e.baseMean)} -> ${f(e.candidateMean)}`).join('; ');
  return `held-out (${c.n} tasks): ${c.base} ${f(c.baseMean)} -> ${c.candidate} ${f(c.candidateMean)}, diff ${c.diff.mean >= 0 ? '+' : ''}${f(c.diff.mean)} [${f(c.diff.low)}, ${f(c.diff.high)}], sign test ${c.sign.positive}+/${c.sign.negative}- (${c.sign.ties} ties) p = ${c.sign.p < 1e-4 ? c.sign.p.toExponential(1) : c.sign.p.toFixed(4)}${nov ? `\n  by novelty: ${nov}` : ''}\n`;
}
