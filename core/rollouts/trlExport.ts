import type { AdvantageRow } from '../store/improve.ts';
import type { NodeEvent } from '../trace/events.ts';
import type { RunRecord } from '../results/index.ts';
import { safeFileName } from '../fileNames.ts';

/**
 * Training export for Hugging Face TRL (docs/training.md, "2. Export for TRL"): per learning role, JSONL files TRL reads as
 * they are (https://huggingface.co/docs/trl/dataset_formats):
 *
 * - `<role>.grpo.jsonl` (`<role>` made a safe file name, `safeFileName` in core/fileNames.ts;
 *   the manifest's `roleFiles` maps each role to its files): one record per model call (turn) of the role, in TRL's prompt-completion
 *   type — conversational `{"prompt": [{"role","content"}...], "completion": [{"role": "assistant", ...}]}`
 *   or standard `{"prompt": "...", "completion": "..."}` — plus the columns `reward`, `advantage`
 *   and `group_id` for advantage-weighted policy gradient, and `label` (advantage > 0), which makes
 *   the same file an unpaired-preference dataset for TRL's KTOTrainer as is. In Flow-GRPO mode
 *   every turn of a trajectory carries the trajectory's advantage (the broadcast).
 * - `<role>.sft.jsonl`: conversational language-modelling records `{"messages": [system?, user,
 *   assistant]}` (the assistant turn is the role's own completion: train with SFTTrainer and
 *   `assistant_only_loss=True`), or standard prompt-completion records (completion-only loss),
 *   from the role's turns in rollouts that beat their group (advantage > 0) or were correct.
 * - `manifest.json`: workflow hash, models, seeds, modes, counts, and how to train on each file.
 */
export interface TrlExportInput {
  experiment: { id: string; workflowName: string; workflowHash: string; seed: number; dataset: string; split: string };
  models: Record<string, string>;
  mode: string;
  roles: readonly string[];
  runs: ReadonlyArray<{ run: RunRecord; events: readonly NodeEvent[] }>;
  advantages: readonly AdvantageRow[];
  /** Which advantages to export: the per-role ladder ones, or Flow-GRPO's broadcast outcome. */
  advantageMode: 'ladder' | 'flow-grpo';
  /** `conversational` (chat models; TRL applies the chat template) or `standard` (plain text, base models). */
  format: 'conversational' | 'standard';
  /** SFT keeps turns from rollouts that `beat-group` (advantage > 0) or were `correct`. */
  sftFilter: 'beat-group' | 'correct';
}

export type ChatMessage = { role: 'system' | 'user' | 'assistant'; content: string };

export interface GrpoRecord {
  prompt: string | ChatMessage[];
  completion: string | ChatMessage[];
  reward: number;
  advantage: number;
  group_id: string;
  label: boolean;
  run_id: string;
  node_id: string;
  attempt: number;
  call_index: number;
  seed: number;
  temperature: number;
  model: string;
}

export type SftRecord = { messages: ChatMessage[]; run_id: string; node_id: string } | { prompt: string; completion: string; run_id: string; node_id: string };

export interface TrlExport {
  files: Record<string, string>;
  manifest: Record<string, unknown>;
}

export function exportForTrl(input: TrlExportInput): TrlExport {
  const adv = new Map(input.advantages.filter((a) => a.mode === input.advantageMode).map((a) => [`${a.runId}\u0000${a.role}`, a]));
  const files: Record<string, string> = {};
  const counts: Record<string, { grpo: number; sft: number; zeroAdvantage: number; groups: number }> = {};
  const fileNames: Record<string, { grpo: string; sft: string }> = {};
  for (const role of input.roles) {
    const grpo: GrpoRecord[] = [];
    const sft: SftRecord[] = [];
    const groups = new Set<string>();
    for (const { run, events } of input.runs) {
      const a = adv.get(`${run.runId}\u0000${role}`);
      if (!a) continue;
      groups.add(a.groupKey);
      const keepForSft = input.sftFilter === 'correct' ? run.correct : a.advantage > 0;
      for (const e of events) {
        for (const c of e.calls) {
          if (c.role !== role || c.error !== undefined) continue;
          const { prompt, completion } = promptCompletion(c.system, c.prompt, c.completion, input.format);
          grpo.push({
            prompt, completion, reward: a.reward, advantage: a.advantage, group_id: a.groupKey, label: a.advantage > 0,
            run_id: run.runId, node_id: e.nodeId, attempt: e.attempt, call_index: c.callIndex, seed: c.seed, temperature: c.params.temperature, model: c.model,
          });
          if (keepForSft) {
            sft.push(input.format === 'conversational'
              ? { messages: [...(c.system ? [{ role: 'system' as const, content: c.system }] : []), { role: 'user', content: c.prompt }, { role: 'assistant', content: c.completion }], run_id: run.runId, node_id: e.nodeId }
              : { prompt: promptCompletion(c.system, c.prompt, c.completion, 'standard').prompt as string, completion: c.completion, run_id: run.runId, node_id: e.nodeId });
          }
        }
      }
    }
    // Role names are workflow (or imported trace) text: the file name is made safe (core/fileNames.ts).
    const base = safeFileName(role);
    files[`${base}.grpo.jsonl`] = grpo.map((r) => JSON.stringify(r)).join('\n') + (grpo.length ? '\n' : '');
    files[`${base}.sft.jsonl`] = sft.map((r) => JSON.stringify(r)).join('\n') + (sft.length ? '\n' : '');
    fileNames[role] = { grpo: `${base}.grpo.jsonl`, sft: `${base}.sft.jsonl` };
    counts[role] = { grpo: grpo.length, sft: sft.length, zeroAdvantage: grpo.filter((r) => r.advantage === 0).length, groups: groups.size };
  }
  const manifest = {
    flowlab: 'trl-export/1',
    experimentId: input.experiment.id,
    workflow: { name: input.experiment.workflowName, hash: input.experiment.workflowHash },
    dataset: `${input.experiment.dataset}/${input.experiment.split}`,
    experimentSeed: input.experiment.seed,
    models: input.models,
    coevolutionMode: input.mode,
    learningRoles: input.roles,
    advantageMode: input.advantageMode,
    advantage: input.advantageMode === 'flow-grpo'
      ? 'Flow-GRPO: trajectory outcome reward normalised over the group per trajectory (population std, eps 1e-6), broadcast to every turn of the role'
      : 'per-role ladder reward h normalised within each task group (population std, eps 1e-6); zero-spread groups have advantage 0',
    format: input.format,
    sftFilter: input.sftFilter,
    counts,
    roleFiles: fileNames,
    files: {
      grpo: `TRL prompt-completion (${input.format}) + reward, advantage, group_id; label = advantage > 0 makes it a KTOTrainer dataset as is`,
      sft: input.format === 'conversational' ? 'TRL conversational language modeling (messages); SFTConfig(assistant_only_loss=True)' : 'TRL standard prompt-completion (completion-only loss)',
    },
    created: new Date().toISOString(),
  };
  files['manifest.json'] = JSON.stringify(manifest, null, 2) + '\n';
  return { files, manifest };
}

function promptCompletion(system: string | undefined, prompt: string, completion: string, format: 'conversational' | 'standard') {
  if (format === 'standard') return { prompt: system ? `${system}\n\n${prompt}` : prompt, completion };
  const messages: ChatMessage[] = [...(system ? [{ role: 'system' as const, content: system }] : []), { role: 'user', content: prompt }];
  return { prompt: messages, completion: [{ role: 'assistant' as const, content: completion }] };
}
