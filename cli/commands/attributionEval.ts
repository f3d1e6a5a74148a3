import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Option, type Command } from 'commander';
import {
  ATTRIBUTION_METHODS,
  DEFAULT_HARNESS_CRASH,
  evaluateAttribution,
  importWhoAndWhen,
  isJudgeMethod,
  JUDGE_DEFAULTS,
  judgeCallRecord,
  NARROWED_JUDGE,
  type AttributionEvaluation,
  type AttributionMethod,
  type JudgeCallRecord,
  type LlmJudgeMethod,
  type SurfacingOptions,
  type WhoAndWhenLog,
} from '../../core/blame/index.ts';
import { resolveSharedDir } from '../../core/tasks/index.ts';
import { act, intOption, UsageError, type CommandContext } from '../args.ts';
import { CommandError } from '../errors.ts';
import { formatAttribution, formatComparison, type AttributionRow, type BaselineLine } from '../formatAttribution.ts';
import type { ModelConfig, ModelProvider } from '../../core/model/index.ts';
import { loadedLlamaProvider } from '../../models/factory.ts';
import { ReplayProvider } from '../../models/replay/index.ts';
import type { Io } from '../io.ts';
import { addParallelOption } from '../parallel.ts';
import { defaultParallel } from '../../core/schedule/index.ts';
import { answerGuard } from '../../core/guards/index.ts';

interface AttributionFlags {
  /** Score the readable logs and report the rest as unscorable, instead of exiting 1 at the first bad one. */
  skipBad?: boolean;
  dataset: string;
  method: string;
  path?: string;
  model?: string;
  limit?: number;
  maxChars?: number;
  maxPromptChars?: number;
  contextSize: number;
  threads?: number;
  seed: number;
  harnessCrash: string;
  recordCalls?: string;
  replayCalls?: string;
  json?: boolean;
  parallel?: number;
}

/** One row of the plan: a method, its label, and its structure's options (`crashRule`: takes `--harness-crash`). */
interface PlanRow { id: string; label: string; method: AttributionMethod; surfaced?: SurfacingOptions; crashRule?: boolean }

/**
 * The methods whose structure classes the end-of-run harness crash (`--harness-crash`): surfaced,
 * structural, hybrid (core/blame/attribution/evaluate.ts) and the narrowed judge (core/blame/attribution/narrowed.ts).
 */
const CRASH_RULE_METHODS: readonly AttributionMethod[] = ['surfaced', 'structural', 'hybrid', NARROWED_JUDGE];

/**
 * The rows of `--method all`: every model-free method (surfaced in both crash classes, the rest with
 * `--harness-crash`), then, with a model or a recording, two judges.
 */
const ALL_MODEL_FREE: readonly PlanRow[] = [
  { id: 'surfaced-infrastructure', label: 'surfaced (crash = infrastructure)', method: 'surfaced', surfaced: { harnessCrash: 'infrastructure' } },
  { id: 'surfaced', label: 'surfaced + crash rule (crash = execution)', method: 'surfaced', surfaced: { harnessCrash: 'execution' } },
  { id: 'structural', label: 'structural (team authorship)', method: 'structural', crashRule: true },
  { id: 'hybrid', label: 'hybrid (structural, else first worker)', method: 'hybrid', crashRule: true },
  { id: 'first-worker', label: 'baseline: first worker message', method: 'first-worker' },
  { id: 'majority', label: 'baseline: majority agent', method: 'majority' },
];
const ALL_JUDGES: readonly LlmJudgeMethod[] = ['all-at-once', NARROWED_JUDGE];

