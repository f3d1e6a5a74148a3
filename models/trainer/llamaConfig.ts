/**
 * The LLaMA hyper-parameters and tensor table the trainer implements, read from a GGUF's
 * metadata (llama.cpp's `llama` architecture keys, `src/llama-model.cpp`) and checked against
 * the tensor table, so a file the forward pass would compute wrongly is refused up front.
 */
import { GgufError, type GgufFile, type GgufTensorInfo } from '../gguf/readGguf.ts';
import { assertTrainableGguf } from '../gguf/readTensors.ts';

export interface LlamaConfig {
  /** `llama.block_count`. */
  layers: number;
  /** `llama.embedding_length` (D). */
  dim: number;
  /** `llama.feed_forward_length` (F). */
  ffn: number;
  /** `llama.attention.head_count` (H). */
  heads: number;
  /** `llama.attention.head_count_kv`, default `heads`. */
  kvHeads: number;
  /** `dim / heads`. */
  headDim: number;
  /** Vocabulary size (rows of `token_embd.weight`). */
  vocab: number;
  /** `llama.attention.layer_norm_rms_epsilon`, default 1e-5. */
  eps: number;
  /** `llama.rope.freq_base`, default 10000. */
  ropeBase: number;
  /** `llama.rope.dimension_count`, default `headDim`: lanes rotated per head. */
  ropeDims: number;
  /** 1 / `llama.rope.scale_linear` (or linear `rope.scaling.factor`), default 1. */
  ropeFreqScale: number;
  /** `llama.context_length` (positions the model was trained for). */
  contextLength: number;
  /** `tokenizer.ggml.eos_token_id`, when present. */
  eosToken?: number;
  /** True when the file has no `output.weight` and the head reuses `token_embd.weight`. */
  tiedOutput: boolean;
}

/** The per-layer weight tensors, by the name part after `blk.<i>.`. */
export const LAYER_TENSORS = ['attn_norm', 'attn_q', 'attn_k', 'attn_v', 'attn_output', 'ffn_norm', 'ffn_gate', 'ffn_up', 'ffn_down'] as const;
export type LayerTensor = (typeof LAYER_TENSORS)[number];

/**
 * Expected GGUF `ne` of every tensor the forward pass uses (`[in, out]` for matrices).
 * `output.weight` is listed only when the file has it.
 */
export function expectedTensors(c: LlamaConfig): Map<string, number[]> {
  const kv = c.kvHeads * c.headDim;
  const m = new Map<string, number[]>();
  m.set('token_embd.weight', [c.dim, c.vocab]);
  for (let i = 0; i < c.layers; i++) {
    const shapes: Record<LayerTensor, number[]> = {
      attn_norm: [c.dim],
      attn_q: [c.dim, c.heads * c.headDim],
      attn_k: [c.dim, kv],
      attn_v: [c.dim, kv],
      attn_output: [c.heads * c.headDim, c.dim],
      ffn_norm: [c.dim],
      ffn_gate: [c.dim, c.ffn],
      ffn_up: [c.dim, c.ffn],
      ffn_down: [c.ffn, c.dim],
    };
    for (const name of LAYER_TENSORS) m.set(`blk.${i}.${name}.weight`, shapes[name]);
  }
  m.set('output_norm.weight', [c.dim]);
  if (!c.tiedOutput) m.set('output.weight', [c.dim, c.vocab]);
  return m;
}

/**
 * Reads and checks the model configuration.
 *
 * @throws GgufError `GGUF_UNSUPPORTED_ARCHITECTURE` (not `llama`), `GGUF_UNSUPPORTED_TENSOR_TYPE`
 *   (quantised tensors), `GGUF_UNSUPPORTED_MODEL` (missing/unknown metadata the forward pass
 *   needs, rope scaling other than linear, mixture of experts, a tensor the forward pass does
 *   not use such as `rope_freqs.weight` or biases, a missing tensor, or one of another shape);
 *   each message names the file and the key or tensor.
 */
