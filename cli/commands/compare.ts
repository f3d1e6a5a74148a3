import Table from 'cli-table3';
import { bootstrapMeanCI, signTest, type BootstrapCI, type SignTest } from '../../core/stats/index.ts';
import { openStore } from '../../core/store/index.ts';
import type { RunRecord } from '../../core/results/index.ts';
import { parse, UsageError } from '../args.ts';
import { processIo, type Io } from '../io.ts';

export const COMPARE_USAGE = `Usage: flowlab compare <experiment-a> <experiment-b> [--db file] [--seed S] [--json]

Compares two experiments on the same tasks (and, ideally, the same seeds): accuracy and every
role's ladder reward, B minus A, paired by task, with an exact two-sided sign test and a 95%
percentile-bootstrap interval of the mean paired difference (10,000 resamples, --seed).
`;

export interface PairedDelta {
  a: number;
  b: number;
  delta: number;
  signTest: SignTest;
  ci: BootstrapCI;
}

export interface CompareReport {
  a: string;
  b: string;
  pairs: number;
  unpairedA: number;
  unpairedB: number;
  seedsMatch: boolean;
  score: PairedDelta;
  roles: Record<string, PairedDelta>;
}

/** Pairs the runs of two experiments by dataset task id and computes the paired statistics. Pure. */
export function compareRuns(aId: string, a: readonly RunRecord[], bId: string, b: readonly RunRecord[], seed = 0): CompareReport {
  const byTask = new Map(b.map((r) => [r.taskId, r]));
  const pairs = a.filter((r) => byTask.has(r.taskId)).map((r) => [r, byTask.get(r.taskId)!] as const);
  const paired = (pick: (r: RunRecord) => number | undefined): PairedDelta => {
    const xs = pairs.filter(([x, y]) => pick(x) !== undefined && pick(y) !== undefined);
    const diffs = xs.map(([x, y]) => pick(y)! - pick(x)!);
    const mean = (v: number[]) => (v.length ? v.reduce((s, t) => s + t, 0) / v.length : 0);
    const ma = mean(xs.map(([x]) => pick(x)!));
    const mb = mean(xs.map(([, y]) => pick(y)!));
    return { a: ma, b: mb, delta: mb - ma, signTest: signTest(diffs), ci: bootstrapMeanCI(diffs, { seed }) };
  };
  // Roles both sides have (a role only one workflow has cannot be paired).
  const roles = [...new Set(pairs.flatMap(([x, y]) => Object.keys(x.ladder ?? {}).filter((role) => y.ladder?.[role])))];
  return {
    a: aId,
    b: bId,
    pairs: pairs.length,
    unpairedA: a.length - pairs.length,
    unpairedB: b.length - pairs.length,
    seedsMatch: pairs.every(([x, y]) => x.seed === y.seed),
    score: paired((r) => r.score),
    roles: Object.fromEntries(roles.map((role) => [role, paired((r) => r.ladder?.[role]?.reward)])),
  };
}

export async function compareCommand(argv: string[], io: Io = processIo): Promise<number> {
  const { values, positionals } = parse(argv, {
    db: { type: 'string', default: process.env.FLOWLAB_DB ?? 'flowlab.db' },
    seed: { type: 'string', default: '0' },
    json: { type: 'boolean', default: false },
  }, COMPARE_USAGE);
  if (positionals.length !== 2) throw new UsageError('expected <experiment-a> <experiment-b>', COMPARE_USAGE);
  const store = openStore(values.db!, { mustExist: true });
  try {
    const [a, b] = positionals.map((id) => store.getExperiment(id));
    const report = compareRuns(a!.id, store.listRuns(a!.id), b!.id, store.listRuns(b!.id), Number(values.seed) || 0);
    if (report.pairs === 0) throw new Error(`experiments ${a!.id} and ${b!.id} share no task: nothing to compare`);
    io.stdout(values.json ? JSON.stringify(report) + '\n' : formatCompare(report));
    return 0;
  } finally {
    store.close();
  }
}

const f = (x: number) => x.toFixed(3);
const row = (name: string, d: PairedDelta) => [name, f(d.a), f(d.b), (d.delta >= 0 ? '+' : '') + f(d.delta), `[${f(d.ci.low)}, ${f(d.ci.high)}]`, `${d.signTest.positive}/${d.signTest.negative}/${d.signTest.ties}`, d.signTest.p.toFixed(4)];

export function formatCompare(r: CompareReport): string {
  const t = new Table({ head: ['measure (B - A)', 'A', 'B', 'delta', '95% bootstrap CI', 'sign +/-/=', 'p (sign test)'], style: { head: [], border: [], compact: true } });
  t.push(row('score (accuracy)', r.score));
  for (const [role, d] of Object.entries(r.roles)) t.push(row(`h ${role}`, d));
  const notes = [`A = ${r.a}, B = ${r.b}: ${r.pairs} paired task(s)${r.unpairedA || r.unpairedB ? ` (${r.unpairedA} only in A, ${r.unpairedB} only in B, left out)` : ''}.`];
  if (!r.seedsMatch) notes.push('Warning: paired runs used different seeds; differences mix the change with sampling noise.');
  return `${notes.join('\n')}\n${t.toString()}\n`;
}
