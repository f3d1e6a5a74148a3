import { existsSync, readFileSync, statSync } from 'node:fs';
import { Option, type Command } from 'commander';
import {
  designDiffOf,
  diffText,
  evolutionAudit,
  EVOLVE_DEFAULTS,
  SELECT_TASKS_DEFAULT,
  evolve,
  evolveEventLine,
  heldoutOfEvolution,
  MassError,
  massFamily,
  modelMismatch,
  massFamilyNames,
  planEvolution,
  replayEvolution,
  timelineOf,
  type EvolutionTimeline,
  type EvolutionPlan,
  type EvolveReport,
  type OptimizerMode,
} from '../../core/mass/index.ts';
import { proposalStats } from '../formatEvolve.ts';
import { formatHeldout } from '../../core/mass/index.ts';
import type { ModelConfig, ModelProvider } from '../../core/model/index.ts';
import { formatJudgeAudit } from '../../core/guards/index.ts';
import { openStore, storedModels, type Store } from '../../core/store/index.ts';
import { getDataset } from '../../core/tasks/index.ts';
import { defaultTools } from '../../core/tools/index.ts';
import { llamaProvider } from '../../models/factory.ts';
import { defaultParallel } from '../../core/schedule/index.ts';
import { addParallelOption } from '../parallel.ts';
import { reproEnvironment } from '../../models/environment.ts';
import { finishEvolutionRecord, recordEvolution } from '../../core/repro/index.ts';
import { ReplayProvider } from '../../models/replay/index.ts';
import { verifyModelFiles, withFingerprints } from '../../models/resolve.ts';
import { freshStoreFile } from '../freshStore.ts';
import { act, dbOption, intOption, pairRecord, UsageError, type CommandContext } from '../args.ts';
import { CommandError } from '../errors.ts';
import { addModelOptions, gpuFlag, type ModelFlagValues } from '../flags.ts';
import type { Io } from '../io.ts';
import path from 'node:path';

interface EvolveFlags extends ModelFlagValues {
  split: string;
  limit: number;
  offset: number;
  iterations: number;
  rule: string;
  design?: string;
  id?: string;
  seed: number;
  db: string;
  replay?: string;
  timeline?: string;
  diff?: string;
  auditSwaps?: number;
  parallel?: number;
  json?: boolean;
  optimizer?: string;
  heldout?: number;
  heldoutSplit: string;
  judge: string;
  proposer: string;
  selectTasks?: number;
}

/** `--audit-swaps` when not given: for a new evolution (one stored before the flag existed keeps none, so it resumes and replays as it ran). */

