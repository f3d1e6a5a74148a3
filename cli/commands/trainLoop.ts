import path from 'node:path';
import { SingleBar, Presets } from 'cli-progress';
import Table from 'cli-table3';
import { Option, type Command } from 'commander';
import type { ModelProvider } from '../../core/model/index.ts';
import { openStore, type WeightVersion } from '../../core/store/index.ts';
import type { IterationMetrics, LoopEvent, TrainLoopReport } from '../../core/training/index.ts';
import type { Trainer } from '../../core/training/index.ts';
import { startTrainLoop, trainableRoles } from '../../core/experiments/index.ts';
import { learningRoles, parseMode } from '../../core/rollouts/index.ts';
import type { ModelConfig } from '../../core/model/index.ts';
import { fileModelPort, llamaProvider, loadTrainer } from '../../models/factory.ts';
import { resolveModels } from '../../models/resolve.ts';
import { act, commaList, dbOption, intOption, UsageError, type CommandContext } from '../args.ts';
import { asCliSync } from '../errors.ts';
import { addModelOptions, defaultVersionsDir, modelRequestOf, loadWorkflowArg, type ModelFlagValues } from '../flags.ts';
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
  heldout: number;
  heldoutSamples: number;
  heldoutTemperature?: string;
  versionsDir?: string;
  seed: number;
  db: string;
  dataDir?: string;
  json?: boolean;
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
    .addOption(new Option('--dataset <name>', 'e.g. learn-word, learn-team, learn').makeOptionMandatory())
    .option('--split <name>', 'training split', 'train')
    .option('--heldout-split <name>', 'held-out split', 'heldout')
    .addOption(intOption('--group <G>', 'rollouts per task', { min: 1, max: 64, default: 8 }))
    .addOption(intOption('--iterations <N>', 'iterations', { min: 1, default: 10 }))
    .addOption(intOption('--limit <n>', 'tasks per iteration (fresh tasks each time)', { min: 1, default: 4 }))
    .option('--lr <x>', 'Adam learning rate', '3e-4')
    .option('--kl <x>', 'KL penalty weight (k3, to the starting model)', '0.02')
    .option('--temperature <T>', 'sampling temperature (> 0)', '1')
    .option('--max-grad-norm <x>', 'clip the gradient norm (0 = off)', '1')
    .addOption(intOption('--heldout <n>', 'held-out tasks (0 = no held-out evaluation)', { default: 32 }))
    .addOption(intOption('--heldout-samples <k>', 'fixed-seed samples per held-out task', { min: 1, default: 4 }))
    .option('--heldout-temperature <T>', 'held-out sampling temperature (0 = greedy) (default: --temperature)');
  addModelOptions(cmd, { versions: true, contextSize: { min: 64, default: 512, help: 'context tokens per sequence' } });
  cmd
    .option('--versions-dir <dir>', 'where versions are written (default: flowlab-versions/ next to --db)')
    .addOption(intOption('--seed <n>', 'experiment seed', { default: 0 }))
    .addOption(dbOption())
    .option('--data-dir <dir>', 'dataset folder (default: $FLOWLAB_SHARED/data or ../shared/data)')
    .option('--json', 'print one JSON object (per-iteration metrics, held-out before/after)')
    .action(act(ctx, (file: string, o: TrainLoopFlags) => trainLoopCommand(file, o, ctx.io, deps)));
}

