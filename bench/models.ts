/**
 * Local-model figures, each measured in the same run as its baseline:
 * - prefix reuse: `flowlab run examples/gsm8k-team.yaml` (plain runs) and `flowlab rollouts
 *   examples/gsm8k-team.yaml --group G` (G rollouts per task at temperature 0.8, run together) on
 *   a template-carrying copy of stories260K (ChatML, written with the GGUF writer), each once with
 *   prefix reuse and once with `--no-prefix-reuse`: prompt tokens sent vs evaluated
 *   (models/llama/generate.ts), wall time of each, and how many completions are the same (calls
 *   matched by task, node, attempt and call index);
 * - tuning: `flowlab tune`'s best setting beside the default one (1 thread under 64 MB, batch 512).
 * Prints nothing; the caller prints.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openStore } from '../core/store/index.ts';
import { writeGgufWithMetadata } from '../models/llama/ggufFixture.ts';
import { CHATML } from '../models/llama/templates.fixture.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

export interface ReuseSide {
  sent: number;
  evaluated: number;
  wallSeconds: number;
  calls: number;
}

/** One workload measured with prefix reuse on and off. */
export interface ReuseCase {
  on: ReuseSide;
  off: ReuseSide;
  /** Calls whose completion is the same on both sides, of `on.calls`. */
  sameCompletions: number;
}

export interface ModelsBenchResult {
  tasks: number;
  group: number;
  plain: ReuseCase;
  rollouts: ReuseCase;
  tune: { best: { threads: number; batchSize: number; tokensPerSecond: number }; default: { threads: number; batchSize: number; tokensPerSecond: number } };
}

function flowlab(args: string[], env: NodeJS.ProcessEnv): string {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/flowlab.js'), ...args], { cwd: ROOT, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`flowlab ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** Runs both measurements on `stories` (stories260K.gguf) with `tasks` GSM8K tasks. */
export async function benchModels(opts: { stories: string; tasks?: number; group?: number }): Promise<ModelsBenchResult> {
  const tasks = opts.tasks ?? 10;
  const group = opts.group ?? 4;
  const dir = mkdtempSync(path.join(tmpdir(), 'flowlab-bench-models-'));
  try {
    const model = path.join(dir, 'stories-chatml.gguf');
    await writeGgufWithMetadata(opts.stories, model, { 'tokenizer.chat_template': CHATML });
    const env = { ...process.env, FLOWLAB_TUNE_FILE: path.join(dir, 'tuned.json') };
    let n = 0;
    const side = (command: string[]) => {
      const db = path.join(dir, `run${n++}.db`);
      const report = JSON.parse(flowlab([...command, 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--limit', String(tasks), '--model', model, '--threads', '1', '--db', db, '--json'], env)) as { experimentId: string; wallSeconds: number };
      const store = openStore(db);
      try {
        const calls = store.getExperimentCalls(report.experimentId);
        return {
          side: { sent: calls.reduce((s, c) => s + c.promptTokens, 0), evaluated: calls.reduce((s, c) => s + (c.promptTokensEvaluated ?? c.promptTokens), 0), wallSeconds: report.wallSeconds, calls: calls.length },
          completions: new Map(calls.map((c) => [`${c.taskIndex}/${c.nodeId}/${c.attempt}/${c.callIndex}`, c.completion])),
        };
      } finally {
        store.close();
      }
    };
    const both = (command: string[]): ReuseCase => {
      const on = side(command);
      const off = side([...command, '--no-prefix-reuse']);
      const sameCompletions = [...on.completions].filter(([k, c]) => off.completions.get(k) === c).length;
      return { on: on.side, off: off.side, sameCompletions };
    };
    const plain = both(['run']);
    const rollouts = both(['rollouts', '--group', String(group)]);
    const tune = JSON.parse(flowlab(['tune', '--model', model, '--json', '--repeats', '3'], env)) as ModelsBenchResult['tune'];
    return { tasks, group, plain, rollouts, tune: { best: tune.best, default: tune.default } };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
