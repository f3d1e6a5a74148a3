/**
 * MASS's SFT export (Sakana AI MASS, public `training/prepare_sft_data.py`): the ranked runs of a
 * task are cut by rank — ranks 1..15 train, rank 16 validation (the rest unused) — and each
 * run's model calls become supervised data:
 *
 * - the orchestrator's first prompt becomes the **bare task**: the workflow text appended to it
 *   is removed (the node's own cue, e.g. `Plan:`, stays), so the model learns to organise the
 *   team without being told how; the workflow text is removed from the orchestrator's later
 *   prompts too. A bare-task run's prompts are already bare and stay as recorded;
 * - the orchestrator's and every sub-agent's calls are exported, one conversation per call in
 *   TRL's conversational format (`{"messages": [{role, content}, ...]}`: system, user, assistant),
 *   since a Flowlab call is one self-contained prompt and completion;
 * - the loss is on assistant tokens only: system and user tokens are masked (TRL:
 *   `assistant_only_loss=True`; Flowlab's trainer: `SftSequence.lossMask`).
 *
 * A quarantined trajectory is never exported: `exportRows` refuses it.
 */
import type { SftSequence } from '../training/port.ts';
import { MassRankError } from './rankErrors.ts';

/** One model call of a run, as the store records it (core/trace ModelCallRecord, the fields used here). */
export interface ExportCall {
  role: string;
  nodeId?: string;
  system?: string;
  prompt: string;
  completion: string;
  promptTokenIds?: number[];
  completionTokenIds?: number[];
  error?: string;
}

/** A ranked run to export. */
export interface ExportTrajectory {
  runId: string;
  taskId: string;
  rank: number;
  /** The bare task prompt (what the orchestrator's first prompt holds once the workflow is removed). */
  bareTask: string;
  /** The workflow text the run's orchestrator prompts carried (removed from its later prompts); absent for a bare run. */
  workflowText?: string;
  orchestratorRole: string;
  /** The run's model calls, in call order. */
  calls: ExportCall[];
  quarantined: boolean;
}

export interface TrlMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** One exported conversation with where it came from. */
export interface ExportRow {
  messages: TrlMessage[];
  runId: string;
  taskId: string;
  rank: number;
  split: 'train' | 'validation';
  /** The call's role (the orchestrator's or a sub-agent's). */
  agent: string;
  /** Position of the call in its run. */
  callIndex: number;
  /** True when the prompt was rewritten (the bare task, or the workflow removed). */
  stripped: boolean;
  /** Recorded ids of the completion (what the model sampled), when the run recorded them. */
  completionTokenIds?: number[];
  /** Recorded ids of the prompt, when kept as recorded (absent when the prompt was rewritten). */
  promptTokenIds?: number[];
  system?: string;
  prompt: string;
}

/** The train/validation cut by rank (1-based): ranks 1..train, then the next `validation`. */
export function splitByRank<T extends { rank: number }>(ranked: readonly T[], opts: { train?: number; validation?: number } = {}): { train: T[]; validation: T[]; unused: T[] } {
  const nTrain = opts.train ?? 15;
  const nVal = opts.validation ?? 1;
  if (!Number.isInteger(nTrain) || nTrain < 1 || !Number.isInteger(nVal) || nVal < 0) throw new MassRankError('BAD_SPLIT', `rank cut: train must be an integer >= 1 and validation >= 0, got ${nTrain} and ${nVal}`);
  const sorted = [...ranked].sort((a, b) => a.rank - b.rank);
  return { train: sorted.filter((r) => r.rank <= nTrain), validation: sorted.filter((r) => r.rank > nTrain && r.rank <= nTrain + nVal), unused: sorted.filter((r) => r.rank > nTrain + nVal) };
}

/**
 * The exported conversations of the given trajectories (in order; calls that failed are left
 * out). Errors: `BAD_EXPORT` (a quarantined trajectory, an empty bare task, no orchestrator call).
 */