/** `flowlab attribution-eval --dataset who-and-when --method <method>`. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('--dataset who-and-when --method <method[,method...]|all> [options]')
    .description([
      'Scores failure attribution on Who&When logs (Zhang et al., ICML 2025): which agent made the',
      'decisive mistake, and at which step. Accuracy is reported over all logs and over the logs the',
      'method gave an answer for (covered), strictly and as the official scorer counts (substrings).',
    ].join('\n'))
    .addHelpText('after', [
      '',
      'Methods:',
      "  surfaced        Flowlab's structure-aware credit over failures the log surfaces itself",
      '                  (non-zero exit codes, tracebacks, error lines, HTTP errors, ...); no model',
      '  structural      surfaced with team authorship (a terminal run is its code writer\'s, an',
      '                  instruction wires its answer) and a harness crash as the speaker\'s failure',
      '  hybrid          structural, and where structure blames nobody the first worker message',
      '  first-worker    baseline: the first message of a worker (not human, orchestrator, terminal)',
      '  majority        baseline: always the most often labelled agent, at its first message',
      '  all-at-once     LLM judge reads the whole log once and names agent and step',
      '  step-by-step    LLM judge asks of each step in order "is this the decisive mistake?"',
      '  binary-search   LLM judge asks which half holds the decisive mistake, recursively',
      '  narrowed-judge  LLM judge over the steps up to the first surfaced error, naming only the',
      '                  authors structure cannot separate',
      '  all             every model-free method, plus all-at-once and narrowed-judge with --model',
      '                  or --replay-calls: one comparison table',
    ].join('\n'))
    .addOption(new Option('--dataset <name>', 'dataset (known: who-and-when)').makeOptionMandatory())
    .addOption(new Option('--method <method>', `${ATTRIBUTION_METHODS.join(' | ')} | all, or a comma-separated list`).makeOptionMandatory())
    .option('--path <folder>', 'folder of Who&When *.json logs (either variant) (default: $FLOWLAB_SHARED/data/who_and_when/Hand-Crafted or ../shared/...)')
    .option('--model <file.gguf>', 'judge model (required by the judge methods unless --replay-calls)')
    .addOption(intOption('--limit <n>', 'first n logs (natural file-name order) (default: all)', { min: 1 }))
    .addOption(intOption('--max-chars <n>', `cut each message to n characters in prompts (default: ${JUDGE_DEFAULTS.maxChars})`, { min: 1 }))
    .addOption(intOption('--max-prompt-chars <n>', `characters per call (system + prompt) (default: ${JUDGE_DEFAULTS.maxPromptChars})`, { min: 200 }))
    .addOption(intOption('--context-size <n>', 'judge model context, tokens', { min: 64, default: 4096 }))
    .addOption(intOption('--threads <n>', 'CPU threads for the judge model (default: 1 for files < 64 MB, else half the cores)', { min: 1 }))
    .addOption(intOption('--seed <n>', "seed of a log's first call (call i: seed + i)", { default: 0 }))
    .option('--harness-crash <class>', 'execution | infrastructure: how surfaced, structural, hybrid and narrowed-judge treat the end-of-run crash of the logging harness ("Error processing publish message"): the speaking agent\'s execution failure, or nobody\'s', DEFAULT_HARNESS_CRASH)
    .option('--record-calls <file.jsonl>', 'write every judge call (prompt, reply, seed, tokens) as one JSON line, replayable with --replay-calls')
    .option('--replay-calls <file.jsonl>', 'answer the judge calls from a recording instead of a model (no model is loaded)')
    .option('--skip-bad', 'score the logs that can be scored and list the others as unscorable (default: exit 1 naming the count and the first bad file and field)')
    .option('--json', 'print one JSON object instead of the tables');
  addParallelOption(cmd, 'logs judged')
    .action(act(ctx, (o: AttributionFlags) => attributionEvalCommand(o, ctx.io)));
}

function parseMethods(value: string): { methods: AttributionMethod[]; all: boolean } {
  if (value === 'all') return { methods: [], all: true };
  const methods = value.split(',').map((m) => m.trim());
  for (const m of methods) {
    if (!ATTRIBUTION_METHODS.includes(m as AttributionMethod)) throw new UsageError(`unknown --method "${m}" (known: ${ATTRIBUTION_METHODS.join(', ')}, all)`);
  }
  return { methods: methods as AttributionMethod[], all: false };
}

/** Reads a `--record-calls` file: one `JudgeCallRecord` per line. */
function readRecording(file: string): JudgeCallRecord[] {
  if (!existsSync(file)) throw new CommandError('NOT_FOUND', `--replay-calls: no file ${file}`, { file });
  const out: JudgeCallRecord[] = [];
  readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    let rec: unknown;
    try {
      rec = JSON.parse(line);
    } catch (e) {
      throw new CommandError('BAD_FILE', `${file}:${i + 1}: not JSON (${(e as Error).message})`, { file, line: i + 1 });
    }
    const r = rec as Partial<JudgeCallRecord>;
    if (!r || typeof r.logId !== 'string' || typeof r.method !== 'string' || typeof r.taskIndex !== 'number' || typeof r.prompt !== 'string') {
      throw new CommandError('BAD_FILE', `${file}:${i + 1}: not a recorded judge call (needs logId, method, taskIndex, prompt)`, { file, line: i + 1 });
    }
    out.push(r as JudgeCallRecord);
  });
  return out;
}

