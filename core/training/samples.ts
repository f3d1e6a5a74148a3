/**
 * Training data from stored runs (docs/laptop-rl.md): a role's model calls, with the token ids recorded
 * when they were sampled (`recordTokens`), turned into the trainer port's batches.
 */
import type { ExperimentCall } from '../store/types.ts';
import type { PolicySample, SftSequence } from './port.ts';

/** Whether a call carries what a trainer needs: recorded ids, a completion, no error. */
export function isTrainable(c: ExperimentCall): c is ExperimentCall & { promptTokenIds: number[]; completionTokenIds: number[] } {
  return !c.error && Array.isArray(c.promptTokenIds) && Array.isArray(c.completionTokenIds) && c.completionTokenIds.length > 0 && c.promptTokenIds.length > 0;
}

/**
 * Policy samples of one role: each of its trainable calls with the advantage of its run
 * (`advantageOf(runId)`; every call of the role in a run gets the same advantage — Flow-GRPO's
 * broadcast to turns). Calls of runs without an advantage are left out.
 */
export function policySamples(calls: readonly ExperimentCall[], role: string, advantageOf: (runId: string) => number | undefined, maskOf?: MaskOf): PolicySample[] {
  const out: PolicySample[] = [];
  for (const c of inputOrder(calls)) {
    if (c.role !== role || !isTrainable(c)) continue;
    const advantage = advantageOf(c.runId);
    if (advantage === undefined || !Number.isFinite(advantage)) continue;
    const m = maskOf?.(c);
    out.push({ promptTokens: c.promptTokenIds, completionTokens: c.completionTokenIds, advantage, ...(m && { completionMask: m.mask }), ...(m?.allowed && { completionAllowed: m.allowed }) });
  }
  return out;
}

/**
 * The loss mask of a call's completion tokens (1 = chosen; core/training/choiceMask.ts) and, where
 * known, what the grammar allowed at each (`allowed`, PolicySample.completionAllowed), or
 * undefined for all of them, unrestricted.
 */
export type MaskOf = (call: ExperimentCall) => CallMask | undefined;
export interface CallMask {
  mask: number[];
  allowed?: Array<readonly number[] | null>;
}

/**
 * SFT sequences of one role: prompt + completion ids with the loss on completion tokens only
 * (MASS's mask), from the calls of the runs `keep` accepts (e.g. correct runs).
 */
export function sftSequences(calls: readonly ExperimentCall[], role: string, keep: (runId: string) => boolean, maskOf?: MaskOf): SftSequence[] {
  const out: SftSequence[] = [];
  for (const c of inputOrder(calls)) {
    if (c.role !== role || !isTrainable(c) || !keep(c.runId)) continue;
    const m = maskOf?.(c);
    out.push({
      tokens: [...c.promptTokenIds, ...c.completionTokenIds],
      lossMask: [...c.promptTokenIds.map(() => 0), ...(m?.mask ?? c.completionTokenIds.map(() => 1))],
      ...(m?.allowed && { allowed: [...c.promptTokenIds.map(() => null), ...m.allowed] }),
    });
  }
  return out;
}

/**
 * `calls` in the order they enter a training step: by task index, node id, attempt and call
 * index — ids of the inputs, never the order the calls finished in (a node event's `seq` follows
 * completion when branches of a run run in parallel). A step's gradient is a float sum over its
 * samples, so its bits depend on this order (docs/laptop-rl.md, "Reproducibility"). Stable; a copy.
 */
export function inputOrder<C extends Pick<ExperimentCall, 'taskIndex' | 'nodeId' | 'attempt' | 'callIndex'>>(calls: readonly C[]): C[] {
  return [...calls].sort((a, b) => a.taskIndex - b.taskIndex || (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0) || a.attempt - b.attempt || a.callIndex - b.callIndex);
}

/** Splits a batch into chunks of at most `size` (the last may be shorter). */
export function chunks<T>(xs: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += Math.max(1, size)) out.push(xs.slice(i, i + Math.max(1, size)));
  return out;
}
