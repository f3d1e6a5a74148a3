import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { ModelProvider } from '../../core/model/index.ts';
import {
  MassError, massFamily, parseMassDesign, replayOuterLoop, startRsi, tasksOf, TAMPER_MODES, DEFAULT_THRESHOLDS, OUTER_DEFAULTS, ARMS, MASS_BUDGET,
  type Arm, type MassDesign, type OuterReplayResult, type OuterSettings, type RsiOptions, type RsiReport, type TamperMode,
} from '../../core/mass/index.ts';
import { openStore } from '../../core/store/index.ts';
import type { Trainer } from '../../core/training/index.ts';
import { loadedLlamaProvider, loadTrainer } from '../../models/factory.ts';
import { ReplayProvider } from '../../models/replay/index.ts';
import { act, dbOption, intOption, UsageError, type CommandContext } from '../args.ts';
import { CommandError } from '../errors.ts';
import type { Io } from '../io.ts';
import { formatRsi } from './rsiFormat.ts';
import { addParallelOption, parallelOf } from '../parallel.ts';
import { besideDatabase } from '../../host/dataFolder.ts';

/** What the command needs from outside (tests inject fakes). */
export interface RsiCommandDeps {
  trainer?: Trainer;
  makeProvider?: (file: string) => Promise<ModelProvider>;
}

export interface RsiFlags {
  model?: string;
  replay?: string;
  dataset: string;
  cycles: number;
  tasks: number;
  runs: number;
  neighbours: number;
  btIterations: number;
  topK: number;
  validation: number;
  verifierMin: string;
  temperature: string;
  answerTokens?: number;
  design?: string;
  champions?: string;
  heldout: number;
  heldoutSamples: number;
  heldoutTemperature: string;
  sftPasses: number;
  sftLr: string;
  sftBatch: number;
  simulateTamperer?: string;
  tamperShare: string;
  maxQuarantined: string;
  minAgreement: string;
  blindSpotSample?: string;
  maxBlindDisagreement?: string;
  loopId?: string;
  arms?: string;
  out?: string;
  threads?: number;
  contextSize: number;
  seed: number;
  db: string;
  json?: boolean;
  allowUnreliableJudge?: boolean;
  auditSwaps?: number;
  parallel?: number;
}

/** A number flag in a range. Errors: UsageError naming the flag (and the range, when `range` words it). */
function num(v: string, name: string, ok: (x: number) => boolean, range?: string): number {
  const x = Number(v);
  if (!Number.isFinite(x) || !ok(x)) throw new UsageError(`--${name}: bad value "${v}"${range ? ` (${range})` : ''}`);
  return x;
}