/** An option's flag in messages: `selectTasks` -> `--select-tasks`. */
const flagOf = (field: string) => `--${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** planEvolution's refusals as the CLI's: a bad option is a usage error (exit 2), a design that does not validate the file's fault (exit 1). */
function planAsCli<T>(plan: () => T): T {
  try {
    return plan();
  } catch (err) {
    if (err instanceof MassError && err.code === 'BAD_OPTIONS') throw new UsageError(err.message);
    if (err instanceof MassError && err.code === 'INVALID_DESIGN') throw new CommandError('BAD_FILE', err.message, {}, { cause: err });
    throw err;
  }
}

/** What the command needs from outside (tests inject a provider). */
export interface EvolveCommandDeps {
  makeProvider?: (cfg: ModelConfig) => Promise<ModelProvider>;
}

/** `flowlab evolve <dataset>`: MASS's inner loop; `--replay`, `--timeline`, `--diff` read a stored one. */
export function define(cmd: Command, ctx: CommandContext, deps: EvolveCommandDeps = {}): void {
  cmd
    .usage('<dataset> --model <file.gguf> [options] | --replay <id> | --timeline <id> [--diff t:a..b]')
    .description([
      'MASS inner loop (weights frozen, per task): run a text workflow to a workspace, let the same',
      'model judge it pairwise against a fixed bare-task baseline (or, with --rule direct, against the',
      'champion), keep the champion, and ask the model for the next workflow; invalid designs are',
      'rejected by the validator and recorded. Every run, verdict, design and diff is stored; the same',
      '--id resumes a killed loop; --replay re-derives it from the recorded calls without the model.',
    ].join('\n'))
    .argument('[dataset]', `task family (known: ${massFamilyNames().join(', ')})`)
    .option('--split <name>', 'split', 'train')
    .addOption(intOption('--limit <n>', 'tasks (each evolved on its own)', { min: 1, default: 1 }))
    .addOption(intOption('--offset <n>', 'skip the first n tasks', { default: 0 }))
    .addOption(intOption('--iterations <n>', 'iterations per task (iteration 0 runs the first design; each later one asks the optimizer once)', { min: 1, max: 100, default: 11 }))
    .addOption(new Option('--rule <rule>', 'champion rule: baseline (public code: beat the bare task, then the champion in arbitration) or direct (paper: candidate vs champion)').choices(['baseline', 'direct']).default('baseline'))
    .option('--design <file.json>', 'the first design (version 0 list of {agent_id, role, instruction}, or a version-1 object); default: the family\'s')
    .addOption(new Option('--optimizer <mode>', 'how the optimizer proposes: edit (one edit from the family\'s menu, under the grammar of the valid new edits; the default for a family with a menu: learn-design) or free (a whole design; the default otherwise)').choices(['edit', 'free']))
    .addOption(intOption('--heldout <n>', 'after the loop, run version 0 and each task\'s champion on the first n tasks of --heldout-split (same seed per task) and compare them pairwise (sign test, bootstrap interval)', { min: 1 }))
    .option('--heldout-split <name>', 'split of the held-out comparison', 'heldout')
    .addOption(new Option('--judge <who>', 'who judges the pairs: self (the same model, MASS\'s self-judge, rubric prompt), pair (the same model reading the family\'s own pairwise prompt, what a judge trained on it reads, e.g. learn-design-judge; the default --id ends in -pair) or verifier (the family\'s grader compares the two grades, no model call: a control; the default --id then ends in -verifier)').choices(['self', 'pair', 'verifier']).default('self'))
    .addOption(intOption('--select-tasks <k>', `training tasks each version is run on before it is compared (the evolved task and the k-1 tasks after the --limit evolved ones, same seed per task for every version); the candidate is accepted when it wins more of the k paired verdicts than it loses (default for a new evolution: ${SELECT_TASKS_DEFAULT.editMenu} for a family with an edit menu (learn-design), else ${SELECT_TASKS_DEFAULT.other}; a resumed --id keeps its own)`, { min: 1, max: 32 }))
    .addOption(new Option('--proposer <who>', 'who proposes the edits: model, or random (SIMULATED: uniform over the valid new edits, no model call; a baseline for the model\'s proposals; the default --id then ends in -random)').choices(['model', 'random']).default('model'));
  addModelOptions(cmd, { contextSize: { min: 256, default: 2048, help: 'context tokens per model (default: 2048: the optimizer reads and writes about 1,700 tokens of stories260K)' } });
  cmd
    .option('--id <evolution-id>', 'the evolution id; an existing one is resumed (default: evo-<dataset>-<seed>-<rule>-<model file name>)')
    .addOption(intOption('--seed <n>', 'seed', { default: 1 }))
    .addOption(intOption('--audit-swaps <n>', `verdicts per task the judge judges again with A and B swapped, for its audit's position consistency (default ${EVOLVE_DEFAULTS.auditSwaps}; a resumed evolution keeps its own)`, { min: 0 }))
    .addOption(dbOption())
    .option('--replay <evolution-id>', 're-run a stored evolution from its recorded calls (no model) and compare every record')
    .option('--timeline <evolution-id>', 'print the champion timeline of a stored evolution')
    .option('--diff <t:a..b>', 'with --timeline: the design diff of task t from version a to b (e.g. 0:0..2)')
    .option('--json', 'print one JSON object');
  addParallelOption(cmd, 'tasks evolved (each task\'s iterations in order)')
    .action(act(ctx, (dataset: string | undefined, o: EvolveFlags) => evolveCommand(dataset, o, ctx.io, deps)));
}

