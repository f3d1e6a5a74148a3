/**
 * The trainer port (core/training/port.ts) over TensorFlow.js (tfjs-core + wasm backend): a
 * LLaMA GGUF loaded as F32 tensors, trained with Adam, written back into a copy of the file.
 *
 * Losses (documented here because the port leaves the reductions open):
 * - SFT: cross-entropy of each token whose `lossMask` is 1 given the tokens before it (the
 *   first token is never predicted), averaged over all such tokens of the batch.
 * - Policy step (GRPO-style, one update per call): for each sample, the completion tokens'
 *   per-token objective is `A · log π(y_t | ·)` (REINFORCE), or, when `oldLogprobs` are given,
 *   PPO's clipped surrogate `min(ρ_t A, clip(ρ_t, 1−ε, 1+ε) A)` with
 *   `ρ_t = exp(log π(y_t) − old_t)`; minus `kl · k3_t`, where `k3_t = exp(d) − d − 1`,
 *   `d = log π_ref(y_t) − log π(y_t)` (Schulman's k3 estimator of KL(π‖π_ref), ≥ 0, 0 iff
 *   equal), and `π_ref` is the frozen copy of the weights taken at load. The objective is
 *   averaged over the completion tokens of each sample (those its `completionMask` keeps, when
 *   given: a grammar's forced tokens are left out), then over samples (GRPO's
 *   "mean over tokens per sample then over samples"; samples with no completion tokens are
 *   skipped); the loss is its negative. Log-probabilities of policy and reference are taken at
 *   `opts.temperature` (logits / τ; default 1). `StepResult.kl` is the mean k3 over all
 *   completion tokens, measured at the weights before the update (so 0 on the first step).
 * - Every step: global gradient-norm clip to `maxGradNorm` (default 1; 0 = off), then one Adam
 *   update (β1 0.9, β2 0.999, ε 1e-8, bias-corrected; no weight decay) at `lr`. SFT and policy
 *   steps share one Adam state.
 * - Grammar-restricted positions (`PolicySample.completionAllowed`, `SftSequence.allowed`): the
 *   log-probability of the token there is taken under the softmax over the allowed ids only
 *   (the logits of the others get −1e9 before the log-softmax), in the objective and the KL:
 *   the distribution a grammar-constrained sampler drew from, so the gradient moves the allowed
 *   choices against each other, not against tokens the grammar never lets through.
 * - Entropy bonus (`opts.entropy` = β, default 0; policy steps only): at each kept completion
 *   position that is grammar-restricted, the per-token loss gets `−β · H_t`, where
 *   `H_t = −Σ_{a allowed} p(a) log p(a)` is the entropy of the renormalised (sampler's)
 *   distribution there, at `opts.temperature`; averaged with the same weights as the objective.
 *   It keeps a choice among few allowed tokens from collapsing before every class was explored
 *   (the entropy regulariser of Williams & Peng 1991, §5; Mnih et al. 2016, A3C, §4).
 */
import type {
  LoadOptions,
  OptimizerState,
  PolicyOptions,
  PolicySample,
  SftOptions,
  SftSequence,
  StepResult,
  TrainableModel,
  Trainer,
} from '../../core/training/index.ts';
import { TrainingError } from '../../core/training/index.ts';
import { GgufError, readGguf, type GgufFile } from '../gguf/readGguf.ts';
import { readGgufTensors } from '../gguf/readTensors.ts';
import { rewriteGguf, type RewriteStats } from '../gguf/rewriteGguf.ts';
import { llamaConfigFromGguf, type LlamaConfig } from './llamaConfig.ts';
import { LlamaForward, isTransposedMatrix } from './llamaForward.ts';
import { logSoftmax } from './ops.ts';
import { checkpointedGrads } from './checkpointedGrads.ts';
import { checkLength, checkTokens, policyBatch, sftBatch, type PolicyBatch } from './batches.ts';
import { initTfjs, tf } from './tfjs.ts';

type T = tf.Tensor;