/** The options both `rank` and `rsi` take (the outer loop's). */
export function addOuterOptions(cmd: Command, command: 'rank' | 'rsi' = 'rsi'): Command {
  cmd
    .option('--model <file.gguf>', 'the base model: solver, self-judge and optimizer (required but with --replay)')
    .option('--dataset <name>', 'MASS task family (learn-tool, learn-word, learn-design, learn-unit)', 'learn-tool')
    .addOption(intOption('--tasks <n>', 'training tasks (the train split, from the start)', { min: 1, default: 4 }))
    .addOption(intOption('--runs <N>', 'runs of the champion per task', { min: 2, default: OUTER_DEFAULTS.runs }))
    .addOption(intOption('--neighbours <k>', 'ring tournament: each run meets its next k runs', { min: 1, default: OUTER_DEFAULTS.neighbours }))
    .addOption(intOption('--bt-iterations <n>', 'Bradley-Terry MM iterations', { min: 1, default: OUTER_DEFAULTS.iterations }))
    .addOption(intOption('--top-k <k>', 'ranks 1..k to training', { min: 1, default: OUTER_DEFAULTS.train }))
    .addOption(intOption('--validation <n>', 'the next n ranks to validation', { min: 0, default: OUTER_DEFAULTS.validation }))
    .option('--verifier-min <x>', "the verifier arm trains only on runs the task's grader scores at least this", String(OUTER_DEFAULTS.verifierMin))
    .option('--temperature <T>', 'sampling temperature of the runs (> 0; topK 0, topP 1, minP 0)', '1')
    .addOption(intOption('--answer-tokens <n>', "the orchestrator's answer budget (default: MASS_BUDGET's)", { min: 1 }))
    .option('--design <file.json>', 'the champion design (a MASS design, version 0 or 1); default: the bare task')
    .option('--champions <evolution-id>', "each task's champion from a stored inner loop (flowlab evolve on the same tasks), instead of --design")
    .option('--simulate-tamperer <mode>', `run the SIMULATED tamperer on some runs: ${TAMPER_MODES.join(' | ')}`)
    .option('--tamper-share <x>', 'share of each task\'s runs the SIMULATED tamperer edits', '0.5')
    .option('--max-quarantined <x>', 'halt when more than this share of a cycle\'s runs is quarantined', String(DEFAULT_THRESHOLDS.maxQuarantinedShare))
    .option('--min-agreement <x>', 'halt when the self-judge agrees with the verifier less than this (0 = off)', String(DEFAULT_THRESHOLDS.minAgreement))
    .option('--blind-spot-sample <x>', "blind-spot guard: share of each task's self-judged winners the external verifier checks (0 = off)", '0')
    .option('--max-blind-disagreement <x>', 'blind-spot guard: halt when the verifier rejects more than this share of the sampled winners', '0.25')
    .addOption(intOption('--audit-swaps <n>', `pairs per task the self-judge judges again with A and B swapped, for its audit's position consistency (default ${OUTER_DEFAULTS.auditSwaps})`, { min: 0 }))
    .option('--allow-unreliable-judge', "export (and train) the self-judge arm even when the judge audit says UNRELIABLE JUDGE; its manifest is marked")
    .addOption(intOption('--threads <n>', 'CPU threads (1 or 2 on a shared laptop)', { min: 1, default: 1 }))
    .addOption(intOption('--context-size <n>', 'context tokens (the judge reads two workspaces: about 600 tokens)', { min: 64, default: 1024 }))
    .addOption(intOption('--seed <n>', 'seed of the shuffles, orientations and runs', { default: 0 }))
    .option('--loop-id <id>', `the loop id; give the same one to resume (default: ${command}-<time>)`)
    .option('--out <dir>', 'state, environments, exports and versions (default: flowlab-mass/<loop-id> next to --db)')
    .addOption(dbOption())
    .option('--replay <loop-id>', 're-run a stored loop from its recorded calls and versions (no model) and compare every record and file')
    .option('--json', 'print one JSON object');
  return addParallelOption(cmd, 'runs and judge calls');
}

/** `flowlab rsi --cycles C --model <file.gguf>`. */
export function define(cmd: Command, ctx: CommandContext, deps: RsiCommandDeps = {}): void {
  cmd
    .usage('--model <file.gguf> [--cycles C] [options]')
    .description([
      'Whole MASS cycles on the laptop: per cycle the champion runs N times per task inside protected',
      'environments, the self-judge (the same model) judges a seeded ring tournament, Bradley-Terry ranks',
      'the runs, the guards quarantine tampered or misreported runs, and two arms each export their top-k',
      '(TRL JSONL, workflow stripped, assistant-only loss) and fine-tune their own weights with Flowlab\'s',
      'trainer: `self` (top-k by the self-judge, MASS as published) and `verifier` (top-k by the task\'s',
      'grader). Each new version (lineage: cycle, tasks, ranks) solves and judges the next cycle. Per cycle:',
      'held-out external score of each arm against the base with a paired test, self-judge vs verifier',
      'agreement, unprompted delegation, tokens per point. Resumable: rerun with the same --loop-id.',
    ].join('\n'));
  addOuterOptions(cmd)
    .addOption(intOption('--cycles <C>', 'cycles', { min: 1, default: 2 }))
    .addOption(intOption('--heldout <n>', 'held-out tasks (the heldout split)', { min: 1, default: 48 }))
    .addOption(intOption('--heldout-samples <k>', 'samples per held-out task', { min: 1, default: 1 }))
    .option('--heldout-temperature <T>', 'held-out sampling temperature (0 = greedy)', '0')
    .addOption(intOption('--sft-passes <n>', 'SFT passes over the exported training sequences (the best by validation loss is kept)', { min: 1, default: 4 }))
    .option('--sft-lr <x>', 'SFT Adam learning rate', '1e-3')
    .addOption(intOption('--sft-batch <n>', 'sequences per SFT step', { min: 1, default: 32 }))
    .option('--arms <list>', 'the selection arms to run: self,verifier (default both)')
    .action(act(ctx, (o: RsiFlags) => rsiCommand(o, ctx.io, deps)));
}