async function trainLoopCommand(workflowFile: string, values: TrainLoopFlags, io: Io, deps: TrainLoopDeps): Promise<number> {
  const { group: G, iterations, limit, heldout: heldoutN, heldoutSamples, seed } = values;
  const lr = numFlag(values.lr, 'lr', (x) => x > 0 && x < 1);
  const kl = numFlag(values.kl, 'kl', (x) => x >= 0);
  const temperature = numFlag(values.temperature, 'temperature', (x) => x > 0 && x <= 5);
  const maxGradNorm = numFlag(values.maxGradNorm, 'max-grad-norm', (x) => x >= 0);
  const heldoutTemperature = values.heldoutTemperature === undefined ? temperature : numFlag(values.heldoutTemperature, 'heldout-temperature', (x) => x >= 0 && x <= 5);

  const loaded = loadWorkflowArg(workflowFile);
  const { file, tools } = loaded;
  const workflow = { ...loaded.workflow, file };
  if (values.roles && values.mode) throw new UsageError('use --roles or --mode, not both');
  const roles = asCliSync(() => trainableRoles(workflow, values.mode ? learningRoles(workflow.graph, parseMode(values.mode)) : commaList(values.roles)));
  const request = modelRequestOf(values);

  const store = openStore(values.db);
  try {
    const resolved = asCliSync(() => resolveModels(workflow.graph, request, (id) => store.weights.find(id)));
    const startVersions: Record<string, WeightVersion> = Object.fromEntries(Object.keys(resolved.versions).map((role) => [role, store.weights.get(resolved.versions[role]!.id)]));
    const versionsDir = path.resolve(values.versionsDir ?? defaultVersionsDir(store));
    const spec = {
      workflow, dataset: values.dataset, dataDir: values.dataDir, split: values.split, heldoutSplit: values.heldoutSplit, heldout: heldoutN, roles,
      group: G, iterations, tasksPerIteration: limit, lr, kl, temperature, maxGradNorm, heldoutSamples, heldoutTemperature, seed, models: resolved.config, startVersions, versionsDir,
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
    const loop = asCliSync(() => startTrainLoop(spec, { store, models, tools, trainer }, { onEvent }));
    const onSigint = () => {
      io.stderr('\nStopping after this iteration: the versions written so far are recorded.\n');
      loop.cancel();
    };
    process.once('SIGINT', onSigint);
    io.stderr(`Train loop on ${values.dataset}: roles ${roles.join(', ')}; ${limit} tasks x G=${G} per iteration, ${iterations} iterations, lr ${lr}, kl ${kl}, T ${temperature} -> ${versionsDir}\n`);
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

/** A number flag `ok` accepts. Errors: UsageError `--<name>: bad value "<v>"`. */
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
        trainTokens: x.trainTokens,
        trainTokensPerSecond: x.trainTokensPerSecond === undefined ? null : Math.round(x.trainTokensPerSecond),
        versionId: x.versionId ?? null,
        path: x.path,
      }])),
    })),
    heldout: r.heldout
      ? {
          before: { score: r4(r.heldout.before.score), samples: r.heldout.before.samples, roles: r.heldout.before.roles, experimentId: r.heldout.before.experimentId, examples: r.heldout.before.examples },
          after: { score: r4(r.heldout.after.score), samples: r.heldout.after.samples, roles: r.heldout.after.roles, experimentId: r.heldout.after.experimentId, examples: r.heldout.after.examples },
        }
      : null,
    versions: r.versions,
    finalModels: r.finalModels,
  };
}

const SPARK = '▁▂▃▄▅▆▇█';
/** A one-line curve of values in [lo, hi]. */
export function sparkline(xs: readonly number[], lo = 0, hi = 1): string {
  return xs.map((x) => SPARK[Math.max(0, Math.min(SPARK.length - 1, Math.round(((x - lo) / Math.max(1e-9, hi - lo)) * (SPARK.length - 1))))]).join('');
}

export function formatTrainLoop(r: TrainLoopReport): string {
  const t = new Table({
    head: ['it', 'score', ...r.roles.flatMap((role) => [`${role} h`, 'rungs f/v/e/a/c', 'KL', 'train tok/s']), 'sample tok/s', 's sample/train/write'],
    style: { head: [], border: [], compact: true },
  });
  for (const m of r.iterations) {
    t.push([
      m.iteration,
      m.score.toFixed(3),
      ...r.roles.flatMap((role) => {
        const x = m.roles[role]!;
        const rg = x.rungs;
        return [x.reward.toFixed(3), [rg.format, rg.validity, rg.completion, rg.correctness, rg.credit].map((v) => v.toFixed(2)).join('/'), (x.kl ?? 0).toFixed(4), x.trainTokensPerSecond ? Math.round(x.trainTokensPerSecond) : '-'];
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
  }
  if (r.iterations.length) {
    const n = r.iterations.length;
    const avg = (f: (m: IterationMetrics) => number) => r.iterations.reduce((s, m) => s + f(m), 0) / n;
    lines.push(`Seconds per iteration: ${avg((m) => m.seconds.total).toFixed(2)} (sampling ${avg((m) => m.seconds.sampling).toFixed(2)}, training ${avg((m) => m.seconds.training).toFixed(2)}, write+reload ${avg((m) => m.seconds.writeReload).toFixed(2)})`);
  }
  if (r.heldout) {
    lines.push(`Held-out mean reward: ${r.heldout.before.score.toFixed(3)} before -> ${r.heldout.after.score.toFixed(3)} after (${r.heldout.after.samples} samples, same seeds; flowlab compare ${r.heldout.before.experimentId} ${r.heldout.after.experimentId})`);
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
