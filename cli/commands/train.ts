import { safeFileName } from '../../core/fileNames.ts';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Table from 'cli-table3';
import { Option, type Command } from 'commander';
import { groupRollouts } from '../../core/rollouts/index.ts';
import { newWeightVersionId, openStore, type WeightVersion } from '../../core/store/index.ts';
import { chunks, policySamples, sftSequences } from '../../core/training/index.ts';
import type { StepResult, Trainer } from '../../core/training/index.ts';
import { act, dbOption, intOption, UsageError, type CommandContext } from '../args.ts';
import { CommandError } from '../errors.ts';
import { defaultVersionsDir } from '../wiring.ts';
import type { Io } from '../io.ts';
import { loadTrainer } from '../../models/factory.ts';

interface TrainFlags {
  mode?: string;
  role: string;
  from: string;
  model?: string;
  version?: string;
  steps: number;
  batch: number;
  lr?: string;
  kl: string;
  advantage: string;
  temperature?: string;
  out?: string;
  db: string;
  json?: boolean;
}

/** `flowlab train --mode sft|grpo --role <role> --from <experiment-id>`. `deps.trainer`: a trainer to use instead of the real one (tests). */
export function define(cmd: Command, ctx: CommandContext, deps: { trainer?: Trainer } = {}): void {
  cmd
    .usage('--mode sft|grpo --role <role> --from <experiment-id> [options]')
    .description([
      'One offline training step set for one role from a stored experiment, written as a new weight',
      "version (a GGUF) with its lineage. Needs the experiment's model calls with recorded token ids",
      '(`flowlab rollouts --record-tokens`, or a `train-loop` iteration).',
      "  sft:  the role's calls from correct runs; cross-entropy on completion tokens only.",
      "  grpo: the role's calls from every run, each with its stored group-relative advantage",
      '        (a rollouts experiment); REINFORCE with a KL penalty to the starting weights.',
    ].join('\n'))
    .option('--mode <sft|grpo>', 'the objective (required)')
    .addOption(new Option('--role <role>', 'the role to train').makeOptionMandatory())
    .addOption(new Option('--from <experiment-id>', 'the stored experiment to learn from').makeOptionMandatory())
    .option('--model <file.gguf>', 'the weights to start from (default: the file the role used)')
    .option('--version <id>', 'start from a recorded weight version (its file; the parent)')
    .addOption(intOption('--steps <n>', 'passes over the data', { min: 1, default: 1 }))
    .addOption(intOption('--batch <n>', 'sequences per optimiser step', { min: 1, default: 32 }))
    .option('--lr <x>', 'Adam learning rate (default: 5e-4 sft, 3e-4 grpo)')
    .option('--kl <x>', 'KL penalty (grpo)', '0.02')
    .option('--advantage <ladder|flow-grpo>', 'which stored advantage (grpo)', 'ladder')
    .option('--temperature <T>', "temperature the samples were drawn at (grpo) (default: the experiment's)")
    .option('--out <file.gguf>', 'where to write (default: flowlab-versions/offline/<role>/ next to --db)')
    .addOption(dbOption())
    .option('--json', 'print one JSON object')
    .action(act(ctx, (o: TrainFlags) => trainCommand(o, ctx.io, deps)));
}

