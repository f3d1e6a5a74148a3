import path from 'node:path';
import { SingleBar, Presets } from 'cli-progress';
import Table from 'cli-table3';
import { Option, type Command } from 'commander';
import { constantFlag, guardNote } from '../../core/guards/index.ts';
import type { ModelProvider } from '../../core/model/index.ts';
import { openStore, type WeightVersion } from '../../core/store/index.ts';
import type { HeldoutResult, IterationMetrics, LoopEvent, TrainLoopReport } from '../../core/training/index.ts';
import type { SftSchedule, Trainer } from '../../core/training/index.ts';
import { startTrainLoop, trainableRoles } from '../../core/experiments/index.ts';
import { learningRoles, parseMode } from '../../core/rollouts/index.ts';
import type { ModelConfig } from '../../core/model/index.ts';
import { fileModelPort, llamaProvider, loadTrainer } from '../../models/factory.ts';
import { resolveModels } from '../../models/resolve.ts';
import { TRAIN_LOOP_DEFAULTS } from '../../core/api/client.ts';
import { act, commaList, dbOption, intOption, UsageError, type CommandContext } from '../args.ts';
import { asCliSync } from '../errors.ts';
import { addCorpusOption, addModelOptions, modelRequestOf, type ModelFlagValues } from '../flags.ts';
import { cliDatasets, defaultVersionsDir, loadWorkflowArg, toolsWithCorpus } from '../wiring.ts';
import type { Io } from '../io.ts';

/** What the command needs from outside (tests inject fakes). */
export interface TrainLoopDeps {
  trainer?: Trainer;
  makeProvider?: (cfg: ModelConfig) => Promise<ModelProvider>;
}

interface TrainLoopFlags extends ModelFlagValues {
  roles?: string;
  mode?: string;
  dataset: string;
  split: string;
  heldoutSplit: string;
  group: number;
  iterations: number;
  limit: number;
  lr: string;
  kl: string;
  temperature: string;
  maxGradNorm: string;
  entropy: string;
  heldout: number;
  heldoutSamples: number;
  heldoutTemperature?: string;
  warmStart: number;
  sftMix?: boolean;
  sftSteps: number;
  sftLr: string;
  sftMinScore?: string;
  sftRoles?: string;
  sftPool: number;
  versionsDir?: string;
  seed: number;
  db: string;
  dataDir?: string;
  json?: boolean;
  corpus?: string;
}

