/**
 * Local-model figures, each measured in the same run as its baseline:
 * - prefix reuse: `flowlab run examples/gsm8k-team.yaml` (plain runs) and `flowlab rollouts
 *   examples/gsm8k-team.yaml --group G` (G rollouts per task at temperature 0.8, run together) on
 *   a template-carrying copy of stories260K (ChatML, written with the GGUF writer), each once with
 *   prefix reuse and once with `--no-prefix-reuse`: prompt tokens sent vs evaluated
 *   (models/llama/generate.ts), wall time of each, and how many completions are the same (calls
 *   matched by task, node, attempt and call index). Each in two prompt layouts: the file as it is
 *   (each role's instructions are its system message) and the same file with `{{instructions}}`
 *   after each prompt's question line (core/engine/runNode.ts: the instructions go there and no
 *   system message is sent). Beside each: the floor, the fewest prompt tokens any prefix reuse
 *   could evaluate for those prompts (`reuseFloor`);
 * - tuning: `flowlab tune`'s best setting beside the default one (1 thread under 64 MB, batch 512).
 * `benchModels` prints nothing; `printModelsBench` prints. Run this part alone:
 * `FLOWLAB_SHARED=../shared npx tsx bench/models.ts`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { getLlama, type LlamaModel, type Token } from 'node-llama-cpp';
import { openStore, type ExperimentCall } from '../core/store/index.ts';
import { ChatTemplate, type TemplateMessage } from '../models/llama/chatTemplate.ts';
import { writeGgufWithMetadata } from '../models/llama/ggufFixture.ts';
import { CHATML } from '../models/llama/templates.fixture.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const WORKFLOW = path.join(ROOT, 'examples/gsm8k-team.yaml');

export interface ReuseSide {
  sent: number;
  evaluated: number;
  wallSeconds: number;
  calls: number;
}

/** The prompt layouts measured: the file as it is, and its prompts with `{{instructions}}` after the question line. */
export type PromptLayout = 'system' | 'slot';
export const LAYOUT_NAMES: Record<PromptLayout, string> = {
  system: 'as written: role instructions as the system message',
  slot: 'role instructions in the prompt after the question ({{instructions}})',
};

/** One workload measured with prefix reuse on and off. */
export interface ReuseCase {
  layout: PromptLayout;
  on: ReuseSide;
  off: ReuseSide;
  /** Calls whose completion is the same on both sides, of `on.calls`. */
  sameCompletions: number;
  /** The fewest prompt tokens any prefix reuse could evaluate for the reuse-on side's prompts (`reuseFloor`). */
  floor: number;
}

export interface ModelsBenchResult {
  tasks: number;
  group: number;
  plain: ReuseCase[];
  rollouts: ReuseCase[];
  tune: { best: { threads: number; batchSize: number; tokensPerSecond: number }; default: { threads: number; batchSize: number; tokensPerSecond: number } };
}