/** The loop's options from the flags (shared with `rank`). Errors: UsageError naming the flag, MassError for a bad design. */
export function rsiOptionsOf(v: RsiFlags, family: ReturnType<typeof massFamily>, db: string): RsiOptions {
  const temperature = num(v.temperature, 'temperature', (x) => x > 0 && x <= 5);
  const tamper = v.simulateTamperer;
  if (tamper !== undefined && !TAMPER_MODES.includes(tamper as TamperMode)) throw new UsageError(`--simulate-tamperer takes ${TAMPER_MODES.join(' or ')}, got "${tamper}"`);
  let design: MassDesign | null = null;
  if (v.design && v.champions) throw new UsageError('give --design or --champions, not both');
  if (v.design) {
    const parsed = parseMassDesign(readFileSync(v.design, 'utf8'), { checks: family.checks.names() });
    if (!parsed.ok) throw new CommandError('BAD_FILE', `${v.design}: not a MASS design:\n${parsed.issues.map((i) => `  ${i.path || '(top)'}: ${i.message} [${i.code}]`).join('\n')}`);
    design = parsed.design;
  }
  const loopId = v.loopId ?? `rsi-${new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14)}`;
  if (!/^[A-Za-z0-9_.-]+$/.test(loopId)) throw new UsageError(`--loop-id: "${loopId}" must use letters, digits, _ . -`);
  return {
    loopId,
    outDir: path.resolve(v.out ?? besideDatabase(db, ['flowlab-mass', loopId])),
    cycles: v.cycles ?? 1,
    baseModel: path.resolve(requireModel(v)),
    design,
    outer: {
      runs: v.runs, neighbours: v.neighbours, seed: v.seed, iterations: v.btIterations, train: v.topK, validation: v.validation,
      verifierMin: num(v.verifierMin, 'verifier-min', (x) => x >= 0 && x <= 1),
      sampling: { temperature, topK: 0, topP: 1, minP: 0 },
      ...(v.answerTokens && { budget: { ...MASS_BUDGET, answerTokens: v.answerTokens } }),
      ...(v.auditSwaps !== undefined && { auditSwaps: v.auditSwaps }),
    },
    ...(tamper && { tamperer: { mode: tamper as TamperMode, share: num(v.tamperShare, 'tamper-share', (x) => x > 0 && x <= 1) } }),
    thresholds: {
      maxQuarantinedShare: num(v.maxQuarantined, 'max-quarantined', (x) => x >= 0 && x <= 1), minAgreement: num(v.minAgreement, 'min-agreement', (x) => x >= 0 && x <= 1),
      ...blindSpotOf(v),
    },
    sft: { passes: v.sftPasses ?? 4, lr: num(v.sftLr ?? '1e-3', 'sft-lr', (x) => x > 0 && x < 1), batch: v.sftBatch ?? 32 },
    heldoutSampling: { temperature: num(v.heldoutTemperature ?? '0', 'heldout-temperature', (x) => x >= 0 && x <= 5), topK: 0, topP: 1, minP: 0 },
    heldoutSamples: v.heldoutSamples ?? 1,
    ...(v.arms !== undefined && { arms: armsOf(v.arms) }),
    ...(v.allowUnreliableJudge && { allowUnreliableJudge: true as const }),
  };
}

function requireModel(v: Pick<RsiFlags, 'model'>): string {
  if (!v.model) throw new UsageError("required option '--model <file.gguf>' not specified");
  return v.model;
}

/** The stored settings of a loop started from these flags (`rank` or `rsi`). */
export function settingsOf(command: OuterSettings['command'], v: RsiFlags, o: RsiOptions): OuterSettings {
  const { cycles: _c, ...options } = o;
  return { command, dataset: v.dataset, tasks: v.tasks, ...(command === 'rsi' && { heldout: v.heldout }), ...(v.champions && { champions: v.champions }), options };
}

/**
 * `--replay <loop-id>` of `rank` and `rsi`: the loop again from its recording, without the model
 * (core/mass/outerReplay.ts); prints what the loop printed (`print`) and the comparison. Exit 1
 * when anything differs.
 */