/** `flowlab train-loop <workflow.yaml> --dataset <name>`. */
export function define(cmd: Command, ctx: CommandContext, deps: TrainLoopDeps = {}): void {
  cmd
    .usage('<workflow.yaml> --dataset <name> [options]')
    .description([
      'Laptop RL: real weight updates of small GGUF models, per role. Each iteration samples G',
      'on-policy rollouts per task (temperature T, topK 0, topP 1, minP 0, token ids recorded), scores',
      "them with the reward ladder, computes each trained role's group-relative advantage, takes one",
      'policy-gradient step per trained role (REINFORCE with a KL penalty to the starting weights),',
      "writes each role's new GGUF version, records it with its lineage, and reloads the models.",
      'Held-out tasks are evaluated before and after with the same seeds.',
    ].join('\n'))
    .argument('<workflow.yaml>', 'the workflow file')
    .option('--roles <a,b>', 'roles to train, each with its own weights (default: every role)')
    .option('--mode <mode>', 'who learns, instead of --roles: single:<role>, upstream-downstream (the designer or planner with the executors), agent-skill, multi-agent')
    .addOption(new Option('--dataset <name>', 'e.g. learn-word, learn-team, learn-design, learn').makeOptionMandatory())
    .option('--split <name>', 'training split', 'train')
    .option('--heldout-split <name>', 'held-out split', 'heldout')
    .addOption(intOption('--group <G>', 'rollouts per task', { min: 1, max: 64, default: TRAIN_LOOP_DEFAULTS.group }))
    .addOption(intOption('--iterations <N>', 'iterations', { min: 1, default: TRAIN_LOOP_DEFAULTS.iterations }))
    .addOption(intOption('--limit <n>', 'tasks per iteration (fresh tasks each time)', { min: 1, default: TRAIN_LOOP_DEFAULTS.limit }))
    .option('--lr <x>', 'Adam learning rate', '3e-4')
    .option('--kl <x>', 'KL penalty weight (k3, to the starting model)', '0.02')
    .option('--temperature <T>', 'sampling temperature (> 0)', '1')
    .option('--entropy <x>', 'entropy bonus weight at grammar-restricted chosen tokens (0 = off; 0..1)', '0')
    .option('--max-grad-norm <x>', 'clip the gradient norm (0 = off)', '1')
    .addOption(intOption('--heldout <n>', 'held-out tasks (0 = no held-out evaluation)', { default: TRAIN_LOOP_DEFAULTS.heldout }))
    .addOption(intOption('--heldout-samples <k>', 'fixed-seed samples per held-out task', { min: 1, default: TRAIN_LOOP_DEFAULTS.heldoutSamples }))
    .option('--heldout-temperature <T>', 'held-out sampling temperature (0 = greedy) (default: --temperature)')
    .addOption(intOption('--warm-start <k>', "iterations 1..k take SFT steps on each role's successful runs instead of policy steps (0 = none)", { min: 0, default: TRAIN_LOOP_DEFAULTS.warmStart }))
    .option('--sft-mix', 'after the warm start, take the SFT step before the policy step every iteration')
    .addOption(intOption('--sft-steps <n>', 'SFT passes over the successful calls per iteration', { min: 1, max: 100, default: TRAIN_LOOP_DEFAULTS.sftSteps }))
    .option('--sft-lr <x>', 'SFT learning rate', '1e-3')
    .option('--sft-min-score <x|role=x,...>', "a run is a success for a role when its score is at least this (one number, or per role; others 1)")
    .option('--sft-roles <a,b>', 'the trained roles that take SFT steps (default: every trained role)')
    .addOption(intOption('--sft-pool <n>', 'SFT on up to n distinct successes per task class from every iteration so far, newest first, balanced over classes (0 = this iteration only)', { min: 0, max: 1000, default: TRAIN_LOOP_DEFAULTS.sftPool }));
  addModelOptions(cmd, { versions: true, contextSize: { min: 64, default: 512, help: 'context tokens per sequence' } });
  cmd
    .option('--versions-dir <dir>', 'where versions are written (default: flowlab-versions/ next to --db)')
    .addOption(intOption('--seed <n>', 'experiment seed', { default: TRAIN_LOOP_DEFAULTS.seed }))
    .addOption(dbOption())
    .option('--data-dir <dir>', 'dataset folder (default: $FLOWLAB_SHARED/data or ../shared/data)')
    .option('--json', 'print one JSON object (per-iteration metrics, held-out before/after)');
  addCorpusOption(cmd)
    .action(act(ctx, (file: string, o: TrainLoopFlags) => trainLoopCommand(file, o, ctx.io, deps)));
}