/** A provider per judge method answering from a recording (models/replay: prompts must match). */
function replayProviders(records: readonly JudgeCallRecord[]): (method: LlmJudgeMethod) => ModelProvider {
  const cache = new Map<string, ModelProvider>();
  return (method) => {
    let p = cache.get(method);
    if (!p) {
      const mine = records.filter((r) => r.method === method);
      const idOf = new Map(mine.map((r) => [r.taskIndex, r.logId]));
      p = new ReplayProvider(mine, { taskKeyOf: (i) => idOf.get(i) ?? `#${i}` });
      cache.set(method, p);
    }
    return p;
  };
}

async function attributionEvalCommand(values: AttributionFlags, io: Io): Promise<number> {
  if (values.dataset !== 'who-and-when') throw new UsageError(`unknown --dataset "${values.dataset}" (known: who-and-when)`);
  const { methods: named, all } = parseMethods(values.method);
  const { limit, maxChars, maxPromptChars, contextSize, threads, seed } = values;
  const harnessCrash = values.harnessCrash;
  if (harnessCrash !== 'infrastructure' && harnessCrash !== 'execution') throw new UsageError(`--harness-crash takes infrastructure or execution, got "${harnessCrash}"`);
  const judged = all ? (values.model || values.replayCalls ? [...ALL_JUDGES] : []) : named.filter(isJudgeMethod);
  if (values.model && values.replayCalls) throw new UsageError('--model and --replay-calls exclude each other (a replay loads no model)');
  if (!judged.length && (values.model || values.replayCalls || values.recordCalls)) {
    const flag = values.model ? '--model' : values.replayCalls ? '--replay-calls' : '--record-calls';
    if (all) throw new UsageError(`${flag} is for the judge rows, which --method all runs only with --model or --replay-calls`);
    throw new UsageError(`${flag} is for the judge methods; ${named.join(', ')} ${named.length > 1 ? 'use' : 'uses'} no model`);
  }
  if (!all && judged.length && !values.model && !values.replayCalls) throw new UsageError(`--method ${judged[0]} needs --model <file.gguf> (or --replay-calls <file.jsonl>)`);

  const folder = path.resolve(values.path ?? path.join(resolveSharedDir(), 'data', 'who_and_when', 'Hand-Crafted'));
  const logs = importWhoAndWhen(folder, { badLabel: 'unscorable', badLog: 'unscorable', ...(limit === undefined ? {} : { limit }) });
  const bad = logs.filter((l) => l.unscorable !== undefined);
  if (bad.length && !values.skipBad) {
    throw new CommandError('BAD_LOGS', `${bad.length} of ${logs.length} Who&When logs in ${folder} cannot be scored; the first: ${bad[0]!.file}: ${bad[0]!.unscorable}. Fix them, or pass --skip-bad to score the others and list these as unscorable`);
  }
  const crashOpts: SurfacingOptions = { harnessCrash };
  const withCrash = (r: PlanRow): PlanRow => (r.crashRule ? { ...r, label: `${r.label}, crash = ${harnessCrash}`, surfaced: crashOpts } : r);
  const plan: PlanRow[] = all
    ? [...ALL_MODEL_FREE, ...judged.map((m): PlanRow => ({ id: m, label: `LLM judge: ${m}`, method: m, crashRule: m === NARROWED_JUDGE }))].map(withCrash)
    : named.map((m) => ({ id: m, label: m, method: m, ...(CRASH_RULE_METHODS.includes(m) ? { surfaced: crashOpts, crashRule: true } : {}) }));

  // The judge's model (or recording), loaded once for every judge row.
  let provider: ((m: LlmJudgeMethod) => ModelProvider) | undefined;
  let live: ModelProvider | undefined;
  // Logs judged at once (docs/scale.md): the flag, else the model's default (1 for a local file; a recording: 1).
  let parallel = values.parallel ?? 1;
  if (judged.length && values.replayCalls) provider = replayProviders(readRecording(path.resolve(values.replayCalls)));
  else if (judged.length) {
    const cfg: ModelConfig = { models: { default: path.resolve(values.model!) }, roleModels: { judge: 'default' }, threads, contextSize, gpu: false };
    parallel = values.parallel ?? defaultParallel(cfg).parallel;
    live = await loadedLlamaProvider(cfg);
    provider = () => live!;
  }
  const recorded: JudgeCallRecord[] = [];
  const taskIndex = new Map(logs.map((l, i) => [l.id, i]));
  const rows: AttributionRow[] = [];
  try {
    for (const p of plan) {
      const t0 = performance.now();
      let evaluation: AttributionEvaluation;
      if (isJudgeMethod(p.method)) {
        const source = values.replayCalls ? `the recording ${path.basename(values.replayCalls)}` : path.basename(values.model!);
        io.stderr(`Judging ${logs.length} logs from ${folder} with ${p.method} on ${source}\n`);
        evaluation = await evaluateAttribution(logs, p.method, {
          judge: {
            provider: provider!(p.method), model: 'default', role: 'judge', maxChars, maxPromptChars, seed,
            ...(p.surfaced ? { surfacing: p.surfaced } : {}),
            onCall: (c) => recorded.push(judgeCallRecord(c, taskIndex.get(c.logId) ?? -1)),
          },
          parallel,
          onRecord: (r, done, total) => {
            const pr = r.prediction ? `${r.prediction.agent}@${r.prediction.step}` : 'none';
            io.stderr(`  [${done}/${total}] log ${r.logId}: ${pr} (label ${r.label.agent}@${r.label.step}; ${r.calls} calls)${r.note ? ` ${r.note}` : ''}\n`);
          },
        });
      } else {
        evaluation = await evaluateAttribution(logs, p.method, p.surfaced ? { surfaced: p.surfaced } : {});
      }
      const calls = evaluation.records.reduce((n, r) => n + (r.calls ?? 0), 0);
      rows.push({ id: p.id, label: p.label, evaluation, calls, wallSeconds: (performance.now() - t0) / 1000 });
    }
  } finally {
    await live?.dispose();
  }
  if (values.recordCalls) {
    writeFileSync(path.resolve(values.recordCalls), recorded.map((r) => JSON.stringify(r)).join('\n') + (recorded.length ? '\n' : ''));
    io.stderr(`Recorded ${recorded.length} judge calls to ${path.resolve(values.recordCalls)}\n`);
  }
  const unscorable = rows[0]?.evaluation.unscorable ?? [];
  const crashNote = crashRuleNote(plan, harnessCrash, all);
  return all || plan.length > 1 ? printComparison(rows, logs, folder, values, io, unscorable, crashNote) : printOne(rows[0]!, logs, folder, values, io, crashNote);
}

