/**
 * LoRA adapters in llama.cpp's GGUF layout, made from a base model's tensor table: for tests
 * (a zero adapter must leave the output unchanged, a random one must change it) and as a
 * starting point for adapters trained in JavaScript.
 *
 * The layout llama.cpp loads (`llama_adapter_lora_init`, src/llama-adapter.cpp; verified against
 * node-llama-cpp 3.21.1 by the tests in this folder):
 * - metadata `general.type = "adapter"`, `adapter.type = "lora"`, `adapter.lora.alpha` (f32),
 *   `general.architecture` equal to the base model's (else "model arch and LoRA arch mismatch");
 * - for each adapted weight `W` of the base (`ne = [in, out]`), two tensors named
 *   `<W>.lora_a` with `ne = [in, r]` and `<W>.lora_b` with `ne = [r, out]`; every `<W>` must
 *   exist in the base with exactly those `in`/`out` (else "does not exist in base model" /
 *   "has incorrect shape (hint: maybe wrong base model?)").
 * - At run time `W x` becomes `W x + s · (alpha / r) · B (A x)`, `s` being the scale the adapter
 *   is loaded with (node-llama-cpp's `createContext({lora: {adapters: [{filePath, scale}]}})`).
 */
import { mulberry32 } from '../../core/random.ts';
import { checkGgufFile } from '../llama/ggufInfo.ts';
import type { GgufDocument, GgufTensor } from './writeGguf.ts';

/** What an adapter needs to know about its base model. */
export interface LoraBase {
  /** `general.architecture` of the base, e.g. `llama`. */
  architecture: string;
  /** The base's tensors with their GGUF `ne` dimensions. */
  tensors: ReadonlyArray<{ name: string; dims: readonly number[] }>;
}

export interface LoraAdapterOptions {
  /** LoRA rank r (>= 1). */
  rank: number;
  /**
   * Which weights to adapt, by the part of the tensor name after `blk.<i>.` and before
   * `.weight`: `attn_q`, `attn_k`, `attn_v`, `attn_output`, `ffn_gate`, `ffn_up`, `ffn_down`.
   * Defaults to `['attn_q', 'attn_v']` (the usual PEFT choice).
   */
  targets?: readonly string[];
  /**
   * `zero`: A random, B = 0 (a fresh LoRA: the adapter changes nothing until trained);
   * `random`: A and B both random (the output changes). Defaults to `zero`.
   */
  init?: 'zero' | 'random';
  /** Seed of the random values (same seed, same bytes). Defaults to 0. */
  seed?: number;
  /** `adapter.lora.alpha`; the update is scaled by alpha / rank. Defaults to `rank` (scale 1). */
  alpha?: number;
  /**
   * Standard deviation of the random entries. Defaults: A ~ N(0, 1/sqrt(in)), B ~ N(0, 1/sqrt(r)),
   * so `B A x` has about the size of `x`.
   */
  std?: { a?: number; b?: number };
  /** `general.name` of the adapter. */
  name?: string;
}

/** Reads a base model's architecture and tensor table from its GGUF file (no model load). */
export async function readLoraBase(baseFile: string): Promise<LoraBase> {
  const { info, raw } = await checkGgufFile(baseFile);
  return {
    architecture: info.architecture,
    tensors: (raw.fullTensorInfo ?? raw.tensorInfo ?? []).map((t) => ({ name: t.name, dims: t.dimensions.map(Number) })),
  };
}

/**
 * Builds a LoRA adapter document for `base` (write it with `writeGguf`).
 *
 * @throws RangeError when the rank is not a positive integer or no base tensor matches `targets`.
 */
export function makeLoraAdapter(base: LoraBase, options: LoraAdapterOptions): GgufDocument {
  const { rank } = options;
  if (!Number.isInteger(rank) || rank < 1) throw new RangeError(`LoRA rank must be a positive integer, got ${rank}`);
  const targets = options.targets ?? ['attn_q', 'attn_v'];
  const init = options.init ?? 'zero';
  const alpha = options.alpha ?? rank;
  const rand = gaussian(options.seed ?? 0);
  const tensors: GgufTensor[] = [];
  for (const t of base.tensors) {
    const m = /^blk\.\d+\.(.+)\.weight$/.exec(t.name);
    if (!m || !targets.includes(m[1]!) || t.dims.length !== 2) continue;
    const [inDim, outDim] = t.dims as [number, number];
    const stdA = options.std?.a ?? 1 / Math.sqrt(inDim);
    const stdB = options.std?.b ?? 1 / Math.sqrt(rank);
    const a = new Float32Array(inDim * rank).map(() => rand() * stdA);
    const b = init === 'zero' ? new Float32Array(rank * outDim) : new Float32Array(rank * outDim).map(() => rand() * stdB);
    tensors.push({ name: `${t.name}.lora_a`, dims: [inDim, rank], data: a });
    tensors.push({ name: `${t.name}.lora_b`, dims: [rank, outDim], data: b });
  }
  if (tensors.length === 0) {
    throw new RangeError(`no base tensor matches the LoRA targets ${targets.join(', ')} (expected names like blk.0.${targets[0]}.weight)`);
  }
  return {
    metadata: {
      'general.architecture': base.architecture,
      'general.type': 'adapter',
      ...(options.name ? { 'general.name': options.name } : {}),
      'adapter.type': 'lora',
      'adapter.lora.alpha': { type: 'f32', value: alpha },
    },
    tensors,
  };
}

/** Seeded standard normal samples (mulberry32 from `core/stats/paired.ts`, then Box-Muller). */
function gaussian(seed: number): () => number {
  const uniform = mulberry32(seed);
  return () => {
    const u = 1 - uniform();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * uniform());
  };
}