const ADAM = { beta1: 0.9, beta2: 0.999, eps: 1e-8 };
const DEFAULT_MAX_GRAD_NORM = 1;
const DEFAULT_CLIP = 0.2;
/**
 * Batch tokens (`B · T`) from which a step's gradient is taken block by block
 * (`checkpointedGrads`). The whole-model tape keeps every activation and gradient of the step
 * until it ends: ~250 KB per token for stories260K (548 MB at 32 × 66 tokens, measured), so from
 * 256 tokens on (~64 MB) checkpointing keeps the peak to one block's share, for ~10% more CPU time
 * per step (one more forward pass of the blocks). Both give the same bits.
 */
const CHECKPOINT_MIN_TOKENS = 256;

/** A step's result plus the gradient norm before clipping. */
export interface TfjsStepResult extends StepResult {
  /** Global L2 norm of the gradient before clipping. */
  gradNorm: number;
}

/** The tfjs implementation of {@link Trainer}. */
export class TfjsTrainer implements Trainer {
  /**
   * Loads a LLaMA GGUF (F32/F16/BF16 tensors) for training. Starts the wasm backend on first use.
   *
   * @throws GgufError naming the file and the problem: not found, not GGUF, truncated,
   *   unsupported version, architecture other than `llama`, quantised tensor types (named), or a
   *   tensor/setting the forward pass does not implement.
   */
  async load(ggufPath: string, options: LoadOptions = {}): Promise<TfjsTrainableModel> {
    return TfjsTrainableModel.load(ggufPath, options);
  }
}

/** One tensor of the model: its GGUF name and dims, whether it is held transposed. */
interface ParamSpec {
  name: string;
  dims: number[];
  transposed: boolean;
}

/**
 * A LLaMA model held as tfjs tensors. Implements {@link TrainableModel}; see the file comment
 * for the losses.
 */
export class TfjsTrainableModel implements TrainableModel {
  readonly parameters: number;
  /** Timings of the last {@link writeGguf}. */
  lastWrite?: RewriteStats;
  private readonly specs: ParamSpec[];
  private params: T[];
  private readonly reference: T[];
  private adamM: T[];
  private adamV: T[];
  private adamStep = 0;
  private readonly forward: LlamaForward;
  /** GGUF tensor name -> position in `specs` / `params`. */
  private readonly index: Map<string, number>;
  private disposed = false;

  private constructor(
    readonly path: string,
    readonly config: LlamaConfig,
    readonly gguf: GgufFile,
    specs: ParamSpec[],
    params: T[],
    reference?: T[],
  ) {
    this.specs = specs;
    this.params = params;
    this.reference = reference ?? params.map((p) => tf.keep(tf.clone(p)));
    this.adamM = params.map((p) => tf.keep(tf.zerosLike(p)));
    this.adamV = params.map((p) => tf.keep(tf.zerosLike(p)));
    this.parameters = specs.reduce((a, s) => a + s.dims.reduce((x, y) => x * y, 1), 0);
    this.forward = new LlamaForward(config);
    this.index = new Map(specs.map((s, i) => [s.name, i]));
  }

  /**
   * See {@link TfjsTrainer.load}. With `options.reference`, the frozen KL reference is that
   * file's weights (a resumed train loop: its newest version, referenced to where it started).
   * @throws GgufError `GGUF_CORRUPT` when the reference's tensors differ in name or shape.
   */
  static async load(ggufPath: string, options: LoadOptions = {}): Promise<TfjsTrainableModel> {
    const file = await readGguf(ggufPath);
    const config = llamaConfigFromGguf(file);
    await initTfjs();
    const { specs, params } = await tensorsOf(file);
    let reference: T[] | undefined;
    if (options.reference !== undefined) {
      const ref = await tensorsOf(await readGguf(options.reference));
      const same = ref.specs.length === specs.length && ref.specs.every((s, i) => s.name === specs[i]!.name && s.dims.join() === specs[i]!.dims.join());
      if (!same) {
        for (const t of [...params, ...ref.params]) t.dispose();
        throw new GgufError('GGUF_CORRUPT', `${options.reference}: the KL reference's tensors differ from those of ${ggufPath} (another model?)`, options.reference);
      }
      reference = ref.params.map((p) => tf.keep(p));
    }
    return new TfjsTrainableModel(ggufPath, config, file, specs, params, reference);
  }