function flowlab(args: string[], env: NodeJS.ProcessEnv): string {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/flowlab.js'), ...args], { cwd: ROOT, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`flowlab ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/**
 * `yaml` (examples/gsm8k-team.yaml's text) with `{{instructions}}` on a line of its own after
 * every prompt's `Question: {{question}}` line. Throws when the file has no such line (it changed).
 */
export function withInstructionsAfterQuestion(yaml: string): string {
  const line = /^( +)Question: \{\{question\}\}\n/gm;
  if (!line.test(yaml)) throw new Error('examples/gsm8k-team.yaml has no "Question: {{question}}" prompt line any more; update bench/models.ts');
  return yaml.replace(line, (m, indent: string) => `${m}${indent}{{instructions}}\n`);
}

/**
 * The fewest prompt tokens prefix reuse could evaluate for `calls`, in the order they started:
 * each call's prompt (rendered through `template` as models/llama/renderInput.ts renders it, with
 * BOS) less its longest shared prefix with any earlier call's prompt followed by that call's
 * completion (a sequence keeps the tokens it generated), never below 1 token per call (the last
 * prompt token is always evaluated). Sequences unlimited, concurrency ignored: a lower bound.
 */
export function reuseFloor(calls: readonly ExperimentCall[], model: LlamaModel, template: ChatTemplate): number {
  const tokenText = { bos: model.tokens.bosString ?? '', eos: model.tokens.eosString ?? '' };
  const bos = model.tokens.bos;
  const seen: Token[][] = [];
  let floor = 0;
  for (const c of [...calls].sort((a, b) => (a.startedAt ?? 0) - (b.startedAt ?? 0))) {
    const messages: TemplateMessage[] = c.system ? [{ role: 'system', content: c.system }] : [];
    messages.push({ role: 'user', content: c.prompt });
    const body = template.render(messages, tokenText).text.tokenize(model.tokenizer);
    const tokens = bos != null && body[0] !== bos ? [bos, ...body] : body;
    let shared = 0;
    for (const s of seen) {
      let i = 0;
      while (i < s.length && i < tokens.length && s[i] === tokens[i]) i++;
      shared = Math.max(shared, i);
    }
    floor += tokens.length - Math.min(shared, tokens.length - 1);
    seen.push([...tokens, ...model.tokenize(c.completion)]);
  }
  return floor;
}

/** Runs both measurements on `stories` (stories260K.gguf) with `tasks` GSM8K tasks, in both layouts. */
export async function benchModels(opts: { stories: string; tasks?: number; group?: number }): Promise<ModelsBenchResult> {
  const tasks = opts.tasks ?? 10;
  const group = opts.group ?? 4;
  const dir = mkdtempSync(path.join(tmpdir(), 'flowlab-bench-models-'));
  const llama = await getLlama({ gpu: false });
  try {
    const model = path.join(dir, 'stories-chatml.gguf');
    await writeGgufWithMetadata(opts.stories, model, { 'tokenizer.chat_template': CHATML });
    const tokenizer = await llama.loadModel({ modelPath: model });
    const template = new ChatTemplate(CHATML);
    const workflows: Record<PromptLayout, string> = { system: WORKFLOW, slot: path.join(dir, 'gsm8k-team.yaml') };
    writeFileSync(workflows.slot, withInstructionsAfterQuestion(readFileSync(WORKFLOW, 'utf8')));
    const env = { ...process.env, FLOWLAB_TUNE_FILE: path.join(dir, 'tuned.json') };
    let n = 0;
    const side = (command: string[], layout: PromptLayout) => {
      const db = path.join(dir, `run${n++}.db`);
      const report = JSON.parse(flowlab([...command, workflows[layout], '--dataset', 'gsm8k', '--limit', String(tasks), '--model', model, '--threads', '1', '--db', db, '--json'], env)) as { experimentId: string; wallSeconds: number };
      const store = openStore(db);
      try {
        const calls = store.getExperimentCalls(report.experimentId);
        return {
          calls,
          side: { sent: calls.reduce((s, c) => s + c.promptTokens, 0), evaluated: calls.reduce((s, c) => s + (c.promptTokensEvaluated ?? c.promptTokens), 0), wallSeconds: report.wallSeconds, calls: calls.length },
          completions: new Map(calls.map((c) => [`${c.taskIndex}/${c.nodeId}/${c.attempt}/${c.callIndex}`, c.completion])),
        };
      } finally {
        store.close();
      }
    };
    const both = (command: string[], layout: PromptLayout): ReuseCase => {
      const on = side(command, layout);
      const off = side([...command, '--no-prefix-reuse'], layout);
      const sameCompletions = [...on.completions].filter(([k, c]) => off.completions.get(k) === c).length;
      return { layout, on: on.side, off: off.side, sameCompletions, floor: reuseFloor(on.calls, tokenizer, template) };
    };
    const layouts: PromptLayout[] = ['system', 'slot'];
    const plain = layouts.map((l) => both(['run'], l));
    const rollouts = layouts.map((l) => both(['rollouts', '--group', String(group)], l));
    await tokenizer.dispose();
    const tune = JSON.parse(flowlab(['tune', '--model', model, '--json', '--repeats', '3'], env)) as ModelsBenchResult['tune'];
    return { tasks, group, plain, rollouts, tune: { best: tune.best, default: tune.default } };
  } finally {
    await llama.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Prints `m` as `npm run bench` shows it: each case and layout with reuse on and off, the goal, the floor; tune beside the default. */
export function printModelsBench(m: ModelsBenchResult): void {
  const fmt = (x: number, d = 3) => x.toFixed(d);
  const ok = (pass: boolean) => (pass ? 'OK' : 'MISSED');
  const pct = (evaluated: number, sent: number) => fmt((100 * evaluated) / sent, 1);
  console.log(`models   gsm8k-team, ${m.tasks} tasks, stories260K + a ChatML template, 1 thread; each case with prefix reuse on and off in this run`);
  const cases = [
    ['plain runs', `flowlab run --limit ${m.tasks}`, m.plain],
    [`rollouts G=${m.group}`, `flowlab rollouts --group ${m.group} --limit ${m.tasks} (temperature 0.8)`, m.rollouts],
  ] as const;
  for (const [name, what, layouts] of cases) {
    for (const c of layouts) {
      console.log(`  ${name.padEnd(15)} ${what}, ${c.on.calls} calls; layout: ${LAYOUT_NAMES[c.layout]}`);
      console.log(`    reuse on   ${c.on.evaluated} of ${c.on.sent} prompt tokens evaluated (${pct(c.on.evaluated, c.on.sent)}%)   ${fmt(c.on.wallSeconds, 2)} s   goal <= 40%   ${ok(c.on.evaluated <= 0.4 * c.on.sent)}`);
      console.log(`    reuse off  ${c.off.evaluated} of ${c.off.sent} (${pct(c.off.evaluated, c.off.sent)}%)   ${fmt(c.off.wallSeconds, 2)} s   (baseline)   same completions: ${c.sameCompletions} of ${c.on.calls}`);
      console.log(`    floor      ${c.floor} of ${c.on.sent} (${pct(c.floor, c.on.sent)}%): the fewest any reuse could evaluate for these prompts`);
    }
  }
  console.log(`  tune best         ${m.tune.best.threads} thread(s), batch ${m.tune.best.batchSize}: ${fmt(m.tune.best.tokensPerSecond, 0)} tokens/s   ${fmt(m.tune.best.tokensPerSecond / m.tune.default.tokensPerSecond, 2)}x the default`);
  console.log(`  default setting   ${m.tune.default.threads} thread(s), batch ${m.tune.default.batchSize}: ${fmt(m.tune.default.tokensPerSecond, 0)} tokens/s   (baseline)`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const shared = process.env.FLOWLAB_SHARED ?? path.join(ROOT, '../shared');
  printModelsBench(await benchModels({ stories: path.join(shared, 'models/stories260K.gguf') }));
}
