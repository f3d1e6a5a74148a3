/**
 * Activation checkpointing for the trainer's step (TfjsTrainer.ts): a step's loss and gradient
 * taken block by block, so peak memory holds one block's activations instead of every block's.
 */
import { TrainingError } from '../../core/training/index.ts';
import type { LlamaForward } from './llamaForward.ts';
import { tf } from './tfjs.ts';

type T = tf.Tensor;

/** The model a checkpointed gradient is taken of: its forward pass, its weights and their names. */
export interface CheckpointedModel {
  forward: LlamaForward;
  /** Transformer blocks (`LlamaConfig.layers`). */
  layers: number;
  /** GGUF tensor name -> position in `names` / `params`. */
  index: ReadonlyMap<string, number>;
  /** GGUF tensor names, in `params` order. */
  names: readonly string[];
  params: readonly T[];
}

/**
 * `lossOf(logits(ids))` and its gradient with respect to every weight (in `params` order), by
 * activation checkpointing (Chen et al. 2016, "Training Deep Nets with Sublinear Memory Cost",
 * §3): a forward pass without a tape keeps only each block's input `[B·T, D]`; then the head,
 * and each block from the last to the first, runs again under a tape of its own and is
 * differentiated with the gradient flowing in from above; the embedding comes last.
 *
 * Same values, bit for bit, as one `tf.valueAndGrads` over the whole forward pass: the same
 * kernels on the same inputs, and every gradient that is a sum (a block's input, read by its
 * RMSNorm and its residual; the tied embedding, read by the lookup and the head) is summed in
 * the order one whole-model tape walks it. Peak memory holds one block's activations and
 * gradients instead of every block's (the whole-model tape kept them all until the end).
 */
export function checkpointedGrads(model: CheckpointedModel, ids: Int32Array, b: number, t: number, lossOf: (logits: T) => tf.Scalar): { value: tf.Scalar; grads: T[] } {
  const { forward: fw, layers, index, names: paramNames, params } = model;
  const at = (name: string): number => {
    const i = index.get(name);
    if (i === undefined) throw new TrainingError('INTERNAL', `internal: no weight ${name}`);
    return i;
  };
  const over = (names: string[], ws: T[]) => (name: string): T => {
    const i = names.indexOf(name);
    if (i < 0) throw new TrainingError('INTERNAL', `internal: weight ${name} read outside its checkpoint group`);
    return ws[i]!;
  };
  const grads: (T | undefined)[] = params.map(() => undefined);
  const give = (name: string, g: T) => {
    const i = at(name);
    const prev = grads[i];
    grads[i] = prev ? tf.add(prev, g) : g; // the tied embedding: head's gradient, then the lookup's
  };
  const all = (name: string): T => params[at(name)]!;
  const idsT = tf.tensor1d(ids, 'int32');
  // Forward without a tape: block inputs only.
  const xs: T[] = [tf.tidy(() => fw.embed(all, idsT))];
  for (let l = 0; l < layers; l++) xs.push(tf.tidy(() => fw.block(all, l, xs[l]!, b, t)));
  // Head: loss value, gradient to the last block's output and to the head's weights.
  const headNames = fw.headWeights();
  const { value, grads: [gx0, ...gHead] } = tf.valueAndGrads((x: T, ...hw: T[]) => lossOf(fw.head(over(headNames, hw), x)))(
    [xs[layers]!, ...headNames.map((n) => params[at(n)]!)],
  );
  headNames.forEach((n, i) => give(n, gHead[i]!));
  let gx = gx0!;
  for (let l = layers - 1; l >= 0; l--) {
    const names = fw.blockWeights(l);
    const dy = gx;
    const [gIn, ...gw] = tf.tidy(() =>
      tf.grads((x: T, ...bw: T[]) => fw.block(over(names, bw), l, x, b, t))([xs[l]!, ...names.map((n) => params[at(n)]!)], dy),
    );
    names.forEach((n, i) => give(n, gw[i]!));
    dy.dispose();
    xs[l + 1]!.dispose();
    gx = gIn!;
  }
  const [gTable] = tf.grads((table: T) => fw.embed(() => table, idsT))([params[at('token_embd.weight')]!], gx);
  give('token_embd.weight', gTable!);
  gx.dispose();
  const missing = grads.findIndex((g) => g === undefined);
  if (missing >= 0) throw new TrainingError('INTERNAL', `internal: the forward pass does not read weight ${paramNames[missing]}`);
  return { value, grads: grads as T[] };
}
