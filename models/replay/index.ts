/** Replay of recorded model calls (no model, no node-llama-cpp). */
export { ReplayProvider, type RecordedCall, type ReplayOptions } from './ReplayProvider.ts';
