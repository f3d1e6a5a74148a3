import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Table from 'cli-table3';
import type { Command } from 'commander';
import { openStore, type Store } from '../../core/store/index.ts';
import { constantFlag } from '../../core/guards/index.ts';
import {
  accuracyText, calibrateStudy, deltaText, estimateRecord, estimateStudy, formatSeconds, pendingRuns, runStudy, studyCells,
  studyReportHtml, studyTableCsv, studyTimingCsv, trainingUnits, StudyError, type StudyDeps, type StudyEstimate, type StudyEvent, type StudyPlan, type StudyState, type StudyTable,
} from '../../core/studies/index.ts';
import { fileModelPort, loadTrainer } from '../../models/factory.ts';
import { planPath, resolveStudyPlan, studyDepsOf, type LoadedStudyPlan } from '../../host/studyPlan.ts';
import { act, dbOption, intOption, UsageError, type CommandContext } from '../args.ts';
import { addParallelOption, parallelOf } from '../parallel.ts';
import { asCliSync } from '../errors.ts';
import { cliDatasets, cliSandbox, defaultVersionsDir } from '../wiring.ts';
import { defaultTools } from '../../core/tools/index.ts';
import type { Io } from '../io.ts';
import { besideDatabase } from '../../host/dataFolder.ts';

interface StudyFlags {
  dryRun?: boolean;
  model?: string;
  threads?: number;
  budgetTokens?: number;
  budgetMinutes?: string;
  calibrationTasks: number;
  out?: string;
  db: string;
  dataDir?: string;
  json?: boolean;
  parallel?: number;
}

/** `flowlab study <plan.yaml>`. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('<plan.yaml> [--dry-run] [--budget-tokens N] [--budget-minutes M] [--model file.gguf] [options]')
    .description([
      'Runs a study plan: conditions x zones x seeds x models, each cell a run experiment grouped under',
      'the study; training conditions run their train loop once (per seed and model) and are evaluated',
      'on every zone. Resumable: run the same plan again and only what is missing runs. Prints the',
      'table (accuracy with 95% bootstrap intervals, delta vs the baseline with a paired sign test,',
      'tokens and seconds per task) and writes it as CSV and a self-contained HTML report.',
      '--dry-run calibrates (a few tasks per workflow and model, one train-loop iteration per training',
      'condition, on a scratch store) and prints cells, model calls, tokens and the estimated time.',
    ].join('\n'))
    .argument('<plan.yaml>', 'the study plan (docs/studies.md)')
    .option('--dry-run', 'print the cells, calls, tokens and estimated time; run nothing')
    .option('--model <file.gguf|openai:url#model>', "every plan model replaced by this one (a user's model: a GGUF file or an endpoint, docs/models.md)")
    .addOption(intOption('--threads <n>', "every plan model's threads", { min: 1, max: 256 }))
    .addOption(intOption('--budget-tokens <n>', 'stop cleanly once this many tokens were spent (resumable)', { min: 1 }))
    .option('--budget-minutes <m>', 'stop cleanly after this many minutes (resumable)')
    .addOption(intOption('--calibration-tasks <n>', 'tasks per workflow and model in the dry run\'s calibration', { min: 1, max: 64, default: 6 }))
    .option('--out <dir>', 'where the CSV and HTML go (default: flowlab-studies/<study-id>/ next to --db)')
    .addOption(dbOption())
    .option('--data-dir <dir>', 'dataset folder (default: $FLOWLAB_SHARED/data or ../shared/data)')
    .option('--json', 'print one JSON object (the table, or the estimate with --dry-run)');
  addParallelOption(cmd, 'tasks of the study (its ready cells run at once, sharing them)');
  cmd.action(act(ctx, (file: string, o: StudyFlags) => studyCommand(file, o, ctx.io)));
}

/** A plan path: `$FLOWLAB_SHARED` and `~` expanded, relative to the plan's folder (host/studyPlan.ts). */
export { planPath };

type Loaded = LoadedStudyPlan;

