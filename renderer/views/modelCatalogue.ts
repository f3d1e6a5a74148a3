/**
 * Small instruction-tuned GGUF models known to run on a laptop's CPU, offered with one click in
 * the Models view's empty state (downloaded by `startDownload`, like `flowlab models download`).
 *
 * Honesty notes: sizes are approximate (the quantisation named, as published); no sha256 is
 * pinned here because none could be checked from where this list was written (Hugging Face was
 * not reachable): the download reports the sha256 it computed, and the size the server announced
 * is checked. A renamed file upstream fails the download with its HTTP status; nothing half-done
 * is kept. Licences as their model cards state them.
 */
export interface CatalogueModel {
  /** Display name. */
  name: string;
  /** `hf:<owner>/<repo>/<file.gguf>` reference. */
  source: string;
  /** Approximate download size, MB. */
  approxMb: number;
  licence: string;
  /** What it runs well on. */
  fits: '8 GB' | '16 GB';
  note: string;
}

/** The catalogue, smallest first. */
export const MODEL_CATALOGUE: readonly CatalogueModel[] = [
  { name: 'Qwen2.5 0.5B Instruct (Q4_K_M)', source: 'hf:Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q4_k_m.gguf', approxMb: 490, licence: 'Apache-2.0', fits: '8 GB', note: 'fastest; fine for the learn families and short roles' },
  { name: 'Llama 3.2 1B Instruct (Q4_K_M)', source: 'hf:bartowski/Llama-3.2-1B-Instruct-GGUF/Llama-3.2-1B-Instruct-Q4_K_M.gguf', approxMb: 810, licence: 'Llama 3.2 Community License', fits: '8 GB', note: 'good chat template support' },
  { name: 'Qwen2.5 1.5B Instruct (Q4_K_M)', source: 'hf:Qwen/Qwen2.5-1.5B-Instruct-GGUF/qwen2.5-1.5b-instruct-q4_k_m.gguf', approxMb: 1120, licence: 'Apache-2.0', fits: '8 GB', note: 'a step up on GSM8K-style maths' },
  { name: 'SmolLM2 1.7B Instruct (Q4_K_M)', source: 'hf:HuggingFaceTB/SmolLM2-1.7B-Instruct-GGUF/smollm2-1.7b-instruct-q4_k_m.gguf', approxMb: 1060, licence: 'Apache-2.0', fits: '8 GB', note: 'small and open' },
  { name: 'Phi-3.5 mini Instruct (Q4_K_M)', source: 'hf:bartowski/Phi-3.5-mini-instruct-GGUF/Phi-3.5-mini-instruct-Q4_K_M.gguf', approxMb: 2390, licence: 'MIT', fits: '16 GB', note: '3.8B: stronger reasoning, slower on CPU' },
];