async function trainLoopCommand(workflowFile: string, values: TrainLoopFlags, io: Io, deps: TrainLoopDeps): Promise<number> {
  const { group: G, iterations, limit, heldout: heldoutN, heldoutSamples, seed } = values;
  const lr = numFlag(values.lr, 'lr', (x) => x > 0 && x < 1);
  const kl = numFlag(values.kl, 'kl', (x) => x >= 0);
  const temperature = numFlag(values.temperature, 'temperature', (x) => x > 0 && x <= 5);
  const maxGradNorm = numFlag(values.maxGradNorm, 'max-grad-norm', (x) => x >= 0);
  const entropy = entropyOf(values.entropy);
  const heldoutTemperature = values.heldoutTemperature === undefined ? temperature : numFlag(values.heldoutTemperature, 'heldout-temperature', (x) => x >= 0 && x <= 5);
  const sft = sftScheduleOf(values);

  const loaded = loadWorkflowArg(workflowFile, io, toolsWithCorpus(values.corpus, values.db, io).tools);
  const { file, tools } = loaded;
  const workflow = { ...loaded.workflow, file };
  if (values.roles && values.mode) throw new UsageError('use --roles or --mode, not both');
  const roles = asCliSync(() => trainableRoles(workflow, values.mode ? learningRoles(workflow.graph, parseMode(values.mode)) : commaList(values.roles)));
  const request = modelRequestOf(values, io);

  const store = openStore(values.db);
  try {
    const resolved = asCliSync(() => resolveModels(workflow.graph, request, (id) => store.weights.find(id)));
    const startVersions: Record<string, WeightVersion> = Object.fromEntries(Object.keys(resolved.versions).map((role) => [role, store.weights.get(resolved.versions[role]!.id)]));
    const versionsDir = path.resolve(values.versionsDir ?? defaultVersionsDir(store));
    const spec = {
      workflow, dataset: values.dataset, dataDir: values.dataDir, split: values.split, heldoutSplit: values.heldoutSplit, heldout: heldoutN, roles,
      group: G, iterations, tasksPerIteration: limit, lr, kl, temperature, maxGradNorm, heldoutSamples, heldoutTemperature, seed, models: resolved.config, startVersions, versionsDir,
      ...(sft && { sft }), ...(entropy !== undefined && { entropy }),
    };
    const trainer = deps.trainer ?? (await loadTrainer());

    const bar = new SingleBar({
      stream: process.stderr,
      format: 'train {bar} {value}/{total} it | score {score} | {roles} | {secs} s/it',
      noTTYOutput: !io.isTTY,
      notTTYSchedule: 5000,
      hideCursor: io.isTTY,
    }, Presets.shades_classic);
    let started = false;
    const onEvent = (e: LoopEvent) => {
      if (e.type === 'heldout') {
        if (!started) io.stderr(`Held-out ${e.phase}: mean reward ${e.result.score.toFixed(3)} over ${e.result.samples} samples (${e.result.experimentId})\n`);
        return;
      }
      if (e.type === 'iteration') {
        if (!started) {
          bar.start(iterations, 0, { score: '-', roles: '', secs: '-' });
          started = true;
        }
        bar.update(e.metrics.iteration, { score: e.metrics.score.toFixed(2), roles: roleLine(e.metrics), secs: e.metrics.seconds.total.toFixed(2) });
      }
    };
    const models = { ...fileModelPort(deps.makeProvider ?? llamaProvider), verify: undefined };
    const loop = asCliSync(() => startTrainLoop(spec, { store, models, tools, trainer, datasets: cliDatasets }, { onEvent }));
    const onSigint = () => {
      io.stderr('\nStopping after this iteration: the versions written so far are recorded.\n');
      loop.cancel();
    };
    process.once('SIGINT', onSigint);
    io.stderr(`Train loop on ${values.dataset}: roles ${roles.join(', ')}; ${limit} tasks x G=${G} per iteration, ${iterations} iterations, lr ${lr}, kl ${kl}, T ${temperature} -> ${versionsDir}\n`);
    io.stderr(`Loop id ${loop.loopId}: if it is interrupted, continue it with flowlab resume ${loop.loopId}\n`);
    let report: TrainLoopReport;
    try {
      report = await loop.done;
    } finally {
      process.off('SIGINT', onSigint);
      if (started) bar.stop();
    }
    if (report.heldout) io.stderr(`Held-out after: mean reward ${report.heldout.after.score.toFixed(3)} over ${report.heldout.after.samples} samples (${report.heldout.after.experimentId})\n`);
    io.stdout(values.json ? JSON.stringify(trainLoopJson(report)) + '\n' : formatTrainLoop(report));
    return report.cancelled ? 130 : 0;
  } finally {
    store.close();
  }
}

/**
 * The SFT schedule of `--warm-start`, `--sft-mix`, `--sft-steps`, `--sft-lr`, `--sft-min-score`
 * (core/training/types.ts SftSchedule), or undefined when there is neither a warm start nor a mix.
 * `--sft-min-score`: one number in (0, 1], or `role=x` pairs separated by commas.
 * Errors: UsageError naming the flag.
 */
