/**
 * The node-llama-cpp provider factory: the `ModelPort` (core/model/config.ts) the CLI and the lab
 * hand to the experiment service. node-llama-cpp is imported lazily, so commands that never
 * generate (replay, show) never load the binding.
 */
import { loadedProvider, type ModelConfig, type ModelPort, type ModelProvider } from '../core/model/index.ts';
import { MAX_SEQUENCES } from '../core/limits.ts';
import { defaultThreads, maxThreads, verifyModelFiles, withFingerprints } from './resolve.ts';

/**
 * Builds (does not load) the node-llama-cpp provider of a config: one model entry per reference,
 * threads `defaultThreads(file)` unless the config gives them, never more than the machine's
 * cores (a config recorded elsewhere, e.g. resumed, may name more), LoRA adapters per reference.
 */
export async function llamaProvider(cfg: ModelConfig): Promise<ModelProvider> {
  const { LlamaProvider } = await import('./llama/index.ts');
  const models: Record<string, { path: string; threads: number; contextSize?: number; gpu: 'auto' | false; sequences?: number; batching?: 'mixed' | 'isolated'; exactAttention?: boolean; lora?: Array<{ path: string; scale?: number }> }> = {};
  for (const [ref, file] of Object.entries(cfg.models)) {
    models[ref] = { path: file, threads: Math.min(cfg.threads ?? defaultThreads(file), maxThreads()), contextSize: cfg.contextSize, gpu: cfg.gpu, sequences: cfg.sequences === undefined ? undefined : Math.min(cfg.sequences, MAX_SEQUENCES), batching: cfg.batching, exactAttention: cfg.exactAttention };
    const lora = cfg.loras?.[ref];
    if (lora?.length) models[ref].lora = lora;
  }
  return new LlamaProvider({ models });
}

/** The node-llama-cpp provider of `cfg`, every model loaded (core/model/provider.ts loadedProvider). */
export const loadedLlamaProvider = (cfg: ModelConfig): Promise<ModelProvider> => loadedProvider(llamaProvider, cfg);

/**
 * A model port over files on disk: `create` builds providers with `create` (node-llama-cpp by
 * default), `fingerprint` and `verify` read the files (models/resolve.ts).
 */
export function fileModelPort(create: (cfg: ModelConfig) => Promise<ModelProvider> = llamaProvider): ModelPort {
  return { create, fingerprint: withFingerprints, verify: verifyModelFiles };
}

/** The TensorFlow.js trainer (imported lazily: loading TensorFlow.js takes a while). */
export async function loadTrainer(): Promise<import('../core/training/index.ts').Trainer> {
  const { TfjsTrainer } = await import('./trainer/index.ts');
  return new TfjsTrainer();
}