export function exportRows(trajectories: readonly ExportTrajectory[], split: 'train' | 'validation'): ExportRow[] {
  const rows: ExportRow[] = [];
  for (const t of trajectories) {
    if (t.quarantined) throw new MassRankError('BAD_EXPORT', `SFT export: run ${t.runId} (task ${t.taskId}) is quarantined and is never exported`);
    if (!t.bareTask.trim()) throw new MassRankError('BAD_EXPORT', `SFT export: run ${t.runId} has an empty bare task`);
    const first = t.calls.findIndex((c) => c.role === t.orchestratorRole);
    if (first < 0) throw new MassRankError('BAD_EXPORT', `SFT export: run ${t.runId} has no call of the orchestrator role "${t.orchestratorRole}"`);
    if (!t.calls[first]!.prompt.includes(t.bareTask)) throw new MassRankError('BAD_EXPORT', `SFT export: the orchestrator's first prompt in run ${t.runId} does not hold the bare task`);
    t.calls.forEach((c, i) => {
      if (c.error) return;
      let prompt = c.prompt;
      if (c.role === t.orchestratorRole && t.workflowText && prompt.includes(t.workflowText)) prompt = prompt.split(t.workflowText).join('').replace(/\n{3,}/g, '\n\n');
      const stripped = prompt !== c.prompt;
      const messages: TrlMessage[] = [...(c.system ? [{ role: 'system' as const, content: c.system }] : []), { role: 'user', content: prompt }, { role: 'assistant', content: c.completion }];
      rows.push({
        messages, runId: t.runId, taskId: t.taskId, rank: t.rank, split, agent: c.role, callIndex: i, stripped, prompt,
        ...(c.system !== undefined && { system: c.system }),
        ...(c.completionTokenIds && { completionTokenIds: c.completionTokenIds }),
        ...(!stripped && c.promptTokenIds && { promptTokenIds: c.promptTokenIds }),
      });
    });
  }
  return rows;
}

/** TRL conversational JSON lines: one `{"messages": [...]}` object per row. */
export function toJsonl(rows: readonly ExportRow[]): string {
  return rows.map((r) => JSON.stringify({ messages: r.messages })).join('\n') + (rows.length ? '\n' : '');
}

/** The provenance of each JSONL line (same order): run, task, rank, split, agent, whether stripped. */
export function manifestOf(rows: readonly ExportRow[]): Array<Pick<ExportRow, 'runId' | 'taskId' | 'rank' | 'split' | 'agent' | 'callIndex' | 'stripped'>> {
  return rows.map(({ runId, taskId, rank, split, agent, callIndex, stripped }) => ({ runId, taskId, rank, split, agent, callIndex, stripped }));
}

/** The ids a prompt is fed as (BOS included), under the model that will be trained. */
export type PromptTokenizer = (input: { system?: string; prompt: string }) => Promise<number[]>;

/**
 * Flowlab trainer sequences of exported rows: prompt ids (recorded, or tokenized when the prompt
 * was rewritten) masked 0, completion ids as recorded masked 1 (assistant tokens only). Rows
 * without recorded completion ids are skipped and counted.
 */
export async function sftSequencesOf(rows: readonly ExportRow[], tokenize: PromptTokenizer): Promise<{ sequences: SftSequence[]; skipped: number }> {
  const sequences: SftSequence[] = [];
  let skipped = 0;
  for (const r of rows) {
    if (!r.completionTokenIds?.length) {
      skipped++;
      continue;
    }
    const prompt = r.promptTokenIds ?? (await tokenize({ ...(r.system !== undefined && { system: r.system }), prompt: r.prompt }));
    sequences.push({ tokens: [...prompt, ...r.completionTokenIds], lossMask: [...prompt.map(() => 0), ...r.completionTokenIds.map(() => 1)] });
  }
  return { sequences, skipped };
}