/** Reads, validates and resolves a plan (host/studyPlan.ts `resolveStudyPlan`). Errors: StudyError BAD_PLAN (located, or the file unreadable), SpecError of a workflow. */
export function loadPlan(file: string, flags: Pick<StudyFlags, 'model' | 'threads'>, dataDir?: string): Loaded {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new StudyError('BAD_PLAN', `cannot read study plan ${file}: ${(err as Error).message}`, [], file);
  }
  return resolveStudyPlan(text, file, { ...(flags.model !== undefined && { model: flags.model }), ...(flags.threads !== undefined && { threads: flags.threads }), ...(dataDir !== undefined && { dataDir }), tools: defaultTools({ sandbox: cliSandbox() }) });
}

function depsFor(store: Store, loaded: Loaded, dataDir: string | undefined): StudyDeps {
  return studyDepsOf(store, loaded, {
    models: fileModelPort(), datasets: cliDatasets, tools: defaultTools({ sandbox: cliSandbox() }), loadTrainer,
    versionsDir: defaultVersionsDir(store), ...(dataDir !== undefined && { dataDir }), wrap: asCliSync,
  });
}

async function studyCommand(file: string, flags: StudyFlags, io: Io): Promise<number> {
  const budgetMinutes = flags.budgetMinutes === undefined ? undefined : Number(flags.budgetMinutes);
  if (budgetMinutes !== undefined && !(budgetMinutes > 0)) throw new UsageError(`--budget-minutes: bad value "${flags.budgetMinutes}"`);
  const loaded = loadPlan(file, flags, flags.dataDir);
  const { plan, studyId } = loaded;
  for (const n of loaded.notes) io.stderr(`Note: ${n}\n`);
  const store = openStore(flags.db);
  try {
    const row = store.studies.find(studyId) ?? store.studies.create({ id: studyId, name: plan.name, plan, planFile: path.resolve(file), state: { skippedZones: [...loaded.skipZones] } });
    const deps = depsFor(store, loaded, flags.dataDir);
    const cells = studyCells(plan, studyId, loaded.skipZones);
    const units = trainingUnits(plan);
    const state = row.state as StudyState;
    if (flags.dryRun) {
      const scratchDir = mkdtempSync(path.join(os.tmpdir(), 'flowlab-study-'));
      const scratch = openStore(path.join(scratchDir, 'calibration.db'));
      let speeds;
      try {
        speeds = await calibrateStudy(plan, { ...deps, scratch, scratchVersionsDir: path.join(scratchDir, 'versions') }, { tasks: flags.calibrationTasks, skipZones: loaded.skipZones, onNote: (m) => io.stderr(`${m}\n`) });
      } finally {
        scratch.close();
        rmSync(scratchDir, { recursive: true, force: true });
      }
      const estimate = estimateStudy(cells, units, speeds, { pendingRuns: (c) => pendingRuns(store, c), unitDone: (u) => Boolean(state.units?.[u.key]) });
      const nothingRan = cells.every((c) => !store.findExperiment(c.experimentId)) && !state.units;
      store.studies.update(studyId, { state: { speeds, ...(nothingRan && { estimate: estimateRecord(estimate) }) } });
      io.stdout(flags.json ? JSON.stringify({ studyId, estimate, speeds }) + '\n' : formatEstimate(studyId, plan, estimate, speeds.calibrationSeconds, loaded.notes));
      return 0;
    }
    io.stderr(`Study ${studyId}: ${cells.length} cells (${plan.conditions.length} conditions x ${plan.zones.length - loaded.skipZones.size} zones x ${plan.seeds.length} seeds x ${plan.models.length} models), ${units.length} train loops -> ${store.file}\n`);
    const controller = new AbortController();
    const onSigint = () => {
      io.stderr('\nStopping: the run in flight is dropped; run the same plan again to resume.\n');
      controller.abort();
    };
    process.once('SIGINT', onSigint);
    let outcome;
    try {
      outcome = await runStudy(plan, studyId, deps, { ...(flags.budgetTokens !== undefined && { budgetTokens: flags.budgetTokens }), ...(budgetMinutes !== undefined && { budgetMinutes }), ...parallelOf(flags), signal: controller.signal, onEvent: (e) => io.stderr(eventLine(e)) });
    } finally {
      process.off('SIGINT', onSigint);
    }
    const after = store.studies.get(studyId).state as StudyState;
    const extra = estimateLines(after, outcome.wallSeconds, outcome.status);
    // Cells that cannot repeat exactly (a model on a server): said under the table and in the report.
    const inexact = studyCells(plan, studyId, loaded.skipZones).map((c) => [c.experimentId, store.repro.find(c.experimentId)?.repeatability] as const).filter(([, r]) => r !== undefined && r !== 'exact');
    if (inexact.length) extra.push(`Repeatability ${inexact[0]![1]} in ${inexact.length} cell(s) (flowlab repeat ${inexact[0]![0]} measures it).`);
    const outDir = path.resolve(flags.out ?? besideDatabase(store.file, ['flowlab-studies', studyId]));
    mkdirSync(outDir, { recursive: true });
    writeFileSync(path.join(outDir, 'table.csv'), studyTableCsv(outcome.table));
    writeFileSync(path.join(outDir, 'timing.csv'), studyTimingCsv(outcome.table));
    writeFileSync(path.join(outDir, 'report.html'), studyReportHtml(outcome.table, extra));
    if (flags.json) io.stdout(JSON.stringify({ studyId, status: outcome.status, wallSeconds: outcome.wallSeconds, tokens: outcome.tokens, table: outcome.table }) + '\n');
    else io.stdout(`${formatStudyTable(outcome.table)}${extra.map((l) => `${l}\n`).join('')}Status: ${outcome.status}${outcome.message ? ` (${outcome.message})` : ''}. CSV and HTML: ${outDir}\n`);
    return outcome.status === 'completed' ? 0 : outcome.status === 'cancelled' ? 130 : outcome.status === 'stopped' ? 3 : 1;
  } finally {
    store.close();
  }
}