  /** The text of every token id (see TrainableModel.vocabulary), from the file's `tokenizer.ggml.tokens`; empty when it has none. */
  vocabulary(): readonly string[] {
    const tokens = this.gguf.metadata['tokenizer.ggml.tokens'];
    if (!Array.isArray(tokens)) return [];
    return tokens.map((p) => {
      const piece = String(p);
      const byte = /^<0x([0-9A-Fa-f]{2})>$/.exec(piece);
      return byte ? String.fromCharCode(parseInt(byte[1]!, 16)) : piece.replace(/\u2581/g, ' ');
    });
  }

  // ---- inference --------------------------------------------------------------------------------

  /**
   * Greedy continuation (argmax at temperature 1 logits, like llama.cpp at temperature 0),
   * recomputing the whole sequence per token (no KV cache; fine for the tiny models).
   * Stops after `maxTokens` tokens, after the end-of-sequence token (which is included), or when
   * the context (`llama.context_length`) is full.
   */
  async greedy(promptTokens: readonly number[], maxTokens: number): Promise<number[]> {
    this.assertOpen();
    if (promptTokens.length === 0) throw new RangeError('greedy: the prompt needs at least one token (e.g. BOS)');
    checkTokens(this.config, promptTokens, 'greedy prompt');
    const seq = [...promptTokens];
    const out: number[] = [];
    for (let i = 0; i < maxTokens; i++) {
      if (seq.length >= this.config.contextLength) break; // the next token would not fit
      const next = tf.tidy(() => {
        const logits = this.forward.logits(this.lookup(this.params), Int32Array.from(seq), 1, seq.length, true);
        return tf.argMax(logits, -1).dataSync()[0]!;
      });
      out.push(next);
      seq.push(next);
      if (next === this.config.eosToken) break;
    }
    return out;
  }

  /**
   * Next-token distributions: row `i` is P(token `i+1` | tokens `0..i`) over the vocabulary
   * (softmax at temperature 1). `tokens.length` rows.
   */
  async probabilities(tokens: readonly number[]): Promise<number[][]> {
    this.assertOpen();
    if (tokens.length === 0) return [];
    checkTokens(this.config, tokens, 'probabilities');
    checkLength(this.config, tokens.length);
    const flat = read(() => tf.softmax(this.forward.logits(this.lookup(this.params), Int32Array.from(tokens), 1, tokens.length)));
    const v = this.config.vocab;
    const rows: number[][] = [];
    for (let i = 0; i < tokens.length; i++) rows.push(Array.from(flat.subarray(i * v, (i + 1) * v)));
    return rows;
  }

  /**
   * Per-token log-probabilities of `completionTokens` after `promptTokens` (at `temperature`),
   * under the current weights, or the frozen reference with `reference: true`. Useful as
   * `oldLogprobs` and for before/after comparisons.
   */
  async logprobs(promptTokens: readonly number[], completionTokens: readonly number[], temperature = 1, reference = false): Promise<number[]> {
    this.assertOpen();
    const batch = policyBatch([{ promptTokens: [...promptTokens], completionTokens: [...completionTokens], advantage: 0 }], this.config);
    if (batch.samples === 0) return [];
    const lp = read(() => this.tokenLogprobs(reference ? this.reference : this.params, batch, temperature));
    const out: number[] = [];
    for (let j = 0; j < batch.t; j++) if (batch.weight[j]! > 0) out.push(lp[j]!);
    return out;
  }

  // ---- training ---------------------------------------------------------------------------------

  /** One SFT step (see the file comment). `tokens` = loss tokens. */
  async sftStep(batch: readonly SftSequence[], opts: SftOptions): Promise<TfjsStepResult> {
    this.assertOpen();
    const started = performance.now();
    checkLr(opts.lr);
    const { b, t, ids, targets, weight, count, restrict } = sftBatch(batch, this.config);
    const { loss, gradNorm } = this.update(opts.lr, opts.maxGradNorm, ids, b, t, (logits) => {
      const lp = pick(logSoftmax(restrict ? tf.add(logits, restrict()) : logits), targets, this.config.vocab);
      return { loss: tf.neg(tf.sum(tf.mul(lp, tf.tensor1d(weight)))) as tf.Scalar };
    });
    return { loss, tokens: count, ms: performance.now() - started, gradNorm };
  }