async function evolveCommand(dataset: string | undefined, o: EvolveFlags, io: Io, deps: EvolveCommandDeps): Promise<number> {
  if (o.replay) return replayCommand(o.replay, o, io);
  if (o.timeline) return timelineCommand(o.timeline, o, io);
  if (!dataset) throw new UsageError('missing <dataset> (or --replay / --timeline <evolution-id>)');
  if (!o.model) throw new UsageError('missing --model <file.gguf>');
  if (o.design !== undefined && !(existsSync(o.design) && statSync(o.design).isFile())) throw new UsageError(`--design ${o.design}: no such file (a version-0 design, JSON)`);
  // A database that is not there yet is created only once the options are sound (a refused flag leaves no file).
  const fresh = o.db !== ':memory:' && !existsSync(o.db);
  let store = fresh ? undefined : openStore(o.db);
  let plan: EvolutionPlan;
  try {
    plan = planAsCli(() => planEvolution({
      dataset, model: o.model!, split: o.split, limit: o.limit, offset: o.offset, iterations: o.iterations, rule: o.rule as 'baseline' | 'direct', seed: o.seed,
      judge: o.judge as 'self' | 'verifier' | 'pair', proposer: o.proposer as 'model' | 'random', heldoutSplit: o.heldoutSplit,
      ...(o.id !== undefined && { id: o.id }), ...(o.design !== undefined && { designText: readFileSync(o.design, 'utf8'), designSource: o.design }),
      ...(o.optimizer !== undefined && { optimizer: o.optimizer as OptimizerMode }), ...(o.selectTasks !== undefined && { selectTasks: o.selectTasks }),
      ...(o.auditSwaps !== undefined && { auditSwaps: o.auditSwaps }), ...(o.heldout !== undefined && { heldout: o.heldout }),
    }, store, flagOf));
  } catch (err) {
    store?.close();
    throw err;
  }
  let cfg: ModelConfig;
  try {
    cfg = modelConfigOf(o);
  } catch (err) {
    store?.close();
    throw err;
  }
  const file = freshStoreFile(fresh ? o.db : undefined);
  store ??= openStore(o.db);
  const { evolutionId, tasks, family } = plan;
  const rule = plan.spec.rule!;
  const controller = new AbortController();
  const onSigint = () => {
    io.stderr('\nStopping: what is stored stays; run the same command to resume.\n');
    controller.abort();
  };
  let provider: ModelProvider | undefined;
  let loaded = false;
  try {
    checkModelFiles(store, evolutionId, cfg);
    provider = await (deps.makeProvider ?? llamaProvider)(cfg);
    await provider.load?.();
    process.once('SIGINT', onSigint);
    io.stderr(`MASS inner loop ${evolutionId}: ${tasks.length} task(s) of ${dataset}/${o.split}, ${o.iterations} iterations, rule ${rule}, model ${path.basename(o.model)}\n`);
    const roleRefs = new Map(Object.keys(cfg.roleModels).map((r) => [r, cfg.roleModels[r]!]));
    loaded = true;
    recordEvolution(store, evolutionId, { tasks, firstDesign: plan.firstDesign, settings: plan.settings, seed: o.seed, models: withFingerprints(cfg), environment: reproEnvironment() });
    const t0 = performance.now();
    const report = await evolve(
      plan.spec,
      {
        store,
        provider,
        tools: defaultTools(),
        signal: controller.signal,
        config: { models: cfg },
        ...(roleRefs.size ? { modelFor: (role: string) => roleRefs.get(role) ?? 'default' } : {}),
        onEvent: (e) => io.stderr(`${evolveEventLine(e)}\n`),
        parallel: o.parallel ?? defaultParallel(cfg).parallel,
      },
    );
    if (!controller.signal.aborted) finishEvolutionRecord(store, evolutionId);
    const records = store.mass.list(evolutionId);
    const timeline = timelineOf(evolutionId, records);
    if (report.written === 0) io.stderr(`Evolution ${evolutionId} was already complete in ${o.db}: nothing new was run; it is shown as stored. For a new one: --id <new-id> (or another --seed or --rule).\n`);
    // The judge picked every champion: audit it against the external grader on the pairs it judged (core/guards judgeAudit).
    const judgeAudit = evolutionAudit(o.judge === 'verifier' ? 'VERIFIER JUDGE (the family\'s external grader, not the self-judge)' : roleRefs.has('judge') ? `judge (${roleRefs.get('judge')})` : `self-judge (${path.basename(o.model)})`, records);
    const evolveSeconds = (performance.now() - t0) / 1000;
    const proposals = proposalStats(records, o.proposer === 'random' ? 'RANDOM (SIMULATED: uniform over the valid new edits, no model call)' : `the model, ${path.basename(o.model)}`);
    const heldout = o.heldout && !controller.signal.aborted ? await (heldoutOfEvolution(plan, { dataset, heldoutSplit: o.heldoutSplit, seed: o.seed, ...(o.heldout !== undefined && { heldout: o.heldout }) }, records, { store, provider, family, tools: defaultTools(), signal: controller.signal, config: { models: cfg } }, (line) => io.stderr(line))) : [];
    const wall = `Wall time: ${((performance.now() - t0) / 1000).toFixed(1)} s (loop ${evolveSeconds.toFixed(1)} s${o.heldout ? `, held-out ${heldout.reduce((x, h) => x + h.comparison.wallSeconds, 0).toFixed(1)} s` : ''}; --threads ${o.threads ?? 'default'})\n`;
    io.stdout(o.json ? JSON.stringify({ ...report, timeline, judgeAudit, proposals, heldout, wallSeconds: (performance.now() - t0) / 1000 }) + '\n' : `${formatReport(report, timeline)}${proposals.text}${heldout.map((h) => `Task ${h.taskIndex}: ${formatHeldout(h.comparison)}`).join('')}${formatJudgeAudit(judgeAudit)}${judgeAudit.unreliable ? (proposals.judged ? 'UNRELIABLE JUDGE: the champions above were chosen by a judge that fails its audit; read them as its positions, not as findings.\n' : 'UNRELIABLE JUDGE: its verdicts made no champion; they could not tell whether one should have been.\n') : ''}${wall}`);
    return 0;
  } finally {
    process.off('SIGINT', onSigint);
    await provider?.dispose().catch(() => {});
    store.close();
    // A model that did not load leaves no new database behind.
    if (!loaded) file.discard();
  }
}

