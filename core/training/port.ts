/**
 * The trainer port (docs/laptop-rl.md): real weight updates of small GGUF models on the
 * laptop. core never imports an ML library; `models/trainer` implements this with
 * TensorFlow.js (tfjs-core + wasm backend). Token ids are the model tokenizer's (node-llama-cpp's).
 */

/** One supervised sequence: loss only where `lossMask` is 1 (assistant/completion tokens, MASS's mask). */
export interface SftSequence {
  tokens: number[];
  /** Same length as `tokens`; 1 = predict this token (it is in the loss), 0 = context only. */
  lossMask: number[];
  /**
   * Same length as `tokens` when given: at a position with a list, the token ids the decoding
   * grammar allowed there (the token itself among them); that token's log-probability is taken
   * under the model's distribution renormalised over them. Null: the whole vocabulary.
   */
  allowed?: Array<readonly number[] | null>;
}

/** One sampled completion with its group-relative advantage (core/rollouts). */
export interface PolicySample {
  promptTokens: number[];
  completionTokens: number[];
  advantage: number;
  /** Per-completion-token log-probabilities under the sampling policy, when samples are reused (ratio clip). */
  oldLogprobs?: number[];
  /**
   * Per completion token, 1 = in the loss (and the KL), 0 = not: a grammar-forced token
   * (core/training/choiceMask.ts). Absent: every completion token. Same length as `completionTokens`.
   */
  completionMask?: number[];
  /**
   * Per completion token, the token ids the decoding grammar allowed at that position (the
   * sampled one among them; core/training/choiceMask.ts): its log-probability, in the objective
   * and the KL, is taken under the model's distribution renormalised over them — the
   * distribution the sampler drew from. Null: the whole vocabulary. Same length as
   * `completionTokens`.
   */
  completionAllowed?: Array<readonly number[] | null>;
}

export interface SftOptions {
  /** Adam learning rate. */
  lr: number;
  /** Clip the global gradient norm to this (0 = off). */
  maxGradNorm?: number;
}

export interface PolicyOptions extends SftOptions {
  /** Weight of the KL penalty to the frozen reference model (k3 estimator). */
  kl: number;
  /** PPO-style ratio clip ε when `oldLogprobs` are given (e.g. 0.2). */
  clip?: number;
  /** Sampling temperature the completions were drawn at (log-probs are taken at this temperature). */
  temperature?: number;
  /**
   * Entropy bonus weight β ≥ 0 (default 0): the loss gets −β times the entropy of the sampler's
   * renormalised distribution at each grammar-restricted completion token (a trainer's file
   * comment gives the reduction; Williams & Peng 1991, §5).
   */
  entropy?: number;
}

export interface StepResult {
  loss: number;
  /** Mean KL to the reference over completion tokens (policy steps). */
  kl?: number;
  /** Tokens the step trained on. */
  tokens: number;
  ms: number;
}

/** A model loaded for training. */
export interface TrainableModel {
  readonly path: string;
  readonly parameters: number;
  sftStep(batch: readonly SftSequence[], opts: SftOptions): Promise<StepResult>;
  policyStep(batch: readonly PolicySample[], opts: PolicyOptions): Promise<StepResult>;
  /** Greedy continuation of `promptTokens` (for parity checks and before/after comparisons). */
  greedy(promptTokens: readonly number[], maxTokens: number): Promise<number[]>;
  /** Next-token probabilities after each prefix position: [positions][vocab]. */
  probabilities(tokens: readonly number[]): Promise<number[][]>;
  /**
   * The text of every token id (the tokenizer's pieces, SentencePiece's `▁` as a space, a byte
   * token `<0xNN>` as that byte's character), when the model file lists them. What the
   * grammar allowed at a choice is computed from it (core/training/choiceMask.ts).
   */
  vocabulary?(): readonly string[];
  /**
   * Writes the current weights as a new GGUF (the source file with tensor payloads replaced),
   * atomically: through a temp file named `*.tmp` in the destination's folder, renamed into place
   * (core/training/recover.ts removes such temp files left by a killed process).
   */
  writeGguf(outPath: string): Promise<void>;
  /**
   * The optimiser's state (Adam: the step count and the first and second moments of every
   * parameter, in a fixed order), so a resumed train loop continues with the moments it had
   * (core/training/optimizerFile.ts stores it beside each version). Absent: a stateless trainer.
   */
  optimizerState?(): OptimizerState;
  /** Puts back a state `optimizerState` gave (same model shapes). Throws when the shapes differ. */
  restoreOptimizerState?(state: OptimizerState): void;
  dispose(): void;
}

/** An optimiser's state as plain data: its step count and its tensors' values (Adam: every m, then every v). */
export interface OptimizerState {
  step: number;
  tensors: Float32Array[];
}

/** Options of `Trainer.load`. */
export interface LoadOptions {
  /**
   * The GGUF whose weights are the frozen KL reference (same architecture and shapes); absent:
   * the loaded file's own weights. A resumed train loop loads its newest version with the file
   * it started from as the reference.
   */
  reference?: string;
}

export interface Trainer {
  /** Loads a GGUF for training. Throws a clear error naming unsupported architectures or tensor types, or a reference of other shapes. */
  load(ggufPath: string, options?: LoadOptions): Promise<TrainableModel>;
}
