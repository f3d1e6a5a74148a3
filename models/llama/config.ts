/**
 * The settings of a `LlamaProvider`: per-model configuration, provider options and the summary
 * `load()` reports. Pure types and defaults; no runtime import of node-llama-cpp.
 */
import type { LlamaLogLevel } from 'node-llama-cpp';
import type { SettingSource } from '../../core/model/index.ts';
import type { GgufInfo } from './ggufInfo.ts';

/** How one model file is run. Unset fields fall back to {@link LlamaProviderOptions.defaults}. */
export interface LlamaModelConfig {
  /** Path to the `.gguf` file (relative paths resolve against the process's working directory). */
  path: string;
  /**
   * Context size per sequence, in tokens: the prompt (including BOS) plus the completion must fit.
   * llama.cpp may round it up (to a multiple of 256).
   *
   * Defaults to `defaults.contextSize` (1024).
   */
  contextSize?: number;
  /**
   * CPU threads used to evaluate this model's context. Always set it explicitly: on the 2-core
   * reference machine 1 thread gave ~1,000-3,000 tokens/s with the tiny model, node-llama-cpp's
   * own default (4) ~2 tokens/s.
   *
   * Defaults to `defaults.threads` (1).
   */
  threads?: number;
  /**
   * `false`: CPU only (no layers offloaded: `gpuLayers: 0`). On Apple Silicon this still loads
   * node-llama-cpp's Metal build, the only one it publishes for mac-arm64 (a `gpu: false` runtime
   * finds no binary there); elsewhere the CPU build. `'auto'`: offload as many layers as fit on a
   * GPU, if the runtime finds one (Metal, CUDA or Vulkan; models/llama/platform.ts).
   *
   * Defaults to `defaults.gpu` (`false`).
   */
  gpu?: 'auto' | false;
  /**
   * Parallel sequences in the model's context: how many `generate` calls on this model run (and
   * are batched) at once; further calls wait for a free sequence. Memory grows with
   * `contextSize * sequences`.
   *
   * Defaults to `defaults.sequences` (4).
   */
  sequences?: number;
  /**
   * How concurrent calls on this model share decode batches.
   * - `'isolated'`: every llama.cpp decode holds tokens of one sequence only; concurrent calls
   *   interleave batch by batch (round robin). A call's text never depends on what else runs:
   *   the same seed, prompt and params give the same text alone or under load.
   * - `'mixed'`: node-llama-cpp's default, several sequences per decode (more throughput on larger
   *   models). Measured here: batched evaluation changes logits slightly, and at temperature > 0
   *   about 1 in 10 60-token calls then samples a different continuation than it would alone
   *   (greedy decoding was unaffected in 160 trials). Use only when reproducibility under
   *   concurrency does not matter.
   *
   * Defaults to `defaults.batching` (`'isolated'`).
   */
  batching?: 'isolated' | 'mixed';
  /**
   * `true`: attention computed exactly in F32 (flash attention off, F32 KV cache), so sampled
   * log-probabilities match the tfjs trainer's to ~1e-6 instead of ~1e-3 (models/trainer parity
   * test): on-policy sampling for laptop RL. Slower and larger; off by default.
   */
  exactAttention?: boolean;
  /**
   * Tokens per llama.cpp decode (prompt evaluation runs in batches of this many).
   *
   * Defaults to `defaults.batchSize`, else node-llama-cpp's `min(contextSize * sequences, 512)`.
   */
  batchSize?: number;
  /**
   * `true`: a call starts from the sequence whose evaluated tokens share the longest prefix with
   * its prompt (one sequence kept per prefix, waiting for a busy one that holds most of the
   * prompt; models/llama/sequencePool.ts) and evaluates only the rest (KV-cache reuse, as
   * llama.cpp's server does with `cache_prompt`); `false`: every call starts from an empty sequence. Calls that record token
   * ids (`recordTokens`) always start empty.
   *
   * Defaults to `defaults.prefixReuse` (`true`).
   */
  prefixReuse?: boolean;
  /** Where `threads` and `batchSize` came from, recorded on every call (`AppliedSettings.source`). Defaults to `default`. */
  settingsSource?: { threads?: SettingSource; batchSize?: SettingSource };
  /**
   * LoRA adapters (GGUF files in llama.cpp's adapter layout, e.g. from llama.cpp's
   * `convert_lora_to_gguf.py`, or `makeLoraAdapter` in `models/gguf`) applied on top of the
   * base model for this ref. Each update is added as `scale * (alpha / rank) * B A x`;
   * `scale` defaults to 1 (0 disables an adapter; negative values subtract it).
   *
   * A ref with adapters gets its own context on the shared base model; refs naming the same
   * file with the same adapters and scales (in the same order) share that context. Adapter
   * files are checked before use: a missing file is `MODEL_NOT_FOUND`, a file that is not a
   * GGUF or not a LoRA adapter (`general.type = "adapter"`, `adapter.type = "lora"`) is
   * `MODEL_INVALID`, and an adapter made for another architecture or another base model
   * (tensor missing or of another shape) is `MODEL_LOAD_FAILED`; every message names the
   * adapter file and the ref.
   *
   * Defaults to none.
   */
  lora?: ReadonlyArray<LlamaLoraAdapter>;
}