/** The models of the run: `--model` for every role, `--role-model role=file` for one (orchestrator, judge, optimizer, helper, or an agent id). */
function modelConfigOf(o: EvolveFlags): ModelConfig {
  const models: Record<string, string> = { default: path.resolve(o.model!) };
  const roleModels: Record<string, string> = {};
  for (const [role, file] of Object.entries(pairRecord(o.roleModel))) {
    models[`role:${role}`] = path.resolve(file);
    roleModels[role] = `role:${role}`;
  }
  const cfg: ModelConfig = { models, roleModels, gpu: gpuFlag(o.gpu), contextSize: o.contextSize ?? 2048 };
  if (o.threads !== undefined) cfg.threads = o.threads;
  return withFingerprints(cfg);
}

/** A resumed evolution must use the same model files (their fingerprints), as `flowlab resume` does. */
function checkModelFiles(store: Store, evolutionId: string, cfg: ModelConfig): void {
  const step = store.listExperiments().find((x) => x.id.startsWith(`${evolutionId}.`));
  const recorded = step && storedModels(step);
  if (!recorded) return;
  const other = modelMismatch(evolutionId, recorded, cfg);
  if (other) throw new CommandError('DIFFERENT_MODEL', other);
  verifyModelFiles(recorded, cfg);
}

async function replayCommand(id: string, o: EvolveFlags, io: Io): Promise<number> {
  const store = openStore(o.db, { mustExist: true });
  try {
    const settings = store.mass.get(id, 'evolution', 'settings')?.value as { dataset: string } | undefined;
    if (!settings) throw new CommandError('NOT_FOUND', `no evolution ${id} in ${o.db}`);
    const report = await replayEvolution(store, id, { family: massFamily(settings.dataset), tools: defaultTools(), providerFor: (exp) => new ReplayProvider(store.getExperimentCalls(exp)) });
    if (o.json) io.stdout(JSON.stringify(report) + '\n');
    else io.stdout(`Replay of ${id} without the model: ${report.matched}/${report.records} records identical${report.mismatches.length ? `; ${report.mismatches.length} differ:\n${report.mismatches.slice(0, 20).map((m) => `  ${m}`).join('\n')}` : ''}; models loaded ${report.modelsLoaded}; ${report.wallSeconds.toFixed(2)} s\n`);
    return report.mismatches.length ? 1 : 0;
  } finally {
    store.close();
  }
}