export function sftScheduleOf(v: Pick<TrainLoopFlags, 'warmStart' | 'sftMix' | 'sftSteps' | 'sftLr' | 'sftMinScore' | 'sftRoles'> & { sftPool?: number }): SftSchedule | undefined {
  if (!v.warmStart && !v.sftMix) {
    if (v.sftMinScore !== undefined || v.sftRoles !== undefined || v.sftPool) throw new UsageError(`--${v.sftMinScore !== undefined ? 'sft-min-score' : v.sftRoles !== undefined ? 'sft-roles' : 'sft-pool'} needs --warm-start <k> or --sft-mix`);
    return undefined;
  }
  const lr = numFlag(v.sftLr, 'sft-lr', (x) => x > 0 && x < 1);
  const score = (x: string) => numFlag(x, 'sft-min-score', (n) => n > 0 && n <= 1);
  let minScore: SftSchedule['minScore'] = 1;
  if (v.sftMinScore !== undefined) {
    if (!v.sftMinScore.includes('=')) minScore = score(v.sftMinScore);
    else {
      const pairs = commaList(v.sftMinScore) ?? [];
      minScore = Object.fromEntries(pairs.map((p) => {
        const [role, x, ...rest] = p.split('=');
        if (!role || x === undefined || rest.length) throw new UsageError(`--sft-min-score: "${p}" is not role=score`);
        return [role, score(x)];
      }));
    }
  }
  const roles = commaList(v.sftRoles);
  return { warmStart: v.warmStart, mix: Boolean(v.sftMix), steps: v.sftSteps, lr, minScore, ...(roles?.length && { roles }), ...(v.sftPool && { pool: v.sftPool }) };
}

/** A number flag `ok` accepts. Errors: UsageError `--<name>: bad value "<v>"`. */
/**
 * The policy step's entropy bonus weight of `--entropy` (core/training/port.ts
 * PolicyOptions.entropy): a number in [0, 1]; 0 (the default) is none (undefined).
 * Throws UsageError naming the flag otherwise.
 */
export function entropyOf(v: string): number | undefined {
  const x = numFlag(v, 'entropy', (y) => y >= 0 && y <= 1);
  return x > 0 ? x : undefined;
}

function numFlag(v: string, name: string, ok: (x: number) => boolean): number {
  const x = Number(v);
  if (!Number.isFinite(x) || !ok(x)) throw new UsageError(`--${name}: bad value "${v}"`);
  return x;
}

function roleLine(m: IterationMetrics): string {
  return Object.entries(m.roles).map(([r, x]) => `${r} h ${x.reward.toFixed(2)} kl ${(x.kl ?? 0).toFixed(4)}`).join(' | ');
}

const r4 = (x: number | undefined) => (x === undefined ? null : Math.round(x * 1e4) / 1e4);

/** The `--json` shape: per-iteration metrics per role, and the held-out reward before and after. */
export function trainLoopJson(r: TrainLoopReport) {
  return {
    loopId: r.loopId,
    roles: r.roles,
    hyper: r.hyper,
    cancelled: r.cancelled,
    iterations: r.iterations.map((m) => ({
      iteration: m.iteration,
      experimentId: m.experimentId,
      score: r4(m.score),
      classes: m.classes ?? null,
      sampledTokens: m.sampledTokens,
      sampleTokensPerSecond: Math.round(m.sampleTokensPerSecond),
      seconds: { sampling: r4(m.seconds.sampling), training: r4(m.seconds.training), writeReload: r4(m.seconds.writeReload), total: r4(m.seconds.total) },
      roles: Object.fromEntries(Object.entries(m.roles).map(([role, x]) => [role, {
        reward: r4(x.reward),
        rungs: Object.fromEntries(Object.entries(x.rungs).map(([k, v]) => [k, r4(v)])),
        kl: r4(x.kl),
        loss: r4(x.loss),
        samples: x.samples,
        signalSamples: x.signalSamples,
        zeroSpreadGroups: x.zeroSpreadGroups,
        step: x.step ?? null,
        sftSequences: x.sftSequences ?? null,
        sftLoss: r4(x.sftLoss),
        wiringRootFailures: r4(x.wiringRootFailures),
        trainTokens: x.trainTokens,
        trainTokensPerSecond: x.trainTokensPerSecond === undefined ? null : Math.round(x.trainTokensPerSecond),
        versionId: x.versionId ?? null,
        path: x.path,
      }])),
    })),
    heldout: r.heldout
      ? {
          before: heldoutJson(r.heldout.before),
          after: heldoutJson(r.heldout.after),
        }
      : null,
    versions: r.versions,
    finalModels: r.finalModels,
  };
}

