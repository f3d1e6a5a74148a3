/**
 * The outer loop's training step (MASS: SFT on the top-ranked trajectories, loss on assistant
 * tokens only, the checkpoint with the lowest validation loss kept) with Flowlab's own trainer
 * (core/training/port.ts; models/trainer): full-weight Adam steps on the laptop instead of
 * MASS's LoRA on a GPU. The exported rows become trainer sequences (sftExport.ts); each pass
 * goes over every training sequence in batches; the validation loss (mean cross-entropy over
 * the assistant tokens of the validation sequences) is measured before training and after each
 * pass, and the weights of the best pass are written as the new version.
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { ModelProvider } from '../model/provider.ts';
import type { SftSequence, StepResult, TrainableModel, Trainer } from '../training/port.ts';
import { chunks } from '../training/samples.ts';
import type { PromptTokenizer } from './sftExport.ts';

/**
 * A tokenizer over a live provider: the ids it feeds for a prompt, read from a one-token
 * generation with `recordTokens` (the provider renders and tokenizes exactly as in a run, BOS
 * included). Errors: `Error` when the provider records no ids (it cannot serve training).
 */
export function providerTokenizer(provider: ModelProvider, model = 'default', role = 'orchestrator'): PromptTokenizer {
  return async ({ system, prompt }) => {
    const r = await provider.generate({
      role: role as never, ...(system !== undefined && { system }), prompt, params: { temperature: 0, maxTokens: 1 }, seed: 0, model,
      key: { taskKey: 'mass-tokenize', nodeId: 'tokenize', attempt: 1, callIndex: 0 }, recordTokens: true,
    });
    if (!r.promptTokenIds?.length) throw new Error(`provider ${provider.name} records no token ids: it cannot tokenize SFT prompts`);
    return r.promptTokenIds;
  };
}

/** Mean cross-entropy (nats) over the masked-in tokens of `seqs` under `model` (NaN with none). */
export async function maskedLoss(model: TrainableModel, seqs: readonly SftSequence[]): Promise<number> {
  let total = 0;
  let n = 0;
  for (const s of seqs) {
    const probs = await model.probabilities(s.tokens);
    for (let t = 1; t < s.tokens.length; t++) {
      if (!s.lossMask[t]) continue;
      const p = probs[t - 1]?.[s.tokens[t]!] ?? 0;
      total += -Math.log(Math.max(p, 1e-12));
      n++;
    }
  }
  return n ? total / n : NaN;
}

export interface SftRunOptions {
  passes: number;
  lr: number;
  batch: number;
  maxGradNorm?: number;
}

export interface SftRunResult {
  /** The file written (the best pass's weights). */
  file: string;
  /** Validation loss before training and after each pass (NaN without validation data). */
  validationLoss: number[];
  /** The pass kept (1-based). */
  bestPass: number;
  /** Mean training loss of each pass. */
  trainLoss: number[];
  trainTokens: number;
  sequences: number;
  seconds: number;
}

/**
 * Removes the temp files a killed write of `outFile` left beside it: models/gguf/writeGguf.ts's
 * `.<name>.<pid>.<hex>.tmp`, whose writer process is gone (a live writer's temp is kept). A
 * killed rsi run would otherwise leave one dead model-sized file per kill. Returns the paths removed.
 */
export function sweepDeadTemps(outFile: string): string[] {
  const dir = path.dirname(outFile);
  const prefix = `.${path.basename(outFile)}.`;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names.sort()) {
    const m = /^(\d+)\.[0-9a-f]+\.tmp$/.exec(name.startsWith(prefix) ? name.slice(prefix.length) : '');
    if (!m || alive(Number(m[1]))) continue;
    rmSync(path.join(dir, name), { force: true });
    removed.push(path.join(dir, name));
  }
  return removed;
}

function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Trains `start` on `train` for `passes` passes and writes the pass with the lowest validation
 * loss (the last pass when there is no validation data) to `outFile`, first sweeping the dead
 * temp files of an earlier, killed write of it (`sweepDeadTemps`).
 */
export async function sftTrain(trainer: Trainer, start: string, train: readonly SftSequence[], validation: readonly SftSequence[], outFile: string, o: SftRunOptions): Promise<SftRunResult> {
  const t0 = performance.now();
  const model = await trainer.load(start);
  mkdirSync(path.dirname(outFile), { recursive: true });
  sweepDeadTemps(outFile);
  try {
    const validationLoss = [validation.length ? await maskedLoss(model, validation) : NaN];
    const trainLoss: number[] = [];
    let best = Infinity;
    let bestPass = 0;
    let tokens = 0;
    for (let p = 1; p <= o.passes; p++) {
      const steps: StepResult[] = [];
      for (const b of chunks(train, o.batch)) steps.push(await model.sftStep(b, { lr: o.lr, ...(o.maxGradNorm !== undefined && { maxGradNorm: o.maxGradNorm }) }));
      tokens += steps.reduce((s, r) => s + r.tokens, 0);
      trainLoss.push(steps.reduce((s, r) => s + r.loss, 0) / Math.max(1, steps.length));
      const v = validation.length ? await maskedLoss(model, validation) : NaN;
      validationLoss.push(v);
      // Without validation data every pass is written (the last one stays); with it, the first pass and each better one.
      if (!validation.length || bestPass === 0 || v < best) {
        best = v;
        bestPass = p;
        await model.writeGguf(outFile);
      }
    }
    return { file: outFile, validationLoss, bestPass, trainLoss, trainTokens: tokens, sequences: train.length, seconds: (performance.now() - t0) / 1000 };
  } finally {
    model.dispose();
  }
}