/** One LoRA adapter of a model ref (see {@link LlamaModelConfig.lora}). */
export interface LlamaLoraAdapter {
  /** Path to the adapter `.gguf` (relative paths resolve against the working directory). */
  path: string;
  /** Multiplier of the adapter's update. Defaults to 1. */
  scale?: number;
}

/** Options of {@link LlamaProvider}. */
export interface LlamaProviderOptions {
  /**
   * Model refs (`GenerateRequest.model`, e.g. `"default"` or a role's ref) to model files.
   * Several refs may name the same file: it is loaded once. When refs sharing a context (same
   * file, same adapters) disagree on settings, the largest `contextSize`, `threads` and
   * `sequences` win and `batching: 'isolated'` wins; `gpu: 'auto'` on any ref of a file wins.
   */
  models: Record<string, LlamaModelConfig>;
  /** Fallbacks for unset per-model settings. */
  defaults?: {
    /** Tokens per sequence. Defaults to `1024`. */
    contextSize?: number;
    /** CPU threads per context. Defaults to `1` (set it explicitly; see {@link LlamaModelConfig.threads}). */
    threads?: number;
    /** Defaults to `false` (CPU only). */
    gpu?: 'auto' | false;
    /** Parallel sequences per context. Defaults to `4`. */
    sequences?: number;
    /** Defaults to `'isolated'` (see {@link LlamaModelConfig.batching}). */
    batching?: 'isolated' | 'mixed';
    /** Tokens per decode; unset: node-llama-cpp's default. */
    batchSize?: number;
    /** Defaults to `true` (see {@link LlamaModelConfig.prefixReuse}). */
    prefixReuse?: boolean;
  };
  /**
   * Least severe llama.cpp log level passed on. Defaults to `'error'` (the tiny models' harmless
   * load warnings are `warn`).
   */
  logLevel?: `${LlamaLogLevel}`;
  /**
   * Receives llama.cpp's log lines at or above `logLevel`. Defaults to printing them on stderr
   * prefixed `[llama.cpp]`. Error lines logged while a model loads are also added to the
   * `MODEL_LOAD_FAILED` message.
   */
  onLog?: (level: `${LlamaLogLevel}`, message: string) => void;
}

/** A loaded model context (a file plus its LoRA adapters), as reported by {@link LlamaProvider.load}. */
export interface LoadedModelInfo {
  /** The refs (keys of `options.models`) that use this context: same file, same adapters. */
  refs: string[];
  /** The file's real path (symlinks resolved): the identity models are shared by. */
  path: string;
  /** Base name of `path`; also `GenerateResult.model`. */
  fileName: string;
  /** Header summary (see `readGgufInfo`). */
  info: GgufInfo;
  /** Actual context size per sequence, in tokens (after llama.cpp's rounding). */
  contextSize: number;
  threads: number;
  sequences: number;
  gpu: 'auto' | false;
  batching: 'isolated' | 'mixed';
  /** Tokens per llama.cpp decode, as the context has it. */
  batchSize: number;
  /** Whether calls reuse evaluated prompt prefixes (see {@link LlamaModelConfig.prefixReuse}). */
  prefixReuse: boolean;
  /** Where `threads` and `batchSize` came from. */
  source: { threads: SettingSource; batchSize: SettingSource };
  /** True when generation goes through the model's chat template; false: plain completion. */
  usesChatTemplate: boolean;
  /** The LoRA adapters applied in this context (real paths, scales); empty for the plain model. */
  lora: Array<{ path: string; scale: number }>;
  /**
   * Milliseconds to create this context (and load its adapters), plus the model load when this
   * context's creation loaded it (excludes `getLlama`).
   */
  loadMs: number;
}

/** Fallbacks of {@link LlamaProviderOptions.defaults}. */
export const DEFAULTS = {
  contextSize: 1024,
  threads: 1,
  gpu: false as 'auto' | false,
  sequences: 4,
  batching: 'isolated' as 'isolated' | 'mixed',
  prefixReuse: true,
};

/** Settings of one context (the file-level `gpu` is resolved when the model loads). */
export interface ResolvedSettings {
  contextSize: number;
  threads: number;
  sequences: number;
  batching: 'isolated' | 'mixed';
  exactAttention: boolean;
  /** Unset: node-llama-cpp's default. */
  batchSize?: number;
  prefixReuse: boolean;
  source: { threads: SettingSource; batchSize: SettingSource };
}