function heldoutJson(h: HeldoutResult) {
  return { score: r4(h.score), accuracy: r4(h.accuracy), classAccuracy: r4(h.classAccuracy), constant: h.constant ?? null, guard: h.guard ?? null, novelty: h.novelty ?? null, what: h.what ?? null, classes: h.classes ?? null, wiringRootFailures: h.wiringRootFailures ?? null, samples: h.samples, roles: h.roles, experimentId: h.experimentId, examples: h.examples };
}

const SPARK = '▁▂▃▄▅▆▇█';
/** A one-line curve of values in [lo, hi]. */
export function sparkline(xs: readonly number[], lo = 0, hi = 1): string {
  return xs.map((x) => SPARK[Math.max(0, Math.min(SPARK.length - 1, Math.round(((x - lo) / Math.max(1e-9, hi - lo)) * (SPARK.length - 1))))]).join('');
}

export function formatTrainLoop(r: TrainLoopReport): string {
  const t = new Table({
    head: ['it', 'score', ...r.roles.flatMap((role) => [`${role} h`, 'rungs f/v/e/a/c', 'step', 'wiring/run', 'KL', 'train tok/s']), 'sample tok/s', 's sample/train/write'],
    style: { head: [], border: [], compact: true },
  });
  for (const m of r.iterations) {
    t.push([
      m.iteration,
      m.score.toFixed(3),
      ...r.roles.flatMap((role) => {
        const x = m.roles[role]!;
        const rg = x.rungs;
        const kind = x.step ?? (x.loss !== undefined ? 'grpo' : 'none');
        const step = kind === 'none' ? '-' : x.sftSequences !== undefined ? `${kind} (${x.sftSequences})` : kind;
        return [x.reward.toFixed(3), [rg.format, rg.validity, rg.completion, rg.correctness, rg.credit].map((v) => v.toFixed(2)).join('/'), step, (x.wiringRootFailures ?? 0).toFixed(2), (x.kl ?? 0).toFixed(4), x.trainTokensPerSecond ? Math.round(x.trainTokensPerSecond) : '-'];
      }),
      Math.round(m.sampleTokensPerSecond),
      `${m.seconds.sampling.toFixed(2)}/${m.seconds.training.toFixed(2)}/${m.seconds.writeReload.toFixed(2)}`,
    ]);
  }
  const lines = [`Train loop ${r.loopId}: ${r.iterations.length} iterations, roles ${r.roles.join(', ')} (lr ${r.hyper.lr}, kl ${r.hyper.kl}, T ${r.hyper.temperature}, G ${r.hyper.group})`, t.toString()];
  lines.push(`score curve   ${sparkline(r.iterations.map((m) => m.score))}`);
  for (const role of r.roles) {
    const hs = r.iterations.map((m) => m.roles[role]!.reward);
    lines.push(`${role} h curve ${sparkline(hs, Math.min(...hs, 0), Math.max(...hs, 1))}  (${hs.map((h) => h.toFixed(2)).join(' ')})`);
    const wf = r.iterations.map((m) => m.roles[role]!.wiringRootFailures ?? 0);
    if (wf.some((x) => x > 0)) lines.push(`${role} wiring root failures per run ${sparkline(wf, 0, Math.max(...wf, 1e-9))}  (${wf.map((x) => x.toFixed(2)).join(' ')})`);
  }
  if (r.iterations.length) {
    const n = r.iterations.length;
    const avg = (f: (m: IterationMetrics) => number) => r.iterations.reduce((s, m) => s + f(m), 0) / n;
    lines.push(`Seconds per iteration: ${avg((m) => m.seconds.total).toFixed(2)} (sampling ${avg((m) => m.seconds.sampling).toFixed(2)}, training ${avg((m) => m.seconds.training).toFixed(2)}, write+reload ${avg((m) => m.seconds.writeReload).toFixed(2)})`);
  }
  if (r.heldout) {
    const { before, after } = r.heldout;
    lines.push(`Held-out mean reward: ${before.score.toFixed(3)} before -> ${after.score.toFixed(3)} after (${after.samples} samples, same seeds; flowlab compare ${before.experimentId} ${after.experimentId})`);
    if (before.accuracy !== undefined && after.accuracy !== undefined && after.constant) {
      lines.push(`Held-out accuracy: ${before.accuracy.toFixed(3)} before -> ${after.accuracy.toFixed(3)} after; best constant policy (always ${JSON.stringify(after.constant.answer)}) ${after.constant.accuracy.toFixed(3)}`);
    }
    if (after.what) lines.push(`Held-out split: what is new against training: ${after.what}`);
    for (const [phase, h] of [['before', before], ['after', after]] as const) {
      if (h.guard) lines.push(`Held-out guard ${phase}: ${guardNote(h.guard)}${h.guard.constant ? ' (the accuracy is a constant policy\'s)' : ''}`);
    }
    if (before.novelty && after.novelty) {
      const kinds = [...new Set([...Object.keys(before.novelty), ...Object.keys(after.novelty)])].sort();
      lines.push(`Held-out accuracy by novelty, before -> after (runs): ${kinds.map((k) => `${k} ${before.novelty![k]?.accuracy.toFixed(3) ?? '-'} -> ${after.novelty![k]?.accuracy.toFixed(3) ?? '-'} (${after.novelty![k]?.runs ?? 0})${after.novelty![k]?.guard.constant ? ` ${constantFlag(after.novelty![k]!.guard)}` : ''}`).join(', ')}`);
    }
    if (before.classes && after.classes && after.constant) {
      const names = [...new Set([...Object.keys(before.classes), ...Object.keys(after.classes)])].sort();
      const pct = (x: number | undefined) => (x === undefined ? '-' : x.toFixed(2));
      lines.push(`Held-out right class: ${pct(before.classAccuracy)} before -> ${pct(after.classAccuracy)} after; best constant policy (always ${after.constant.class}) ${pct(after.constant.classAccuracy)}`);
      lines.push(`Held-out per class, right class / correct, before -> after (runs): ${names.map((c) => `${c} ${pct(before.classes![c]?.classRight)}/${pct(before.classes![c]?.accuracy)} -> ${pct(after.classes![c]?.classRight)}/${pct(after.classes![c]?.accuracy)} (${after.classes![c]?.runs ?? 0})`).join(', ')}`);
    }
    for (const role of r.roles) {
      const b = before.wiringRootFailures?.[role] ?? 0;
      const a = after.wiringRootFailures?.[role] ?? 0;
      if (b > 0 || a > 0) lines.push(`Held-out wiring root failures per run, ${role}: ${b.toFixed(3)} before -> ${a.toFixed(3)} after`);
    }
    for (const role of r.roles) {
      const ex = r.heldout.after.examples[role]?.[0];
      if (ex !== undefined) lines.push(`  ${role} after, e.g.: ${JSON.stringify(ex.slice(0, 160))}`);
    }
  }
  for (const role of r.roles) {
    const v = r.versions[role] ?? [];
    lines.push(`${role}: ${v.length} versions, last ${v[v.length - 1] ?? '(none)'} -> ${r.finalModels[role]}`);
  }
  if (r.roles.length) lines.push(`Use a version in a run: flowlab run <workflow> --role-version ${r.roles[0]}=<version-id>; list them: flowlab versions`);
  return lines.join('\n') + '\n';
}