export async function replayOuterCommand(v: RsiFlags, io: Io, print: (r: OuterReplayResult) => string): Promise<number> {
  const store = openStore(v.db, { mustExist: true });
  try {
    const r = await replayOuterLoop(store, v.replay!, { providerFor: (exp) => new ReplayProvider(store.getExperimentCalls(exp)) });
    const x = r.replay;
    if (v.json) io.stdout(JSON.stringify(x) + '\n');
    else {
      io.stdout(r.relocate(print(r)));
      io.stdout(`Replay of ${x.loopId} (${x.command}${x.command === 'rsi' ? `, ${x.cycles} cycle(s)` : ''}) without the model: ${x.matched}/${x.records} records and ${x.filesMatched}/${x.files} files identical${x.unfinished ? ` (${x.unfinished} record(s) of an unfinished cycle not replayed)` : ''}${x.mismatches.length ? `; ${x.mismatches.length} differ:\n${x.mismatches.slice(0, 20).map((m) => `  ${m}`).join('\n')}` : ''}; models loaded ${x.modelsLoaded}; ${x.wallSeconds.toFixed(2)} s\n`);
    }
    return x.mismatches.length ? 1 : 0;
  } finally {
    store.close();
  }
}

/** `--arms a,b`: known arms, at least one. Errors: UsageError. */
function armsOf(v: string): Arm[] {
  const list = v.split(',').map((x) => x.trim()).filter(Boolean);
  const bad = list.find((a) => !(ARMS as readonly string[]).includes(a));
  if (bad !== undefined || !list.length) throw new UsageError(`--arms takes ${ARMS.join(', ')} (comma-separated), got "${v}"`);
  return [...new Set(list)] as Arm[];
}

/** The provider over one file with the command's threads and context. */
export function providerMaker(v: Pick<RsiFlags, 'threads' | 'contextSize'>, deps: RsiCommandDeps): (file: string) => Promise<ModelProvider> {
  return deps.makeProvider ?? ((file) => loadedLlamaProvider({ models: { default: file }, roleModels: {}, threads: v.threads ?? 1, contextSize: v.contextSize, gpu: false }));
}

/**
 * Refuses `--tasks` / `--heldout` beyond what the family's splits hold before anything runs (they
 * were cut silently, or failed a cycle in). Errors: UsageError naming the flag.
 */
export function refuseTaskCounts(s: OuterSettings): void {
  try {
    tasksOf(s);
  } catch (err) {
    if (err instanceof MassError && err.code === 'BAD_OPTIONS') throw new UsageError(`--${err.message}`);
    throw err;
  }
}

async function rsiCommand(v: RsiFlags, io: Io, deps: RsiCommandDeps): Promise<number> {
  if (v.replay) return replayOuterCommand(v, io, (r) => formatRsi(r.rsi!));
  const family = massFamily(v.dataset);
  const o = rsiOptionsOf(v, family, v.db);
  refuseTaskCounts(settingsOf('rsi', v, o));
  const store = openStore(v.db);
  const ctrl = new AbortController();
  const onSigint = () => {
    io.stderr('\nStopping: rerun with the same --loop-id to resume; finished steps are kept.\n');
    ctrl.abort();
  };
  process.once('SIGINT', onSigint);
  try {
    const trainer = deps.trainer ?? (await loadTrainer());
    io.stderr(`MASS rsi ${o.loopId}: ${o.cycles} cycle(s), ${v.tasks} task(s) x ${o.outer.runs} runs, arms self | verifier, base ${o.baseModel} -> ${o.outDir}\n`);
    const report: RsiReport = await startRsi({
      store, trainer, makeProvider: providerMaker(v, deps), signal: ctrl.signal, ...parallelOf(v),
      onEvent: (e) => {
        const line = e.type === 'stage' ? `cycle ${e.cycle} [${e.arm}] ${e.stage}` : `cycle ${e.cycle} [${e.arm}] ${e.what} ${e.done}/${e.total}`;
        if (e.type === 'stage' || e.done === e.total) io.stderr(line + '\n');
      },
    }, settingsOf('rsi', v, o), o.cycles);
    io.stdout(v.json ? JSON.stringify(report) + '\n' : formatRsi(report));
    return report.halted ? 3 : 0;
  } finally {
    process.off('SIGINT', onSigint);
    store.close();
  }
}

/** The blind-spot guard's thresholds from `--blind-spot-sample` / `--max-blind-disagreement` (absent when the sample is 0: off). */
function blindSpotOf(v: { blindSpotSample?: string; maxBlindDisagreement?: string }): { blindSpot?: { sample: number; maxDisagreement: number } } {
  const share = (x: number) => x >= 0 && x <= 1;
  const sample = num(v.blindSpotSample ?? '0', 'blind-spot-sample', share, 'a share from 0 to 1');
  const maxDisagreement = num(v.maxBlindDisagreement ?? '0.25', 'max-blind-disagreement', share, 'a share from 0 to 1');
  if (sample === 0) return {};
  return { blindSpot: { sample, maxDisagreement } };
}
