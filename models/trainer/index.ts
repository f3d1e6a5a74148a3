/**
 * The trainer port's TensorFlow.js implementation (docs/laptop-rl.md): `new TfjsTrainer().load(gguf)`.
 * Importing this module loads tfjs-core and the wasm backend module (the backend itself starts on
 * the first `load`); core imports only the port (core/training).
 */
export { TfjsTrainer, TfjsTrainableModel, type TfjsStepResult } from './TfjsTrainer.ts';
export { llamaConfigFromGguf, type LlamaConfig } from './llamaConfig.ts';
export { initTfjs } from './tfjs.ts';
