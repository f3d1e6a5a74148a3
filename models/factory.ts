/**
 * The node-llama-cpp provider factory: the `ModelPort` (core/model/config.ts) the CLI and the lab
 * hand to the experiment service. node-llama-cpp is imported lazily, so commands that never
 * generate (replay, show) never load the binding.
 */
import { isEndpointRef, loadedProvider, parseEndpointRef, type ModelConfig, type ModelPort, type ModelProvider, type SettingSource } from '../core/model/index.ts';

import type { LlamaModelConfig } from './llama/config.ts';
import { tunedSettings } from './tuned.ts';
import { reproEnvironment } from './environment.ts';
import { MAX_SEQUENCES } from '../core/limits.ts';
import { defaultThreads, maxThreads, verifyModelFiles, withFingerprints } from './resolve.ts';

/**
 * Builds (does not load) the provider of a config: references that name endpoints
 * (`openai:...`, core/model/endpoint.ts) go to the OpenAI-compatible provider (models/openai,
 * with the stored probe verdicts), the rest to node-llama-cpp: one model entry per reference,
 * LoRA adapters per reference. Threads and batch size: the config's (a flag or request field;
 * source `flag`), else `flowlab tune`'s best for the file on this machine (models/tuned.ts;
 * `tuned`), else `defaultThreads(file)` and the provider's batch size (`default`); threads never
 * more than the machine's cores (a config recorded elsewhere, e.g. resumed, may name more). Every
 * call records which (`AppliedSettings.source`).
 */
export async function llamaProvider(cfg: ModelConfig): Promise<ModelProvider> {
  const endpointRefs = Object.keys(cfg.models).filter((ref) => isEndpointRef(cfg.models[ref]!));
  if (endpointRefs.length > 0) return withEndpoints(cfg, endpointRefs);
  const { LlamaProvider } = await import('./llama/index.ts');
  const models: Record<string, LlamaModelConfig> = {};
  for (const [ref, file] of Object.entries(cfg.models)) {
    const tuned = cfg.threads === undefined || cfg.batchSize === undefined ? tunedSettings(file) : undefined;
    const threads = cfg.threads ?? tuned?.threads ?? defaultThreads(file);
    const batchSize = cfg.batchSize ?? tuned?.batchSize;
    const source = (given: number | undefined, fromTune: number | undefined): SettingSource => (given !== undefined ? 'flag' : fromTune !== undefined ? 'tuned' : 'default');
    models[ref] = {
      path: file, threads: Math.min(threads, maxThreads()), contextSize: cfg.contextSize, gpu: cfg.gpu,
      sequences: cfg.sequences === undefined ? undefined : Math.min(cfg.sequences, MAX_SEQUENCES), batching: cfg.batching, exactAttention: cfg.exactAttention,
      settingsSource: { threads: source(cfg.threads, tuned?.threads), batchSize: source(cfg.batchSize, tuned?.batchSize) },
    };
    if (batchSize !== undefined) models[ref].batchSize = batchSize;
    if (cfg.prefixReuse === false) models[ref].prefixReuse = false;
    const lora = cfg.loras?.[ref];
    if (lora?.length) models[ref].lora = lora;
  }
  return new LlamaProvider({ models });
}

/** The provider of a config with endpoint references `endpointRefs`: OpenAI-compatible alone, or routed beside node-llama-cpp for the file references. */
async function withEndpoints(cfg: ModelConfig, endpointRefs: string[]): Promise<ModelProvider> {
  const { OpenAiProvider, RoutedProvider, readVerdicts } = await import('./openai/index.ts');
  const endpoints = new OpenAiProvider({ models: Object.fromEntries(endpointRefs.map((ref) => [ref, parseEndpointRef(cfg.models[ref]!)])), verdicts: readVerdicts() });
  const fileRefs = Object.keys(cfg.models).filter((ref) => !endpointRefs.includes(ref));
  if (fileRefs.length === 0) return endpoints;
  const files = await llamaProvider({ ...cfg, models: Object.fromEntries(fileRefs.map((ref) => [ref, cfg.models[ref]!])) });
  return new RoutedProvider(files, new Set(fileRefs), endpoints, new Set(endpointRefs));
}

/** The node-llama-cpp provider of `cfg`, every model loaded (core/model/provider.ts loadedProvider). */
export const loadedLlamaProvider = (cfg: ModelConfig): Promise<ModelProvider> => loadedProvider(llamaProvider, cfg);

/**
 * A model port over files on disk: `create` builds providers with `create` (node-llama-cpp by
 * default), `fingerprint` and `verify` read the files (models/resolve.ts).
 */
export function fileModelPort(create: (cfg: ModelConfig) => Promise<ModelProvider> = llamaProvider): ModelPort {
  return { create, fingerprint: withFingerprints, verify: verifyModelFiles, environment: reproEnvironment };
}

/** The TensorFlow.js trainer (imported lazily: loading TensorFlow.js takes a while). */
export async function loadTrainer(): Promise<import('../core/training/index.ts').Trainer> {
  const { TfjsTrainer } = await import('./trainer/index.ts');
  return new TfjsTrainer();
}
