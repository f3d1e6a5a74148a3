/**
 * Gradient functions for the kernels the trainer differentiates through.
 *
 * tfjs-core's published bundles (`tf-core.node.js`, the one Node loads, and the others) register
 * no gradients at all: the umbrella `@tensorflow/tfjs` package imports
 * `dist/register_all_gradients.js`, an ES module with extension-less imports that Node cannot
 * load, and the umbrella package is not a dependency. So the gradients of the kernels on the
 * trainer's tape are registered here, following tfjs-core's own definitions
 * (`tfjs-core/src/gradients/*_grad.ts`, Apache-2.0). A kernel that already has a gradient (the
 * umbrella package loaded too) is left alone. Matmuls, the embedding gather and log-softmax have
 * custom gradients (ops.ts / tf.logSoftmax) and need nothing here.
 */
import * as tf from '@tensorflow/tfjs-core';

type T = tf.Tensor;
type Attrs = Record<string, unknown>;

/** Sums `g` over the axes that broadcasting expanded from `shape`, and reshapes it to `shape`. */
function unbroadcast(g: T, shape: readonly number[]): T {
  if (g.shape.length === shape.length && g.shape.every((d, i) => d === shape[i])) return g;
  const offset = g.rank - shape.length;
  const axes: number[] = [];
  for (let i = 0; i < g.rank; i++) {
    const si = i - offset;
    if (si < 0 || (shape[si] === 1 && g.shape[i] !== 1)) axes.push(i);
  }
  return tf.reshape(axes.length ? tf.sum(g, axes) : g, shape as number[]);
}

/** The reduced axes of a Sum/Mean, normalised (null/undefined = all). */
function reductionAxes(axis: unknown, rank: number): number[] {
  if (axis === null || axis === undefined) return Array.from({ length: rank }, (_, i) => i);
  const list = Array.isArray(axis) ? (axis as number[]) : [axis as number];
  return list.map((a) => (a < 0 ? a + rank : a));
}

/** `dy` of a reduction broadcast back to the input's shape. */
function expandReduced(dy: T, xShape: readonly number[], axis: unknown): T {
  const shape = [...xShape];
  for (const a of reductionAxes(axis, xShape.length)) shape[a] = 1;
  return tf.mul(tf.reshape(dy, shape), tf.ones(xShape as number[], 'float32'));
}