export function llamaConfigFromGguf(file: GgufFile): LlamaConfig {
  assertTrainableGguf(file);
  const md = file.metadata;
  const refuse = (what: string, tensor?: string) =>
    new GgufError('GGUF_UNSUPPORTED_MODEL', `Cannot train ${file.path}: ${what}`, file.path, tensor);
  const int = (key: string, fallback?: number): number => {
    const v = md[key];
    if (v === undefined) {
      if (fallback !== undefined) return fallback;
      throw refuse(`metadata "${key}" is missing`);
    }
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw refuse(`metadata "${key}" = ${String(v)} is not a count`);
    return v;
  };
  const float = (key: string, fallback: number): number => {
    const v = md[key];
    if (v === undefined) return fallback;
    if (typeof v !== 'number' || !Number.isFinite(v)) throw refuse(`metadata "${key}" = ${String(v)} is not a number`);
    return v;
  };

  const layers = int('llama.block_count');
  const dim = int('llama.embedding_length');
  const ffn = int('llama.feed_forward_length');
  const heads = int('llama.attention.head_count');
  const kvHeads = int('llama.attention.head_count_kv', heads);
  if (heads === 0 || dim % heads !== 0) throw refuse(`embedding_length ${dim} is not a multiple of head_count ${heads}`);
  if (kvHeads === 0 || heads % kvHeads !== 0) throw refuse(`head_count ${heads} is not a multiple of head_count_kv ${kvHeads}`);
  const headDim = dim / heads;
  for (const key of ['llama.attention.key_length', 'llama.attention.value_length']) {
    const v = md[key];
    if (v !== undefined && v !== headDim) throw refuse(`metadata "${key}" = ${String(v)} differs from embedding_length / head_count = ${headDim}`);
  }
  if (int('llama.expert_count', 0) > 0) throw refuse(`mixture of experts (llama.expert_count = ${String(md['llama.expert_count'])}) is not supported`);
  const ropeDims = int('llama.rope.dimension_count', headDim);
  if (ropeDims > headDim || ropeDims % 2 !== 0) throw refuse(`llama.rope.dimension_count ${ropeDims} must be even and at most the head size ${headDim}`);
  let ropeFreqScale = 1;
  const scalingType = md['llama.rope.scaling.type'];
  if (scalingType !== undefined && scalingType !== 'none') {
    if (scalingType !== 'linear') throw refuse(`rope scaling "${String(scalingType)}" is not supported (none and linear are)`);
    const factor = float('llama.rope.scaling.factor', 1);
    if (factor > 0) ropeFreqScale = 1 / factor;
  } else if (md['llama.rope.scale_linear'] !== undefined) {
    const factor = float('llama.rope.scale_linear', 1);
    if (factor > 0) ropeFreqScale = 1 / factor;
  }

  const byName = new Map<string, GgufTensorInfo>(file.tensors.map((t) => [t.name, t]));
  const embd = byName.get('token_embd.weight');
  if (!embd) throw refuse('tensor "token_embd.weight" is missing', 'token_embd.weight');
  const vocab = embd.dims[1] ?? 0;
  const eos = md['tokenizer.ggml.eos_token_id'];

  const config: LlamaConfig = {
    layers,
    dim,
    ffn,
    heads,
    kvHeads,
    headDim,
    vocab,
    eps: float('llama.attention.layer_norm_rms_epsilon', 1e-5),
    ropeBase: float('llama.rope.freq_base', 10000),
    ropeDims,
    ropeFreqScale,
    contextLength: int('llama.context_length', 2048),
    tiedOutput: !byName.has('output.weight'),
  };
  if (typeof eos === 'number') config.eosToken = eos;

  const expected = expectedTensors(config);
  for (const t of file.tensors) {
    const want = expected.get(t.name);
    if (!want) throw refuse(`tensor "${t.name}" is not part of the LLaMA forward pass the trainer implements`, t.name);
    if (want.length !== t.dims.length || want.some((d, i) => d !== t.dims[i])) {
      throw refuse(`tensor "${t.name}" has ne [${t.dims.join(', ')}], expected [${want.join(', ')}] from the metadata`, t.name);
    }
  }
  for (const name of expected.keys()) {
    if (!byName.has(name)) throw refuse(`tensor "${name}" is missing`, name);
  }
  return config;
}
