import path from 'node:path';
import Table from 'cli-table3';
import { Option, type Command } from 'commander';
import {
  ATTRIBUTION_METHODS,
  evaluateAttribution,
  importWhoAndWhen,
  JUDGE_DEFAULTS,
  NO_PREDICTION,
  PAPER_REFERENCE,
  type AttributionMethod,
  type AttributionScore,
} from '../../core/attribution/index.ts';
import { resolveSharedDir } from '../../core/tasks/index.ts';
import { act, intOption, UsageError, type CommandContext } from '../args.ts';
import type { ModelConfig } from '../../core/model/index.ts';
import { loadedLlamaProvider } from '../../models/factory.ts';
import type { Io } from '../io.ts';

interface AttributionFlags {
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
  json?: boolean;
}

/** `flowlab attribution-eval --dataset who-and-when --method <method>`. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('--dataset who-and-when --method <method> [options]')
    .description([
      'Scores failure attribution on Who&When logs (Zhang et al., ICML 2025): which agent made the',
      'decisive mistake, and at which step. Accuracy is reported over all logs and over the logs the',
      'method gave an answer for (covered).',
    ].join('\n'))
    .addHelpText('after', [
      '',
      'Methods:',
      "  surfaced        Flowlab's structure-aware credit over failures the log surfaces itself",
      '                  (non-zero exit codes, tracebacks, error lines, HTTP errors, ...); no model',
      '  all-at-once     LLM judge reads the whole log once and names agent and step',
      '  step-by-step    LLM judge asks of each step in order "is this the decisive mistake?"',
      '  binary-search   LLM judge asks which half holds the decisive mistake, recursively',
    ].join('\n'))
    .addOption(new Option('--dataset <name>', 'dataset (known: who-and-when)').makeOptionMandatory())
    .addOption(new Option('--method <method>', 'surfaced | all-at-once | step-by-step | binary-search').makeOptionMandatory())
    .option('--path <folder>', 'folder of Who&When *.json logs (either variant) (default: $FLOWLAB_SHARED/data/who_and_when/Hand-Crafted or ../shared/...)')
    .option('--model <file.gguf>', 'judge model (required by the judge methods)')
    .addOption(intOption('--limit <n>', 'first n logs (natural file-name order) (default: all)', { min: 1 }))
    .addOption(intOption('--max-chars <n>', `cut each message to n characters in prompts (default: ${JUDGE_DEFAULTS.maxChars})`, { min: 1 }))
    .addOption(intOption('--max-prompt-chars <n>', `characters per call (system + prompt) (default: ${JUDGE_DEFAULTS.maxPromptChars})`, { min: 200 }))
    .addOption(intOption('--context-size <n>', 'judge model context, tokens', { min: 64, default: 4096 }))
    .addOption(intOption('--threads <n>', 'CPU threads for the judge model (default: 1 for files < 64 MB, else half the cores)', { min: 1 }))
    .addOption(intOption('--seed <n>', "seed of a log's first call (call i: seed + i)", { default: 0 }))
    .option('--harness-crash <class>', 'infrastructure | execution: how surfaced treats a crash of the logging harness itself', 'infrastructure')
    .option('--json', 'print one JSON object instead of the tables')
    .action(act(ctx, (o: AttributionFlags) => attributionEvalCommand(o, ctx.io)));
}

const pct = (x: number | null, digits = 1) => (x === null ? 'n/a' : `${(x * 100).toFixed(digits)}%`);

/** The tables `flowlab attribution-eval` prints. */
export function formatAttribution(s: AttributionScore, title: string): string {
  const t = new Table({ head: ['metric', 'value'], style: { head: [], border: [], compact: true } });
  t.push(
    ['logs', String(s.logs)],
    ['covered (method answered)', `${s.covered} (${pct(s.logs ? s.covered / s.logs : 0)})`],
    ['agent accuracy, over all logs', pct(s.agentAccuracy.overAll)],
    ['agent accuracy, over covered', pct(s.agentAccuracy.overCovered)],
    ['step accuracy, over all logs', pct(s.stepAccuracy.overAll)],
    ['step accuracy, over covered', pct(s.stepAccuracy.overCovered)],
    [
      'from the paper, for context: best LLM method',
      `agent ${pct(PAPER_REFERENCE.agentAccuracy.low, 0)}–${pct(PAPER_REFERENCE.agentAccuracy.high, 0)}, step <= ${pct(PAPER_REFERENCE.stepAccuracyAtMost)} (${PAPER_REFERENCE.source})`,
    ],
  );
  const c = new Table({ head: ['labelled agent', 'logs', 'covered', 'agent correct', 'step correct', 'predicted as'], style: { head: [], border: [], compact: true } });
  for (const a of s.perAgent) {
    const as = Object.entries(a.predictedAs)
      .sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]))
      .map(([k, v]) => `${k === NO_PREDICTION ? 'none' : k} ${v}`)
      .join(', ');
    c.push([a.agent, String(a.labelled), String(a.covered), String(a.agentCorrect), String(a.stepCorrect), as]);
  }
  return `${title}\n${t.toString()}\nPer labelled agent:\n${c.toString()}\n`;
}

