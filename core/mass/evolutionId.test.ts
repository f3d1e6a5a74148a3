import { describe, expect, it } from 'vitest';
import { defaultEvolutionId, modelMismatch } from './evolutionId.ts';

describe('the default evolution id and the model check of a resume', () => {
  it('differs between models (it was evo-<dataset>-<seed>-<rule> for every model)', () => {
    const a = defaultEvolutionId('learn-tool', 0, 'baseline', '/models/stories260K.gguf');
    const b = defaultEvolutionId('learn-tool', 0, 'baseline', '/models/Qwen2.5 0.5B-Instruct.Q4_K_M.gguf');
    expect(a).toBe('evo-learn-tool-0-baseline-stories260k');
    expect(b).toBe('evo-learn-tool-0-baseline-qwen2.5-0.5b-instruct.q4_k_m');
    expect(defaultEvolutionId('learn-word', 3, 'direct', 'openai:http://127.0.0.1:8080/v1#llama-3')).toBe('evo-learn-word-3-direct-llama-3');
  });

  it('names the stored file, the given one and --id when another file would resume an evolution', () => {
    const stored = { models: { default: '/m/a.gguf' } };
    expect(modelMismatch('evo-x', stored, { models: { default: '/m/a.gguf' } })).toBeUndefined();
    expect(modelMismatch('evo-x', stored, { models: { default: '/m/b.gguf' } })).toBe(
      'evolution evo-x ran with /m/a.gguf as model "default", not /m/b.gguf: give that file to resume it, or start a new evolution with --id <new-id>',
    );
  });
});