function eventLine(e: StudyEvent): string {
  switch (e.type) {
    case 'note': return `${e.message}\n`;
    case 'budget': return `Budget: ${e.message}; run the same plan again to resume.\n`;
    case 'unit':
      if (e.phase === 'iteration') return e.iteration === e.iterations || (e.iteration ?? 0) % 5 === 0 ? `  train ${e.unit}: iteration ${e.iteration}/${e.iterations}\n` : '';
      return `train ${e.unit}: ${e.phase}${e.phase === 'started' ? ` (${e.iterations} iterations)` : ''}\n`;
    case 'cell':
      if (e.phase === 'run') return '';
      return `cell ${e.cell}: ${e.phase}${e.resumed ? ' (resumed)' : ''} ${e.done}/${e.total} (${e.experimentId})\n`;
  }
}

/** The dry run's estimate against this invocation's wall time (printed and put in the report). */
function estimateLines(state: StudyState, wallSeconds: number, status: string): string[] {
  const est = state.estimate;
  const walls = state.wallSeconds ?? [];
  const total = walls.reduce((s, x) => s + x, 0);
  const lines = [`Wall time: ${formatSeconds(wallSeconds)} this run${walls.length > 1 ? `, ${formatSeconds(total)} over ${walls.length} runs` : ''}.`];
  if (est && status === 'completed') {
    const ratio = total / est.seconds;
    lines.push(`Dry-run estimate vs real: ${formatSeconds(est.seconds)} estimated, ${formatSeconds(total)} real (real/estimate ${ratio.toFixed(2)}, ${ratio >= 0.75 && ratio <= 1.25 ? 'within' : 'outside'} ±25%); ${Math.round(est.tokens)} tokens and ${Math.round(est.calls)} model calls estimated.`);
  }
  return lines;
}

/** The dry run's printout: cells and units with their runs, calls, tokens and seconds, and the total. */
export function formatEstimate(studyId: string, plan: StudyPlan, e: StudyEstimate, calibrationSeconds: number, notes: readonly string[]): string {
  const t = new Table({ head: ['cell / train loop', 'runs', 'model calls', 'tokens', 'est. time'], style: { head: [], border: [], compact: true } });
  for (const c of [...e.units.map((u) => ({ ...u, key: `train ${u.key}` })), ...e.cells]) t.push([c.key, c.runs, Math.round(c.calls), Math.round(c.tokens), c.runs ? formatSeconds(c.seconds) : 'done']);
  const T = e.total;
  return [
    `Study ${studyId} (${plan.name}), dry run: ${T.cells} cells and ${T.units} train loops left.`,
    ...notes.map((n) => `Note: ${n}`),
    t.toString(),
    `Total: ${T.runs} runs, ${Math.round(T.calls)} model calls, ${Math.round(T.tokens)} tokens, estimated ${formatSeconds(T.seconds)} (speeds measured in a ${formatSeconds(calibrationSeconds)} calibration; ${speedKeys(plan)}).`,
    '',
  ].join('\n');
}