  /** One policy-gradient step (see the file comment). `tokens` = completion tokens. */
  async policyStep(batch: readonly PolicySample[], opts: PolicyOptions): Promise<TfjsStepResult> {
    this.assertOpen();
    const started = performance.now();
    checkLr(opts.lr);
    if (!(opts.kl >= 0)) throw new RangeError(`policyStep: kl must be >= 0, got ${opts.kl}`);
    const temperature = opts.temperature ?? 1;
    if (!(temperature > 0)) throw new RangeError(`policyStep: temperature must be > 0, got ${temperature}`);
    const eps = opts.clip ?? DEFAULT_CLIP;
    const beta = opts.entropy ?? 0;
    if (!(beta >= 0)) throw new RangeError(`policyStep: entropy must be >= 0, got ${opts.entropy}`);
    const pb = policyBatch(batch, this.config);
    if (pb.samples === 0) return { loss: 0, kl: 0, tokens: 0, ms: performance.now() - started, gradNorm: 0 };

    // Reference log-probabilities: a forward pass of the frozen weights, outside the gradient.
    const refLp = read(() => this.tokenLogprobs(this.reference, pb, temperature));

    let klValue = 0;
    const { loss, gradNorm } = this.update(opts.lr, opts.maxGradNorm, pb.ids, pb.b, pb.t, (logits) => {
      const { lp, entropy } = this.logprobsAndEntropy(logits, pb, temperature); // [B*T] each
      const w = tf.tensor1d(pb.weight);
      const adv = tf.tensor1d(pb.advantage);
      let surrogate = tf.mul(adv, lp);
      if (pb.hasOld.some((x) => x > 0)) {
        const ratio = tf.exp(tf.sub(lp, tf.tensor1d(pb.old)));
        const clipped = tf.minimum(tf.mul(ratio, adv), tf.mul(tf.clipByValue(ratio, 1 - eps, 1 + eps), adv));
        const hasOld = tf.tensor1d(pb.hasOld);
        surrogate = tf.add(tf.mul(hasOld, clipped), tf.mul(tf.sub(1, hasOld), surrogate));
      }
      const d = tf.sub(tf.tensor1d(refLp), lp);
      const k3 = tf.sub(tf.sub(tf.exp(d), d), 1);
      let perToken = tf.sub(tf.mul(k3, opts.kl), surrogate);
      if (beta > 0) perToken = tf.sub(perToken, tf.mul(tf.mul(entropy, tf.tensor1d(pb.restricted)), beta));
      const kl = tf.div(tf.sum(tf.mul(k3, tf.tensor1d(pb.isCompletion))), pb.tokens);
      return { loss: tf.sum(tf.mul(perToken, w)) as tf.Scalar, extra: kl as tf.Scalar, onExtra: (x: number) => (klValue = x) };
    });
    return { loss, kl: klValue, tokens: pb.tokens, ms: performance.now() - started, gradNorm };
  }

