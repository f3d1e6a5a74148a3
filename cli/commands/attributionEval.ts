import path from 'node:path';
import Table from 'cli-table3';
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
import { intFlag, parse, UsageError } from '../args.ts';
import type { ModelConfig } from '../../core/model/index.ts';
import { llamaProvider } from '../../models/factory.ts';
import { processIo, type Io } from '../io.ts';

export const ATTRIBUTION_EVAL_USAGE = `Usage: flowlab attribution-eval --dataset who-and-when --method <method> [options]

Scores failure attribution on Who&When logs (Zhang et al., ICML 2025): which agent made the
decisive mistake, and at which step. Accuracy is reported over all logs and over the logs the
method gave an answer for (covered).

Methods:
  surfaced        Flowlab's structure-aware credit over failures the log surfaces itself
                  (non-zero exit codes, tracebacks, error lines, HTTP errors, ...); no model
  all-at-once     LLM judge reads the whole log once and names agent and step
  step-by-step    LLM judge asks of each step in order "is this the decisive mistake?"
  binary-search   LLM judge asks which half holds the decisive mistake, recursively

Options:
  --dataset <name>          dataset (known: who-and-when)                 [required]
  --method <method>         surfaced | all-at-once | step-by-step | binary-search  [required]
  --path <folder>           folder of Who&When *.json logs (either variant)
                            [default: $FLOWLAB_SHARED/data/who_and_when/Hand-Crafted or ../shared/...]
  --model <file.gguf>       judge model (required by the judge methods)
  --limit <n>               first n logs (natural file-name order)         [default: all]
  --max-chars <n>           cut each message to n characters in prompts   [default: ${JUDGE_DEFAULTS.maxChars}]
  --max-prompt-chars <n>    characters per call (system + prompt)         [default: ${JUDGE_DEFAULTS.maxPromptChars}]
  --context-size <n>        judge model context, tokens                   [default: 4096]
  --threads <n>             CPU threads for the judge model [default: 1 for files < 64 MB, else half the cores]
  --seed <n>                seed of a log's first call (call i: seed + i) [default: 0]
  --harness-crash <class>   infrastructure | execution: how surfaced treats a crash of the
                            logging harness itself                        [default: infrastructure]
  --json                    print one JSON object instead of the tables
`;

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

export async function attributionEvalCommand(argv: string[], io: Io = processIo): Promise<number> {
  const U = ATTRIBUTION_EVAL_USAGE;
  const { values, positionals } = parse(argv, {
    dataset: { type: 'string' },
    method: { type: 'string' },
    path: { type: 'string' },
    model: { type: 'string' },
    limit: { type: 'string' },
    'max-chars': { type: 'string' },
    'max-prompt-chars': { type: 'string' },
    'context-size': { type: 'string' },
    threads: { type: 'string' },
    seed: { type: 'string', default: '0' },
    'harness-crash': { type: 'string', default: 'infrastructure' },
    json: { type: 'boolean', default: false },
  }, U);
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`, U);
  if (!values.dataset) throw new UsageError('missing --dataset', U);
  if (values.dataset !== 'who-and-when') throw new UsageError(`unknown --dataset "${values.dataset}" (known: who-and-when)`, U);
  if (!values.method) throw new UsageError('missing --method', U);
  if (!ATTRIBUTION_METHODS.includes(values.method as AttributionMethod)) {
    throw new UsageError(`unknown --method "${values.method}" (known: ${ATTRIBUTION_METHODS.join(', ')})`, U);
  }
  const method = values.method as AttributionMethod;
  const limit = intFlag(values.limit, 'limit', U, { min: 1 });
  const maxChars = intFlag(values['max-chars'], 'max-chars', U, { min: 1 });
  const maxPromptChars = intFlag(values['max-prompt-chars'], 'max-prompt-chars', U, { min: 200 });
  const contextSize = intFlag(values['context-size'], 'context-size', U, { min: 64 }) ?? 4096;
  const threads = intFlag(values.threads, 'threads', U, { min: 1 });
  const seed = intFlag(values.seed, 'seed', U)!;
  const harnessCrash = values['harness-crash'];
  if (harnessCrash !== 'infrastructure' && harnessCrash !== 'execution') throw new UsageError(`--harness-crash takes infrastructure or execution, got "${harnessCrash}"`, U);
  if (method === 'surfaced') {
    if (values.model) throw new UsageError('--model is for the judge methods; surfaced uses no model', U);
  } else if (!values.model) {
    throw new UsageError(`--method ${method} needs --model <file.gguf>`, U);
  }

  const folder = path.resolve(values.path ?? path.join(resolveSharedDir(), 'data', 'who_and_when', 'Hand-Crafted'));
  const logs = importWhoAndWhen(folder, limit === undefined ? {} : { limit });
  const t0 = performance.now();
  let evaluated;
  if (method === 'surfaced') {
    evaluated = await evaluateAttribution(logs, method, { surfaced: { harnessCrash } });
  } else {
    const cfg: ModelConfig = { models: { default: path.resolve(values.model!) }, roleModels: { judge: 'default' }, threads, contextSize, gpu: false };
    const provider = await llamaProvider(cfg);
    try {
      await provider.load?.();
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
