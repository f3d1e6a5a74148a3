/**
 * TensorFlow.js set-up for the trainer: tfjs-core with the WebAssembly backend, initialised once
 * per process (wasm ~0.5 s per 8×128 training step against ~7 s for the pure-JS `cpu` backend,
 * timed on stories260K on the 2-core reference machine; bench/training.ts times the step; in Node
 * the wasm backend has SIMD but no threads).
 *
 * In Node the `.wasm` binaries are read from the package's own `dist` folder (a file path given
 * to `setWasmPaths`), so nothing is fetched.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { TrainingError } from '../../core/training/index.ts';
import { registerTrainerGradients } from './gradients.ts';
import { outsideAsar } from '../sandbox/index.ts';

export { tf };

let ready: Promise<void> | undefined;

/**
 * Selects the wasm backend and registers the trainer's gradients (once; later calls return the
 * same promise).
 *
 * @throws Error when the wasm backend cannot start (the message says where it looked for the
 *   `.wasm` files).
 */
export function initTfjs(): Promise<void> {
  ready ??= (async () => {
    registerTrainerGradients();
    const require = createRequire(import.meta.url);
    // In a packaged app the package resolves inside app.asar; its files are unpacked beside it (forge.config.ts).
    const dir = outsideAsar(path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm')));
    setWasmPaths(dir + path.sep);
    // The Emscripten module installs process-wide `uncaughtException` / `unhandledRejection`
    // handlers that rethrow, which turns any later crash of the process (even unrelated to tfjs)
    // into a dump of the module's minified source. They add nothing over Node's defaults
    // (crash on both), so the ones added while the backend starts are removed again.
    const before = new Map<string, Set<unknown>>([
      ['uncaughtException', new Set<unknown>(process.listeners('uncaughtException'))],
      ['unhandledRejection', new Set<unknown>(process.listeners('unhandledRejection'))],
    ]);
    let ok = false;
    try {
      ok = await tf.setBackend('wasm');
      if (ok) await tf.ready();
    } catch (err) {
      throw new TrainingError('BACKEND_FAILED', `TensorFlow.js wasm backend failed to start (wasm files in ${dir}): ${(err as Error).message}`, {}, { cause: err });
    } finally {
      for (const l of process.listeners('uncaughtException')) {
        if (!before.get('uncaughtException')!.has(l)) process.removeListener('uncaughtException', l);
      }
      for (const l of process.listeners('unhandledRejection')) {
        if (!before.get('unhandledRejection')!.has(l)) process.removeListener('unhandledRejection', l);
      }
    }
    if (!ok) throw new TrainingError('BACKEND_FAILED', `TensorFlow.js wasm backend failed to start (wasm files in ${dir})`);
  })();
  ready.catch(() => {
    ready = undefined;
  });
  return ready;
}
