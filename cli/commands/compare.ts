import Table from 'cli-table3';
import type { Command } from 'commander';
import { compareRuns, type CompareReport, type PairedDelta } from '../../core/experiments/index.ts';
import { guardNote, labelClassOf } from '../../core/guards/index.ts';
import { openStore } from '../../core/store/index.ts';
import { act, dbOption, intOption, type CommandContext } from '../args.ts';
import { CommandError } from '../errors.ts';
import type { Io } from '../io.ts';

export { compareRuns, type CompareReport, type PairedDelta };

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

async function compareCommand(ids: [string, string], values: { db: string; seed: number; json?: boolean }, io: Io): Promise<number> {
  const store = openStore(values.db, { mustExist: true });
  try {
    const [a, b] = ids.map((id) => store.getExperiment(id));
    const report = compareRuns(a!.id, store.listRuns(a!.id), b!.id, store.listRuns(b!.id), values.seed, a!.dataset === b!.dataset ? labelClassOf(a!.dataset) : undefined);
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
  const guards = [`Guard (paired runs): A ${guardNote(r.guard.a)}; B ${guardNote(r.guard.b)}.`];
  if (r.guard.note === 'both constant') guards.push('Both sides are CONSTANT: the delta is a difference between two constant answers, not between policies.');
  else if (r.guard.note === 'one constant') guards.push(`${r.guard.a.constant ? 'A' : 'B'} is CONSTANT: its accuracy is a constant policy's.`);
  return `${notes.join('\n')}\n${t.toString()}\n${guards.join('\n')}\n`;
}