async function trainCommand(values: TrainFlags, io: Io, deps: { trainer?: Trainer }): Promise<number> {
  const mode = values.mode;
  if (mode !== 'sft' && mode !== 'grpo') throw new UsageError(`--mode must be sft or grpo, got ${JSON.stringify(mode ?? '')}`);
  if (values.model && values.version) throw new UsageError('give --model or --version, not both');
  if (values.advantage !== 'ladder' && values.advantage !== 'flow-grpo') throw new UsageError(`--advantage must be ladder or flow-grpo, got "${values.advantage}"`);
  const { steps, batch } = values;
  const lr = Number(values.lr ?? (mode === 'sft' ? 5e-4 : 3e-4));
  const kl = Number(values.kl);
  if (!(lr > 0 && lr < 1)) throw new UsageError(`--lr: bad value "${values.lr}"`);
  if (!(kl >= 0)) throw new UsageError(`--kl: bad value "${values.kl}"`);
  const role = values.role;

  const store = openStore(values.db);
  try {
    const exp = store.getExperiment(values.from);
    const config = exp.config ?? {};
    const parent = values.version ? store.weights.get(values.version) : undefined;
    const usedFile = config.models?.models?.[config.models.roleModels?.[role] ?? 'default'];
    const start = parent?.path ?? (values.model ? path.resolve(values.model) : usedFile);
    if (!start) throw new UsageError(`experiment ${exp.id} does not say which model role "${role}" used; pass --model <file.gguf>`);
    const lineageParent = parent ?? store.weights.findByPath(start);
    const calls = store.getExperimentCalls(exp.id);
    if (!calls.some((c) => c.role === role)) throw new CommandError('NOT_FOUND', `experiment ${exp.id} has no model call of role "${role}"`);
    const runs = store.listRuns(exp.id);
    let temperature: number | undefined;
    let data: { kind: 'sft'; batch: ReturnType<typeof sftSequences> } | { kind: 'grpo'; batch: ReturnType<typeof policySamples> };
    if (mode === 'sft') {
      const correct = new Set(runs.filter((r) => r.correct).map((r) => r.runId as string));
      data = { kind: 'sft', batch: sftSequences(calls, role, (id) => correct.has(id)) };
      if (!data.batch.length) throw new CommandError('NO_DATA', `no SFT data: experiment ${exp.id} has ${correct.size} correct run(s), and none has a call of role "${role}" with recorded token ids (record them with \`flowlab rollouts --record-tokens\` or train-loop)`);
    } else {
      temperature = values.temperature !== undefined ? Number(values.temperature) : config.rollouts?.temperature;
      if (!(temperature !== undefined && temperature > 0)) throw new UsageError(`grpo needs the sampling temperature (> 0): pass --temperature (experiment ${exp.id} does not record one)`);
      let rows = store.improve.advantagesOf(exp.id).filter((a) => a.role === role && a.mode === values.advantage);
      if (!rows.length && config.rollouts?.group) rows = groupRollouts(runs, config.rollouts.group, [role]).rows.filter((a) => a.mode === values.advantage);
      if (!rows.length) throw new CommandError('NO_DATA', `no advantages of role "${role}" in experiment ${exp.id}: grpo needs a rollouts experiment (flowlab rollouts / train-loop)`);
      const adv = new Map(rows.map((a) => [a.runId, a.advantage]));
      data = { kind: 'grpo', batch: policySamples(calls, role, (id) => adv.get(id)) };
      if (!data.batch.length) throw new CommandError('NO_DATA', `no policy samples: the calls of role "${role}" in experiment ${exp.id} have no recorded token ids (record them with \`flowlab rollouts --record-tokens\` or train-loop)`);
    }

    const trainer = deps.trainer ?? (await loadTrainer());
    const model = await trainer.load(start);
    const results: StepResult[] = [];
    const t0 = performance.now();
    let out: string;
    let version: WeightVersion;
    try {
      for (let s = 0; s < steps; s++) {
        if (data.kind === 'sft') for (const b of chunks(data.batch, batch)) results.push(await model.sftStep(b, { lr }));
        else for (const b of chunks(data.batch, batch)) results.push(await model.policyStep(b, { lr, kl, temperature: temperature! }));
      }
      const id = newWeightVersionId();
      out = path.resolve(values.out ?? path.join(defaultVersionsDir(store), 'offline', safeFileName(role, { unique: false }), `${id}.gguf`));
      mkdirSync(path.dirname(out), { recursive: true });
      await model.writeGguf(out);
      version = store.weights.save({
        id,
        role,
        basePath: lineageParent?.basePath ?? start,
        path: out,
        ...(lineageParent ? { parentId: lineageParent.id } : {}),
        experimentId: exp.id,
        hyper: { mode, lr, kl: mode === 'grpo' ? kl : null, steps, batch, ...(mode === 'grpo' ? { advantage: values.advantage, temperature } : {}) },
        metrics: { losses: results.map((r) => r.loss), kl: results.map((r) => r.kl ?? null), tokens: results.reduce((a, r) => a + r.tokens, 0), sequences: data.batch.length },
      });
    } finally {
      model.dispose();
    }
    const seconds = (performance.now() - t0) / 1000;
    const summary = { versionId: version.id, role, mode, from: exp.id, start, out, parentId: version.parentId ?? null, sequences: data.batch.length, steps: results.length, losses: results.map((r) => r.loss), kl: results.map((r) => r.kl ?? null), tokens: results.reduce((a, r) => a + r.tokens, 0), seconds };
    io.stdout(values.json ? JSON.stringify(summary) + '\n' : [
      `${mode.toUpperCase()} on role ${role}: ${data.batch.length} sequence(s) from ${exp.id}, ${results.length} step(s), loss ${results[0]?.loss.toFixed(4)} -> ${results[results.length - 1]?.loss.toFixed(4)}${mode === 'grpo' ? `, KL ${(results[results.length - 1]?.kl ?? 0).toFixed(4)}` : ''}, ${seconds.toFixed(2)} s`,
      `Version ${version.id} (parent ${version.parentId ?? 'none'}) -> ${out}`,
      `Use it: flowlab run <workflow> --role-version ${role}=${version.id}`,
      '',
    ].join('\n'));
    return 0;
  } finally {
    store.close();
  }
}