/**
 * The line saying which crash class the methods that use it ran with; for `--method all` the two
 * surfaced rows show both classes by design. Empty when no method of the plan uses the crash rule.
 */
function crashRuleNote(plan: readonly PlanRow[], harnessCrash: string, all: boolean): string {
  const users = plan.filter((p) => p.crashRule).map((p) => p.id);
  if (!users.length) return '';
  const meaning = harnessCrash === 'execution' ? "the speaking agent's execution failure" : "the harness's fault, blamed on nobody";
  const setting = `--harness-crash ${harnessCrash}${harnessCrash === DEFAULT_HARNESS_CRASH ? ' (default)' : ''}`;
  return `End-of-run harness crash: ${setting}, ${meaning}; used by ${users.join(', ')}${all ? ' (the two surfaced rows show both classes)' : ''}.`;
}

const headline = (e: AttributionEvaluation) => ({ covered: e.score.covered, agentAccuracy: e.score.agentAccuracy, stepAccuracy: e.score.stepAccuracy, official: { agentAccuracy: e.official.agentAccuracy, stepAccuracy: e.official.stepAccuracy } });

function printComparison(rows: AttributionRow[], logs: WhoAndWhenLog[], folder: string, values: AttributionFlags, io: Io, unscorable: AttributionEvaluation['unscorable'], crashNote: string): number {
  const scored = rows[0]?.evaluation.score.logs ?? 0;
  if (values.json) {
    const out = {
      dataset: 'who-and-when', path: folder, logs: logs.length, scored, unscorable, harnessCrash: values.harnessCrash,
      rows: rows.map((r) => ({ id: r.id, label: r.label, logs: r.evaluation.score.logs, ...headline(r.evaluation), calls: r.calls, wallSeconds: r.wallSeconds })),
    };
    io.stdout(JSON.stringify(out) + '\n');
    return 0;
  }
  const notes: string[] = [];
  if (values.method === 'all' && !values.model && !values.replayCalls) notes.push('LLM-judge rows need --model <file.gguf> (or --replay-calls): not run.');
  if (crashNote) notes.push(crashNote);
  io.stdout(formatComparison(rows, `Who&When attribution on ${folder}: ${scored} logs scored, ${unscorable.length} unscorable`, notes, unscorable));
  return 0;
}