const configs: tf.GradConfig[] = [
  {
    kernelName: 'Add',
    inputsToSave: ['a', 'b'],
    gradFunc: (dy, saved) => {
      const [a, b] = saved as [T, T];
      return { a: () => unbroadcast(dy as T, a.shape), b: () => unbroadcast(dy as T, b.shape) };
    },
  },
  {
    kernelName: 'Sub',
    inputsToSave: ['a', 'b'],
    gradFunc: (dy, saved) => {
      const [a, b] = saved as [T, T];
      return { a: () => unbroadcast(dy as T, a.shape), b: () => unbroadcast(tf.neg(dy as T), b.shape) };
    },
  },
  {
    kernelName: 'Multiply',
    inputsToSave: ['a', 'b'],
    gradFunc: (dy, saved) => {
      const [a, b] = saved as [T, T];
      return {
        a: () => unbroadcast(tf.mul(dy as T, tf.cast(b, 'float32')), a.shape),
        b: () => unbroadcast(tf.mul(dy as T, tf.cast(a, 'float32')), b.shape),
      };
    },
  },
  {
    kernelName: 'RealDiv',
    inputsToSave: ['a', 'b'],
    gradFunc: (dy, saved) => {
      const [a, b] = saved as [T, T];
      return {
        a: () => unbroadcast(tf.div(dy as T, b), a.shape),
        b: () => unbroadcast(tf.neg(tf.div(tf.mul(dy as T, a), tf.square(b))), b.shape),
      };
    },
  },
  {
    kernelName: 'Minimum',
    inputsToSave: ['a', 'b'],
    gradFunc: (dy, saved) => {
      const [a, b] = saved as [T, T];
      return {
        a: () => unbroadcast(tf.mul(dy as T, tf.cast(tf.lessEqual(a, b), 'float32')), a.shape),
        b: () => unbroadcast(tf.mul(dy as T, tf.cast(tf.greater(a, b), 'float32')), b.shape),
      };
    },
  },
  { kernelName: 'Neg', gradFunc: (dy) => ({ x: () => tf.neg(dy as T) }) },
  {
    kernelName: 'Sum',
    inputsToSave: ['x'],
    gradFunc: (dy, saved, attrs) => {
      const [x] = saved as [T];
      return { x: () => expandReduced(dy as T, x.shape, (attrs as Attrs).axis) };
    },
  },
  {
    kernelName: 'Mean',
    inputsToSave: ['x'],
    gradFunc: (dy, saved, attrs) => {
      const [x] = saved as [T];
      const axes = reductionAxes((attrs as Attrs).axis, x.rank);
      const size = axes.reduce((n, a) => n * x.shape[a]!, 1);
      return { x: () => tf.div(expandReduced(dy as T, x.shape, (attrs as Attrs).axis), size) };
    },
  },
  {
    kernelName: 'Square',
    inputsToSave: ['x'],
    gradFunc: (dy, saved) => {
      const [x] = saved as [T];
      return { x: () => tf.mul(dy as T, tf.mul(tf.cast(x, 'float32'), 2)) };
    },
  },
  {
    kernelName: 'Sqrt',
    inputsToSave: ['x'],
    gradFunc: (dy, saved) => {
      const [x] = saved as [T];
      return { x: () => tf.div(dy as T, tf.mul(tf.sqrt(tf.cast(x, 'float32')), 2)) };
    },
  },
  {
    kernelName: 'Rsqrt',
    inputsToSave: ['x'],
    gradFunc: (dy, saved) => {
      const [x] = saved as [T];
      return { x: () => tf.neg(tf.div(dy as T, tf.mul(tf.pow(x, 1.5), 2))) };
    },
  },
  {
    kernelName: 'Sigmoid',
    outputsToSave: [true],
    gradFunc: (dy, saved) => {
      const [y] = saved as [T];
      return { x: () => tf.mul(dy as T, tf.mul(y, tf.sub(1, y))) };
    },
  },
  {
    kernelName: 'Exp',
    outputsToSave: [true],
    gradFunc: (dy, saved) => {
      const [y] = saved as [T];
      return { x: () => tf.mul(dy as T, y) };
    },
  },
  {
    kernelName: 'Log',
    inputsToSave: ['x'],
    gradFunc: (dy, saved) => {
      const [x] = saved as [T];
      return { x: () => tf.div(dy as T, tf.cast(x, 'float32')) };
    },
  },
  {
    kernelName: 'Reshape',
    inputsToSave: ['x'],
    gradFunc: (dy, saved) => {
      const [x] = saved as [T];
      return { x: () => tf.reshape(dy as T, x.shape) };
    },
  },
  {
    kernelName: 'Transpose',
    gradFunc: (dy, _saved, attrs) => {
      const perm = (attrs as Attrs).perm as number[];
      const inverse = new Array<number>(perm.length);
      perm.forEach((p, i) => (inverse[p] = i));
      return { x: () => tf.transpose(dy as T, inverse) };
    },
  },
  {
    kernelName: 'Softmax',
    outputsToSave: [true],
    gradFunc: (dy, saved, attrs) => {
      const [y] = saved as [T];
      const dim = (attrs as Attrs).dim as number;
      const dyTimesY = tf.mul(dy as T, y);
      return { logits: () => tf.sub(dyTimesY, tf.mul(tf.sum(dyTimesY, [dim], true), y)) };
    },
  },
  {
    kernelName: 'ClipByValue',
    inputsToSave: ['x'],
    gradFunc: (dy, saved, attrs) => {
      const [x] = saved as [T];
      const { clipValueMin, clipValueMax } = attrs as { clipValueMin: number; clipValueMax: number };
      const inside = tf.logicalAnd(tf.greaterEqual(x, clipValueMin), tf.lessEqual(x, clipValueMax));
      return { x: () => tf.where(inside, dy as T, tf.zerosLike(dy as T)) };
    },
  },
  { kernelName: 'Cast', gradFunc: (dy) => ({ x: () => tf.clone(dy as T) }) },
  { kernelName: 'Identity', gradFunc: (dy) => ({ x: () => tf.cast(dy as T, 'float32') }) },
];

let registered = false;

/** Registers the gradients above (once; kernels that already have one are skipped). */
export function registerTrainerGradients(): void {
  if (registered) return;
  registered = true;
  for (const c of configs) {
    if (!tf.getGradient(c.kernelName)) tf.registerGradient(c);
  }
}
