import Table from 'cli-table3';
import type { Command } from 'commander';
import { bootstrapMeanCI, signTest, type BootstrapCI, type SignTest } from '../../core/stats/index.ts';
import { openStore } from '../../core/store/index.ts';
import type { RunRecord } from '../../core/results/index.ts';
import { act, dbOption, intOption, type CommandContext } from '../args.ts';
import { CommandError } from '../errors.ts';
import type { Io } from '../io.ts';

/** `flowlab compare <experiment-a> <experiment-b>`. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('<experiment-a> <experiment-b> [--db file] [--seed S] [--json]')
    .description([
      'Compares two experiments on the same tasks (and, ideally, the same seeds): accuracy and every',
      "role's ladder reward, B minus A, paired by task, with an exact two-sided sign test and a 95%",
      'percentile-bootstrap interval of the mean paired difference (10,000 resamples, --seed).',
    ].join('\n'))
    .argument('<experiment-a>', 'the baseline A')
    .argument('<experiment-b>', 'the experiment B compared with A')
    .addOption(dbOption())
    .addOption(intOption('--seed <n>', 'bootstrap seed', { default: 0 }))
    .option('--json', 'print one JSON object')
    .action(act(ctx, (a: string, b: string, o: { db: string; seed: number; json?: boolean }) => compareCommand([a, b], o, ctx.io)));
}

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

async function compareCommand(ids: [string, string], values: { db: string; seed: number; json?: boolean }, io: Io): Promise<number> {
  const store = openStore(values.db, { mustExist: true });
  try {
    const [a, b] = ids.map((id) => store.getExperiment(id));
    const report = compareRuns(a!.id, store.listRuns(a!.id), b!.id, store.listRuns(b!.id), values.seed);
    if (report.pairs === 0) throw new CommandError('NOTHING_TO_COMPARE', `experiments ${a!.id} and ${b!.id} share no task: nothing to compare`);
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
