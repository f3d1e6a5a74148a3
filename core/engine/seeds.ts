/** Per-run and per-call seed derivation; the function lives with the PRNG in core/random.ts. */
export { deriveSeed } from '../random.ts';
