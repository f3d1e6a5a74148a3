import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { choiceSequences, collectEdits, FIRST_DESIGNS, keptCalls, massFamily, massFamilyNames, opTable, parseMassDesign, RFT_DEFAULTS, sftTrain, type RftEvent } from '../../core/mass/index.ts';

import type { ModelConfig, ModelProvider } from '../../core/model/index.ts';
import { openStore } from '../../core/store/index.ts';
import { freshStoreFile } from '../freshStore.ts';
import { getDataset } from '../../core/tasks/index.ts';
import type { Trainer } from '../../core/training/index.ts';
import { defaultTools } from '../../core/tools/index.ts';
import { llamaProvider, loadTrainer } from '../../models/factory.ts';
import { withFingerprints } from '../../models/resolve.ts';
import { act, dbOption, intOption, UsageError, type CommandContext } from '../args.ts';
import { addModelOptions, gpuFlag, type ModelFlagValues } from '../flags.ts';
import type { Io } from '../io.ts';

interface Flags extends ModelFlagValues {
  out?: string;
  tasks: number;
  offset: number;
  states: number;
  walk: number;
  samples: number;
  temperature: string;
  minGain: string;
  seed: number;
  id?: string;
  db: string;
  sftPasses: number;
  sftLr: string;
  sftBatch: number;
  json?: boolean;
}

/** What the command needs from outside (tests inject a provider and a trainer). */
export interface TrainOptimizerDeps {
  makeProvider?: (cfg: ModelConfig) => Promise<ModelProvider>;
  trainer?: Trainer;
}

const num = (v: string, flag: string, ok: (x: number) => boolean, rule: string): number => {
  const x = Number(v);
  if (!/^-?\d+(\.\d+)?(e-?\d+)?$/i.test(v.trim()) || !Number.isFinite(x) || !ok(x)) throw new UsageError(`--${flag} must be ${rule}, got "${v}"`);
  return x;
};

/** `flowlab train-optimizer <dataset>`: rejection-sampling fine-tuning of the MASS edit optimizer (core/mass/optimizerTraining.ts). */
export function define(cmd: Command, ctx: CommandContext, deps: TrainOptimizerDeps = {}): void {
  cmd
    .usage('<dataset> --model <file.gguf> --out <trained.gguf> [options]')
    .description([
      'Trains the MASS edit optimizer (the model that proposes one edit of a team design) by rejection-sampling',
      'fine-tuning: from --states designs (the first one, and random walks of 1..--walk edits from it) the model',
      'proposes --samples edits each at --temperature under the edit grammar; each edited design and its state run',
      'on the same --tasks TRAINING tasks (from --offset, one seed per task), and the proposals whose mean score',
      'gain is at least --min-gain are the SFT data (loss on the completion). The trained weights go to --out; use',
      'them as evolve --model. Every call is stored (--db, --id): the same command resumes and reproduces.',
    ].join('\n'))
    .argument('<dataset>', `task family with an edit menu (known families: ${massFamilyNames().join(', ')}; learn-design has a menu)`)
    .option('--out <trained.gguf>', 'where the fine-tuned weights are written (without it: collect and report only)')
    .addOption(intOption('--tasks <n>', 'training tasks each design is scored on', { min: 1, default: RFT_DEFAULTS.tasks }))
    .addOption(intOption('--offset <n>', 'first training task (default 100: past the tasks evolve selects on, train/0..31)', { default: 100 }))
    .addOption(intOption('--states <n>', 'designs the optimizer proposes from (the first design, then random walks)', { min: 1, max: 200, default: RFT_DEFAULTS.states }))
    .addOption(intOption('--walk <n>', 'longest random walk of edits from the first design to a state', { min: 0, max: 6, default: RFT_DEFAULTS.walk }))
    .addOption(intOption('--samples <n>', 'proposals sampled from each state', { min: 1, max: 64, default: RFT_DEFAULTS.samples }))
    .option('--temperature <x>', 'sampling temperature of the proposals', String(RFT_DEFAULTS.temperature))
    .option('--min-gain <x>', 'a proposal is kept when its design beats the state by at least this mean score (0..1, > 0)', String(RFT_DEFAULTS.minGain))
    .addOption(intOption('--sft-passes <n>', 'SFT passes over the kept proposals', { min: 1, default: 8 }))
    .option('--sft-lr <x>', 'SFT Adam learning rate', '1e-3')
    .addOption(intOption('--sft-batch <n>', 'sequences per SFT step', { min: 1, default: 8 }))
    .addOption(intOption('--seed <n>', 'seed (states, proposals, scoring)', { default: RFT_DEFAULTS.seed }))
    .option('--id <collection-id>', 'the collection id (default: rft-<dataset>-<seed>-<model file name>); the same id reads stored steps back');
  addModelOptions(cmd, { contextSize: { min: 256, default: 2048, help: 'context tokens per model (default: 2048, as evolve)' } });
  cmd.addOption(dbOption()).option('--json', 'print one JSON object').action(act(ctx, (dataset: string, o: Flags) => trainOptimizer(dataset, o, ctx.io, deps)));
}