async function attributionEvalCommand(values: AttributionFlags, io: Io): Promise<number> {
  if (values.dataset !== 'who-and-when') throw new UsageError(`unknown --dataset "${values.dataset}" (known: who-and-when)`);
  if (!ATTRIBUTION_METHODS.includes(values.method as AttributionMethod)) {
    throw new UsageError(`unknown --method "${values.method}" (known: ${ATTRIBUTION_METHODS.join(', ')})`);
  }
  const method = values.method as AttributionMethod;
  const { limit, maxChars, maxPromptChars, contextSize, threads, seed } = values;
  const harnessCrash = values.harnessCrash;
  if (harnessCrash !== 'infrastructure' && harnessCrash !== 'execution') throw new UsageError(`--harness-crash takes infrastructure or execution, got "${harnessCrash}"`);
  if (method === 'surfaced') {
    if (values.model) throw new UsageError('--model is for the judge methods; surfaced uses no model');
  } else if (!values.model) {
    throw new UsageError(`--method ${method} needs --model <file.gguf>`);
  }

  const folder = path.resolve(values.path ?? path.join(resolveSharedDir(), 'data', 'who_and_when', 'Hand-Crafted'));
  const logs = importWhoAndWhen(folder, limit === undefined ? {} : { limit });
  const t0 = performance.now();
  let evaluated;
  if (method === 'surfaced') {
    evaluated = await evaluateAttribution(logs, method, { surfaced: { harnessCrash } });
  } else {
    const cfg: ModelConfig = { models: { default: path.resolve(values.model!) }, roleModels: { judge: 'default' }, threads, contextSize, gpu: false };
    const provider = await loadedLlamaProvider(cfg);
    try {
      io.stderr(`Judging ${logs.length} logs from ${folder} with ${method} on ${path.basename(cfg.models.default!)}\n`);
      evaluated = await evaluateAttribution(logs, method, {
        judge: { provider, model: cfg.roleModels.judge, role: 'judge', maxChars, maxPromptChars, seed },
        onRecord: (r, done, total) => {
          const p = r.prediction ? `${r.prediction.agent}@${r.prediction.step}` : 'none';
          io.stderr(`  [${done}/${total}] log ${r.logId}: ${p} (label ${r.label.agent}@${r.label.step}; ${r.calls} calls)${r.note ? ` ${r.note}` : ''}\n`);
        },
      });
    } finally {
      await provider.dispose();
    }
  }
  const wallSeconds = (performance.now() - t0) / 1000;
  const { score } = evaluated;
  if (values.json) {
    const out = {
      logs: score.logs,
      covered: score.covered,
      agentAccuracy: score.agentAccuracy,
      stepAccuracy: score.stepAccuracy,
      method,
      dataset: 'who-and-when',
      path: folder,
      perAgent: score.perAgent,
      wallSeconds,
    };
    io.stdout(JSON.stringify(out) + '\n');
  } else {
    io.stdout(formatAttribution(score, `Who&When attribution: ${method} on ${folder} (${wallSeconds.toFixed(2)} s)`));
  }
  return 0;
}
