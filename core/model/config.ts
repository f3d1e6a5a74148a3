/**
 * How the models of an experiment are chosen (the `ModelConfig` stored with every experiment),
 * the input both faces (CLI flags, lab API request) map into the one resolver (models/resolve.ts),
 * the provider-factory port, and the typed errors of resolution.
 */
import { FlowlabError } from '../errors.ts';
import type { ModelProvider } from './provider.ts';

/** One LoRA adapter on top of a model file: an absolute GGUF path and its scale (default 1). */
export interface LoraAdapterRef {
  path: string;
  scale?: number;
}

/** How the models of a run were chosen; stored with the experiment so `resume` rebuilds the same provider. */
export interface ModelConfig {
  /** Model reference -> absolute GGUF path, or an endpoint reference (`openai:...`, core/model/endpoint.ts). */
  models: Record<string, string>;
  /** Role -> model reference it uses. */
  roleModels: Record<string, string>;
  threads?: number;
  contextSize?: number;
  gpu: 'auto' | false;
  /** Per model reference: a fingerprint of the file when the experiment started (models/resolve.ts fingerprintModel). */
  fingerprints?: Record<string, string>;
  /** Concurrent sequences per model (rollout groups use G). Default: the provider's (4). */
  sequences?: number;
  /**
   * `isolated` (default, the deterministic scheduler; rollouts and train-loop use it too): each
   * decode holds one sequence, bit-identical to running each call alone (see models/llama);
   * `mixed`: concurrent sequences share decode batches as timing has them (the bench-only
   * timing-ordered baseline, FLOWLAB_BENCH_SCHEDULER=timing; recorded as not exactly repeatable).
   */
  batching?: 'mixed' | 'isolated';
  /**
   * Per model reference: LoRA adapters applied on top of its file (absolute paths; scale
   * defaults to 1). A role with adapters gets a reference of its own, `role:<name>`, on the same
   * base file: the base model is loaded once, each adapted reference gets its own context.
   */
  loras?: Record<string, LoraAdapterRef[]>;
  /** Per adapter (absolute path): its fingerprint when the experiment started. */
  loraFingerprints?: Record<string, string>;
  /** Exact F32 attention (flash attention off, F32 KV cache): on-policy sampling for train-loop. */
  exactAttention?: boolean;
  /** Tokens per decode (`--batch`). Default: `flowlab tune`'s best for the file on this machine, else the provider's. */
  batchSize?: number;
  /** `false` (`--no-prefix-reuse`): every call starts from an empty sequence. Default: reuse evaluated prompt prefixes. */
  prefixReuse?: boolean;
}

/**
 * What a face asks for, before resolution (models/resolve.ts `resolveModels`). The CLI maps its
 * flags here (`--model`, `--role-model`, `--role-lora`, `--role-version`, `--threads`,
 * `--context-size`, `--gpu`), the lab API its `StartRunRequest` fields.
 */
export interface ModelRequest {
  /** The file of roles on the `default` reference (`--model`, `models.default`). */
  default?: string;
  /** Role -> its own model file (`--role-model`, `models.roles`). */
  roles?: Record<string, string>;
  /** Role -> LoRA adapters on top of the role's model (`--role-lora`, `roleLora`). */
  roleLora?: Record<string, LoraAdapterRef[]>;
  /** Role -> weight version id whose GGUF file the role uses (`--role-version`, `roleVersions`). */
  roleVersions?: Record<string, string>;
  threads?: number;
  contextSize?: number;
  gpu?: 'auto' | false;
  /** Tokens per decode (`--batch`). */
  batchSize?: number;
  /** `false`: no prefix reuse (`--no-prefix-reuse`). */
  prefixReuse?: boolean;
  /** Relative paths (model files, the workflow's `models.<ref>.path`) resolve against this. Default: the working directory. */
  baseDir?: string;
}

/** The request field an error is about (each face names it its own way: `--role-model`, `models.roles.<role>`). */
export type ModelRequestField = 'default' | 'roles' | 'roleLora' | 'roleVersions' | 'workflow';

export type ModelConfigErrorCode =
  /** A role the workflow does not have. */
  | 'UNKNOWN_ROLE'
  /** A role with no model file. */
  | 'NO_MODEL'
  /** A role given both a model file and a weight version. */
  | 'CONFLICT'
  /** A weight version id the store does not have. */
  | 'UNKNOWN_VERSION'
  /** A weight version whose GGUF file is gone. */
  | 'VERSION_FILE_MISSING'
  /** A model given as an endpoint reference (`openai:...`) that does not parse (core/model/endpoint.ts). */
  | 'BAD_ENDPOINT';

/**
 * A model request that cannot be resolved. `field` and `role` locate it in the request; `roles`
 * lists the workflow's roles (UNKNOWN_ROLE), `versionId` / `path` the version (UNKNOWN_VERSION,
 * VERSION_FILE_MISSING). The message is neutral; each face writes its own from the fields.
 */
export class ModelConfigError extends FlowlabError<ModelConfigErrorCode> {
  override readonly name = 'ModelConfigError';
  constructor(
    code: ModelConfigErrorCode,
    readonly field: ModelRequestField,
    message: string,
    readonly detail: { role?: string; roles?: string[]; versionId?: string; path?: string } = {},
  ) {
    super(code, message, { field });
  }
}

/** Builds (does not load) the provider for a model configuration; `load?()` then loads every file. */
export type ProviderFactory = (config: ModelConfig) => Promise<ModelProvider>;

/**
 * The model port of the experiment service: builds providers, and (for files on disk) takes and
 * checks fingerprints. models/factory.ts implements it over node-llama-cpp and the file system.
 */
export interface ModelPort {
  create: ProviderFactory;
  /** The config with fingerprints of every model file and adapter (stored when an experiment is created). Default: unchanged. */
  fingerprint?(config: ModelConfig): ModelConfig;
  /**
   * Resume: throws (an Error naming the file) unless every file of `current` is present and the
   * same as when `recorded` was taken. Default: no check.
   */
  verify?(recorded: ModelConfig, current: ModelConfig): void;
  /**
   * The code version and native library versions this port runs with, recorded in every
   * reproducibility fingerprint (core/repro). Default: unknown.
   */
  environment?(): { code: Record<string, string>; native: Record<string, string> };
}