  /**
   * Computes the loss of the logits of `ids` (`B·T` tokens) and its gradient with respect to every
   * weight (block by block for large batches, checkpointedGrads.ts), clips the global gradient norm, applies one Adam step, and
   * returns the loss (and any extra scalar) read back.
   */
  private update(
    lr: number,
    maxGradNorm: number | undefined,
    ids: Int32Array,
    b: number,
    t: number,
    lossFn: (logits: T) => { loss: tf.Scalar; extra?: tf.Scalar; onExtra?: (x: number) => void },
  ): { loss: number; gradNorm: number } {
    const maxNorm = maxGradNorm ?? DEFAULT_MAX_GRAD_NORM;
    let extraOut: { extra?: tf.Scalar; onExtra?: (x: number) => void } = {};
    const step = this.adamStep + 1;
    const result = tf.tidy(() => {
      const f = (logits: T): tf.Scalar => {
        const r = lossFn(logits);
        if (r.extra) extraOut = { extra: tf.keep(r.extra), ...(r.onExtra ? { onExtra: r.onExtra } : {}) };
        return r.loss;
      };
      const { value, grads } = b * t >= CHECKPOINT_MIN_TOKENS
        ? checkpointedGrads({ forward: this.forward, layers: this.config.layers, index: this.index, names: this.specs.map((x) => x.name), params: this.params }, ids, b, t, f)
        : tf.valueAndGrads((...ws: T[]) => f(this.forward.logits(this.lookup(ws), ids, b, t)))(this.params);
      const sq = tf.addN(grads.map((g) => tf.sum(tf.square(g))));
      const norm = tf.sqrt(sq);
      const scale = maxNorm > 0 ? tf.minimum(1, tf.div(maxNorm, tf.add(norm, 1e-6))) : tf.scalar(1);
      const bc1 = 1 - ADAM.beta1 ** step;
      const bc2 = 1 - ADAM.beta2 ** step;
      const next: T[] = [];
      const nextM: T[] = [];
      const nextV: T[] = [];
      grads.forEach((g0, i) => {
        const g = tf.mul(g0, scale);
        const m = tf.add(tf.mul(this.adamM[i]!, ADAM.beta1), tf.mul(g, 1 - ADAM.beta1));
        const v = tf.add(tf.mul(this.adamV[i]!, ADAM.beta2), tf.mul(tf.square(g), 1 - ADAM.beta2));
        const upd = tf.div(tf.mul(m, lr / bc1), tf.add(tf.sqrt(tf.div(v, bc2)), ADAM.eps));
        next.push(tf.keep(tf.sub(this.params[i]!, upd)));
        nextM.push(tf.keep(m));
        nextV.push(tf.keep(v));
      });
      return { value: tf.keep(value), norm: tf.keep(norm), next, nextM, nextV };
    });
    const loss = result.value.dataSync()[0]!;
    const gradNorm = result.norm.dataSync()[0]!;
    const { extra, onExtra } = extraOut;
    if (extra) {
      onExtra?.(extra.dataSync()[0]!);
      extra.dispose();
    }
    result.value.dispose();
    result.norm.dispose();
    if (!Number.isFinite(loss) || !Number.isFinite(gradNorm)) {
      // Do not poison the weights: drop the update.
      for (const t of [...result.next, ...result.nextM, ...result.nextV]) t.dispose();
      throw new TrainingError('NON_FINITE_STEP', `training step produced a non-finite loss (${loss}) or gradient norm (${gradNorm}); weights left unchanged`);
    }
    for (const t of [...this.params, ...this.adamM, ...this.adamV]) t.dispose();
    this.params = result.next;
    this.adamM = result.nextM;
    this.adamV = result.nextV;
    this.adamStep = step;
    return { loss, gradNorm };
  }

  /** `log π(target)` at every position of a policy batch, `[B*T]`, at `temperature`, outside any gradient tape. */
  private tokenLogprobs(weights: T[], pb: PolicyBatch, temperature: number): T {
    return this.logprobsOf(this.forward.logits(this.lookup(weights), pb.ids, pb.b, pb.t, false, true), pb, temperature);
  }

  /** `log π(target)` at every position of a policy batch from its logits `[B*T, V]`, at `temperature`. */
  private logprobsOf(logits: T, pb: PolicyBatch, temperature: number): T {
    if (temperature !== 1) logits = tf.div(logits, temperature);
    if (pb.restrict) logits = tf.add(logits, pb.restrict());
    return pick(logSoftmax(logits), pb.targets, this.config.vocab);
  }

  /**
   * `log π(target)` and the entropy `−Σ_a π(a) log π(a)` of the (restricted, renormalised)
   * next-token distribution at every position of a policy batch, from its logits `[B*T, V]` at
   * `temperature`: two `[B*T]` tensors. Ids the grammar forbids have π = 0 and add nothing.
   */
  private logprobsAndEntropy(logits: T, pb: PolicyBatch, temperature: number): { lp: T; entropy: T } {
    if (temperature !== 1) logits = tf.div(logits, temperature);
    if (pb.restrict) logits = tf.add(logits, pb.restrict());
    const ls = logSoftmax(logits);
    return { lp: pick(ls, pb.targets, this.config.vocab), entropy: tf.neg(tf.sum(tf.mul(tf.exp(ls), ls), 1)) };
  }

  // ---- write-back -------------------------------------------------------------------------------

  /**
   * Current weights in GGUF element order (`ne[0]` fastest), by tensor name. F16/BF16 tensors of
   * the source are returned as the F32 values held in memory.
   */
  exportWeights(): Map<string, Float32Array> {
    this.assertOpen();
    const out = new Map<string, Float32Array>();
    this.specs.forEach((s, i) => {
      const p = this.params[i]!;
      out.set(s.name, s.transposed ? read(() => tf.transpose(p)) : Float32Array.from(p.dataSync() as Float32Array));
    });
    return out;
  }