const speedKeys = (plan: StudyPlan) => `${plan.conditions.length} conditions x ${plan.models.length} models: ${plan.models.map((m) => `${m.id} = ${path.basename(m.model)} (${m.threads} thread${m.threads === 1 ? '' : 's'})`).join(', ')}`;

/**
 * The seed-style terminal table: a row per condition (per model), accuracy [95% CI], the zone's best
 * constant policy and the distinct answers (core/guards), and delta per zone; tokens and seconds per
 * task; then every CONSTANT cell with its answer and share.
 */
export function formatStudyTable(t: StudyTable): string {
  const out: string[] = [];
  for (const model of t.models) {
    const table = new Table({ head: ['condition', ...t.zones.flatMap((z) => [`${z.label} acc % [95% CI]`, 'best const % · answers', `Δ vs ${t.baseline} (pts, p)`]), 'tok/task', 's/task'], style: { head: [], border: [], compact: true } });
    const constants: string[] = [];
    for (const c of t.conditions) {
      const es = t.zones.map((z) => t.entries.find((e) => e.model === model && e.zone === z.id && e.condition === c.id));
      const present = es.filter((e) => e && e.runs > 0);
      const avg = (f: (x: NonNullable<(typeof es)[number]>) => number) => (present.length ? (present.reduce((s, e) => s + f(e!), 0) / present.length) : NaN);
      es.forEach((e, i) => e?.guard.constant && constants.push(`${c.id}/${t.zones[i]!.id}: ${constantFlag(e.guard)} of ${e.runs} runs`));
      table.push([c.label, ...es.flatMap((e) => [e ? accuracyText(e) + (e.runs < e.planned ? ` (${e.runs}/${e.planned})` : '') + (e.guard.constant ? ' CONSTANT' : '') : '-', e && e.runs ? `${e.guard.bestConstant ? (100 * e.guard.bestConstant.accuracy).toFixed(1) : '-'} · ${e.guard.distinctAnswers}` : '-', c.id === t.baseline ? '(baseline)' : deltaText(e?.delta)]), Number.isFinite(avg((e) => e.tokensPerTask)) ? avg((e) => e.tokensPerTask).toFixed(1) : '-', Number.isFinite(avg((e) => e.secondsPerTask)) ? avg((e) => e.secondsPerTask).toFixed(3) : '-']);
    }
    out.push(`Study ${t.name} (${t.studyId}), model ${model}: accuracy in %, ${Math.round(t.level * 100)}% percentile bootstrap (${t.resamples} resamples, seed ${t.bootstrapSeed}); Δ paired by seed and task, exact sign test.`);
    out.push(table.toString());
    for (const z of t.zones) {
      const es = t.conditions.map((c) => [c, t.entries.find((e) => e.model === model && e.zone === z.id && e.condition === c.id)] as const).filter(([, e]) => e?.novelty);
      if (es.length) out.push(`${z.label} (${z.dataset}/${z.split}) by what is new, accuracy % (runs): ${es.map(([c, e]) => `${c.id} ${Object.entries(e!.novelty!).map(([k, n]) => `${k} ${(100 * n.accuracy).toFixed(1)} (${n.runs})${n.guard.constant ? ' CONSTANT' : ''}`).join(', ')}`).join('; ')}`);
    }
    out.push(constants.length ? `Constant cells (answers collapsed to one value or to fewer than the zone's classes; their accuracy is a constant policy's):\n${constants.map((l) => `  ${l}`).join('\n')}` : 'No constant cell.');
    const train = Object.entries(t.trainingSeconds);
    if (train.length) out.push(`Training: ${train.map(([c, s]) => `${c} ${formatSeconds(s)}`).join(', ')}.`);
  }
  return out.join('\n') + '\n';
}