async function trainOptimizer(dataset: string, o: Flags, io: Io, deps: TrainOptimizerDeps): Promise<number> {
  if (!o.model) throw new UsageError('missing --model <file.gguf>');
  const family = massFamily(dataset);
  if (!family.editMenu) throw new UsageError(`train-optimizer trains the edit optimizer: ${dataset} has no edit menu (learn-design has one)`);
  if (o.out) {
    // Checked before minutes of collection: the weights must not overwrite the model they start from, and their folder must exist.
    if (path.resolve(o.out) === path.resolve(o.model)) throw new UsageError(`--out ${o.out} is the --model file itself; write the trained weights to another file`);
    if (!existsSync(path.dirname(path.resolve(o.out)))) throw new UsageError(`--out ${o.out}: the folder ${path.dirname(path.resolve(o.out))} does not exist`);
    if (o.db && path.resolve(o.out) === path.resolve(o.db)) throw new UsageError(`--out ${o.out} is the --db store itself; write the trained weights to another file`);
    if (existsSync(o.out) && statSync(o.out).isDirectory()) throw new UsageError(`--out ${o.out} is a folder; name the .gguf file to write (e.g. ${path.join(o.out, 'optimizer.gguf')})`);
  }
  const temperature = num(o.temperature, 'temperature', (x) => x > 0 && x <= 4, 'a number in (0, 4]');
  const minGain = num(o.minGain, 'min-gain', (x) => x > 0 && x <= 1, 'a number in (0, 1]');
  const sftLr = num(o.sftLr, 'sft-lr', (x) => x > 0 && x < 1, 'a number in (0, 1)');
  const tasks = getDataset(dataset).load({ split: 'train', limit: o.tasks, offset: o.offset });
  if (tasks.length < o.tasks) throw new UsageError(`--tasks ${o.tasks} from --offset ${o.offset}: ${dataset}/train has only ${tasks.length} there`);
  const catalogue = { checks: family.checks.names() };
  const first = parseMassDesign(FIRST_DESIGNS[dataset], catalogue);
  if (!first.ok) throw new UsageError(`${dataset}: its first design does not validate: ${first.issues[0]!.message}`);
  const id = o.id ?? `rft-${dataset}-${o.seed}-${path.basename(o.model).replace(/\.gguf$/i, '').toLowerCase()}`;
  const cfg: ModelConfig = withFingerprints({ models: { default: path.resolve(o.model) }, roleModels: {}, gpu: gpuFlag(o.gpu), contextSize: o.contextSize ?? 2048, ...(o.threads !== undefined && { threads: o.threads }) });
  const file = freshStoreFile(o.db);
  const store = openStore(o.db);
  let provider: ModelProvider | undefined;
  let loaded = false;
  const t0 = performance.now();
  try {
    provider = await (deps.makeProvider ?? llamaProvider)(cfg);
    await provider.load?.();
    loaded = true;
    io.stderr(`Optimizer RFT ${id}: ${o.states} states x ${o.samples} proposals, scored on ${dataset}/train ${o.offset}..${o.offset + o.tasks - 1}, model ${path.basename(o.model)}\n`);
    const onEvent = (e: RftEvent) =>
      io.stderr(e.type === 'state' ? `state ${e.state}: mean ${e.mean.toFixed(3)} after ${e.path}\n` : `  s${e.proposal.state}.p${e.proposal.sample}: ${e.proposal.edit ?? 'REJECTED'}${Number.isFinite(e.proposal.gain) ? ` gain ${e.proposal.gain >= 0 ? '+' : ''}${e.proposal.gain.toFixed(3)}` : ''}${e.proposal.kept ? ' KEPT' : ''}\n`);
    const c = await collectEdits({ id, family, first: first.design, catalogue, tasks, states: o.states, walk: o.walk, samples: o.samples, temperature, minGain, seed: o.seed }, { store, provider, tools: defaultTools(), config: { models: cfg }, onEvent });
    const collectSeconds = (performance.now() - t0) / 1000;
    const valid = c.proposals.filter((p) => p.edit !== null).length;
    const { calls, missing } = keptCalls(c.proposals, (exp) => store.getExperimentCalls(exp));
    let sft: Awaited<ReturnType<typeof sftTrain>> | undefined;
    let chosenTokens = 0;
    if (o.out && calls.length) {
      // The loss on the tokens the model chose under the grammar only (core/training/choiceMask.ts), each renormalised over what the grammar allowed there.
      const trainer = deps.trainer ?? (await loadTrainer());
      const probe = await trainer.load(path.resolve(o.model));
      const pieces = probe.vocabulary?.();
      probe.dispose();
      const live = provider;
      const { sequences, lossTokens } = await choiceSequences(calls, live.tokenOffsets ? (call) => live.tokenOffsets!(call.modelRef, call.completionTokenIds!) : undefined, pieces);
      chosenTokens = lossTokens;
      await provider.dispose().catch(() => {});
      provider = undefined;
      sft = await sftTrain(trainer, path.resolve(o.model), sequences, [], path.resolve(o.out), { passes: o.sftPasses, lr: sftLr, batch: o.sftBatch });
    }
    const table = opTable(c.proposals);
    const wall = (performance.now() - t0) / 1000;
    if (o.json) {
      io.stdout(JSON.stringify({ id, proposals: c.proposals, states: c.states.map((s) => ({ mean: s.mean, path: s.path })), kept: c.kept, valid, designsScored: c.designsScored, ops: table, sequences: calls.length, chosenTokens, missing, sft: sft ?? null, collectSeconds, wallSeconds: wall }) + '\n');
      return 0;
    }
    const lines = [
      `Collection ${id}: ${c.proposals.length} proposals by ${path.basename(o.model)} (the model; temperature ${temperature}), ${valid} valid, ${c.kept} kept (gain >= ${minGain}), ${c.designsScored} designs scored on ${o.tasks} training tasks`,
      'op                proposed  kept  mean gain',
      ...table.map((r) => `${r.op.padEnd(18)}${String(r.proposed).padStart(8)}${String(r.kept).padStart(6)}  ${Number.isFinite(r.meanGain) ? (r.meanGain >= 0 ? '+' : '') + r.meanGain.toFixed(3) : '-'}`),
      `Kept: ${c.proposals.filter((p) => p.kept).map((p) => `s${p.state}: ${p.edit} (+${p.gain.toFixed(3)})`).join('; ') || 'none'}`,
      sft ? `SFT: ${sft.sequences} sequences (${missing} without recorded ids), ${chosenTokens} chosen tokens in the loss, ${o.sftPasses} pass${o.sftPasses === 1 ? '' : 'es'}, loss ${sft.trainLoss.map((l) => l.toFixed(3)).join(' -> ')}; wrote ${o.out} (${sft.seconds.toFixed(1)} s)` : o.out ? 'SFT: nothing kept, nothing written' : 'SFT: no --out, nothing trained',
      `Wall time: ${wall.toFixed(1)} s (collection ${collectSeconds.toFixed(1)} s; --threads ${o.threads ?? 'default'})`,
    ];
    io.stdout(lines.join('\n') + '\n');
    return 0;
  } finally {
    await provider?.dispose().catch(() => {});
    store.close();
    // A model that did not load leaves no new database behind.
    if (!loaded) file.discard();
  }
}