  /**
   * Writes the current weights as a new GGUF: a copy of the source file (`path`) with every
   * tensor's payload replaced (F16/BF16 tensors rounded back to their type), atomically
   * (temp file + rename). `outPath` may be the source file itself.
   */
  async writeGguf(outPath: string): Promise<void> {
    this.lastWrite = await rewriteGguf(this.path, outPath, this.exportWeights());
  }

  /** Frees every tensor of the model (weights, reference, Adam state, constants). Safe to call twice. */
  /** Adam's step count and moments (every m, then every v, in parameter order), copied out. */
  optimizerState(): OptimizerState {
    return { step: this.adamStep, tensors: [...this.adamM, ...this.adamV].map((t) => Float32Array.from(t.dataSync() as Float32Array)) };
  }

  /**
   * Puts back a state {@link optimizerState} gave: a resumed train loop continues with the moments
   * it had instead of zeros. @throws TrainingError `INTERNAL` when the tensors do not match the parameters.
   */
  restoreOptimizerState(state: OptimizerState): void {
    const n = this.params.length;
    if (state.tensors.length !== 2 * n || state.tensors.some((t, i) => t.length !== this.params[i % n]!.size)) {
      throw new TrainingError('INTERNAL', `${this.path}: the optimiser state does not fit this model (${state.tensors.length} tensors for ${n} parameters)`);
    }
    const next = state.tensors.map((t, i) => tf.keep(tf.tensor(t, this.params[i % n]!.shape, 'float32')));
    for (const t of [...this.adamM, ...this.adamV]) t.dispose();
    this.adamM = next.slice(0, n);
    this.adamV = next.slice(n);
    this.adamStep = state.step;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const t of [...this.params, ...this.reference, ...this.adamM, ...this.adamV]) t.dispose();
    this.params = [];
    this.adamM = [];
    this.adamV = [];
    this.forward.dispose();
  }

  // ---- helpers ----------------------------------------------------------------------------------

  private lookup(weights: T[]): (name: string) => T {
    return (name) => {
      const i = this.index.get(name);
      if (i === undefined) throw new TrainingError('INTERNAL', `internal: no weight ${name}`);
      return weights[i]!;
    };
  }

  private assertOpen(): void {
    if (this.disposed) throw new TrainingError('DISPOSED', `model ${this.path} has been disposed`);
  }
}

/**
 * Runs `f` in a tidy scope and reads its result back as a fresh `Float32Array`. (Returning the
 * typed array from `tf.tidy` itself is slow: tidy walks a returned typed array element by element
 * looking for tensors — ~1 ms per 10k floats.)
 */
function read(f: () => T): Float32Array {
  const t = tf.tidy(f);
  try {
    return Float32Array.from(t.dataSync() as Float32Array);
  } finally {
    t.dispose();
  }
}

/** `logp [N, V]` at `targets [N]` -> `[N]` (one-hot product; wasm has no gather gradient). */
function pick(logp: T, targets: Int32Array, vocab: number): T {
  return tf.sum(tf.mul(logp, tf.oneHot(tf.tensor1d(targets, 'int32'), vocab)), -1);
}

function checkLr(lr: number): void {
  if (!(lr > 0) || !Number.isFinite(lr)) throw new RangeError(`learning rate must be a positive number, got ${lr}`);
}

/** A GGUF's tensors as tfjs parameters (matrices transposed where the forward pass wants them). */
async function tensorsOf(file: GgufFile): Promise<{ specs: ParamSpec[]; params: T[] }> {
  const data = await readGgufTensors(file);
  const specs: ParamSpec[] = [];
  const params: T[] = [];
  for (const t of file.tensors) {
    const values = data.get(t.name)!;
    const transposed = isTransposedMatrix(t.name, t.dims);
    specs.push({ name: t.name, dims: t.dims, transposed });
    params.push(
      tf.tidy(() => {
        if (t.dims.length === 1) return tf.tensor1d(values);
        // ne = [ne0, ne1] is row-major [ne1][ne0].
        const m = tf.tensor2d(values, [t.dims[1]!, t.dims[0]!]);
        return transposed ? tf.transpose(m) : m;
      }),
    );
  }
  return { specs, params };
}