/** `flowlab versions [--role <role>] [--lineage <version-id>]`. */
export function defineVersions(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('[--role <role>] [--lineage <version-id>] [--db <file>] [--json]')
    .description([
      "Lists the weight versions training wrote (train-loop, train), oldest first, or one version's",
      'lineage (itself, its parent, ... back to the first). Assign one to a role in a run with',
      '`flowlab run <workflow> --role-version <role>=<version-id>`.',
    ].join('\n'))
    .option('--role <role>', "only this role's versions")
    .option('--lineage <version-id>', "this version's lineage, newest first")
    .addOption(dbOption())
    .option('--json', 'print one JSON array')
    .action(act(ctx, (o: { role?: string; lineage?: string; db: string; json?: boolean }) => versionsCommand(o, ctx.io)));
}

async function versionsCommand(values: { role?: string; lineage?: string; db: string; json?: boolean }, io: Io): Promise<number> {
  const store = openStore(values.db);
  try {
    const list = values.lineage ? store.weights.lineage(values.lineage) : store.weights.list(values.role ? { role: values.role } : {});
    if (values.json) {
      io.stdout(JSON.stringify(list) + '\n');
      return 0;
    }
    if (!list.length) {
      io.stdout(`No weight versions${values.role ? ` of role ${values.role}` : ''} in ${store.file}.\n`);
      return 0;
    }
    const t = new Table({ head: ['version', 'role', 'parent', 'iteration', 'experiment', 'mode', 'reward', 'kl', 'file'], style: { head: [], border: [], compact: true } });
    for (const v of list) {
      const m = v.metrics as { reward?: number; kl?: number | number[] | null };
      const kl = Array.isArray(m.kl) ? m.kl[m.kl.length - 1] : m.kl;
      t.push([v.id, v.role, v.parentId ?? '-', v.iteration ?? '-', v.experimentId ?? '-', String(v.hyper.mode ?? '-'), m.reward === undefined ? '-' : m.reward.toFixed(3), typeof kl === 'number' ? kl.toFixed(4) : '-', v.path]);
    }
    io.stdout(`${values.lineage ? `Lineage of ${values.lineage} (newest first)` : 'Weight versions (oldest first)'}\n${t.toString()}\n`);
    return 0;
  } finally {
    store.close();
  }
}