function timelineCommand(id: string, o: EvolveFlags, io: Io): Promise<number> {
  const store = openStore(o.db, { mustExist: true });
  try {
    const records = store.mass.list(id);
    const timeline = timelineOf(id, records);
    if (o.diff) {
      const m = /^(\d+):(\d+)\.\.(\d+)$/.exec(o.diff);
      if (!m) throw new UsageError(`--diff takes t:a..b (task, from version, to version), got "${o.diff}"`);
      const diff = designDiffOf(records, Number(m[1]), Number(m[2]), Number(m[3]));
      io.stdout(o.json ? JSON.stringify(diff) + '\n' : `${diffText(diff)}\n`);
      return Promise.resolve(0);
    }
    io.stdout(o.json ? JSON.stringify(timeline) + '\n' : formatTimeline(timeline));
    return Promise.resolve(0);
  } finally {
    store.close();
  }
}

function formatTimeline(t: EvolutionTimeline): string {
  const out = [`Evolution ${t.evolutionId} (${t.dataset}, rule ${t.rule}, ${t.iterations} iterations)`];
  for (const task of t.tasks) {
    out.push(`Task ${task.taskIndex} ${task.taskId}: champion ${task.champion === null ? 'none' : `v${task.champion}`}${task.baselineScore === null ? '' : `, baseline external score ${task.baselineScore.toFixed(2)}`}`);
    for (const it of task.iterations) {
      if (it.version === null) {
        out.push(`  it ${it.iteration}: rejected: ${(it.rejected ?? []).slice(0, 2).join('; ')}`);
        continue;
      }
      if (it.selectionScores) {
        const mean = it.selectionScores.reduce((a, b) => a + b, 0) / it.selectionScores.length;
        const sel = (it.selections ?? []).map((x) => `vs ${x.against} on ${x.wins + x.losses + x.ties} tasks: won ${x.wins}, lost ${x.losses}, tied ${x.ties} -> ${x.accepted ? 'ACCEPTED' : 'no'}`).join(' | ');
        out.push(`  it ${it.iteration}: v${it.version}${it.edit ? ` (${it.edit})` : ''} scores ${it.selectionScores.map((s) => s.toFixed(1)).join(' ')} (mean ${mean.toFixed(3)}); ${sel || 'no verdict'}; champion ${it.champion === null ? 'none' : `v${it.champion}`}${it.championChanged ? ' *' : ''}`);
        continue;
      }
      const v = it.verdicts.map((x) => `vs ${x.against}: ${x.valid ? x.winner : 'invalid'} (candidate ${x.candidateSide}) ${x.candidateWon ? 'WIN' : 'no'} "${x.rationale.slice(0, 60)}"`).join(' | ');
      out.push(`  it ${it.iteration}: v${it.version}${it.edit ? ` (${it.edit})` : ''} score ${it.score?.toFixed(2) ?? '-'}; ${v || 'no verdict'}; champion ${it.champion === null ? 'none' : `v${it.champion}`}${it.championChanged ? ' *' : ''}`);
    }
  }
  return out.join('\n') + '\n';
}

function formatReport(r: EvolveReport, t: EvolutionTimeline): string {
  const lines = r.tasks.map((x) => `  task ${x.taskIndex} ${x.taskId}: champion ${x.champion === null ? 'none' : `v${x.champion}`} (external score ${x.championScore?.toFixed(2) ?? '-'}; baseline ${x.baselineScore?.toFixed(2) ?? '-'}), ${x.versions} version(s), ${x.rejected} proposal(s) rejected${x.selectionScores ? `; mean over its ${x.selectionScores.tasks} selection tasks: v0 ${x.selectionScores.first.toFixed(3)}, champion ${x.selectionScores.champion?.toFixed(3) ?? '-'}` : ''}`);
  return `${formatTimeline(t)}\nSummary (${r.written} record(s) written):\n${lines.join('\n')}\n`;
}