/** The baselines printed beside a single method. */
async function baselines(logs: WhoAndWhenLog[]): Promise<Array<BaselineLine & { id: string }>> {
  const fw = await evaluateAttribution(logs, 'first-worker');
  const mj = await evaluateAttribution(logs, 'majority');
  const majority = mj.records.find((r) => r.prediction)?.prediction?.agent;
  return [
    { id: 'firstWorker', label: 'first worker message (label-free)', score: fw.score, official: fw.official },
    { id: 'majority', label: `majority agent${majority ? ` (always ${majority})` : ''}`, score: mj.score, official: mj.official },
  ];
}

async function printOne(row: AttributionRow, logs: WhoAndWhenLog[], folder: string, values: AttributionFlags, io: Io, crashNote: string): Promise<number> {
  const { score, official, unscorable } = row.evaluation;
  const base = await baselines(logs);
  // The constant guard on the agent each log is blamed on (core/guards): a method naming one agent for every log is a constant policy.
  const guard = answerGuard(row.evaluation.records.map((r) => ({ answer: r.prediction?.agent, expected: r.label.agent })));
  if (values.json) {
    const out = {
      logs: score.logs,
      covered: score.covered,
      agentAccuracy: score.agentAccuracy,
      stepAccuracy: score.stepAccuracy,
      official: { agentAccuracy: official.agentAccuracy, stepAccuracy: official.stepAccuracy },
      method: row.id,
      ...(crashNote ? { harnessCrash: values.harnessCrash } : {}),
      dataset: 'who-and-when',
      path: folder,
      unscorable,
      baselines: Object.fromEntries(base.map((b) => [b.id, { agentAccuracy: b.score.agentAccuracy, stepAccuracy: b.score.stepAccuracy, official: { agentAccuracy: b.official.agentAccuracy, stepAccuracy: b.official.stepAccuracy } }])),
      perAgent: score.perAgent,
      agentGuard: guard,
      wallSeconds: row.wallSeconds,
    };
    io.stdout(JSON.stringify(out) + '\n');
  } else {
    const title = `Who&When attribution: ${row.id} on ${folder} (${row.wallSeconds.toFixed(2)} s)${crashNote ? `\n${crashNote}` : ''}`;
    io.stdout(formatAttribution(score, title, { official, baselines: base, unscorable, guard }));
  }
  return 0;
}
