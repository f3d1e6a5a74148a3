import { describe, expect, it } from 'vitest';
import { ModelError } from './errors.ts';
import { loadedProvider, type ModelProvider } from './provider.ts';

/** A provider that records its load and dispose calls; `load` fails with `loadError` when given. */
function recording(log: string[], loadError?: Error): ModelProvider {
  return {
    name: 'rec',
    generate: async () => {
      throw new Error('not used');
    },
    modelsLoaded: () => 0,
    load: async () => {
      log.push('load');
      if (loadError) throw loadError;
    },
    dispose: async () => {
      log.push('dispose');
      throw new Error('dispose fails too');
    },
  };
}

describe('loadedProvider', () => {
  it('builds the provider for the config and loads it before handing it over', async () => {
    const log: string[] = [];
    const provider = recording(log);
    const made = await loadedProvider(async (cfg: { file: string }) => (log.push(`create ${cfg.file}`), provider), { file: 'a.gguf' });
    expect([made === provider, log]).toEqual([true, ['create a.gguf', 'load']]);
  });

  it('disposes the provider and rethrows the load error (a failing dispose does not hide it)', async () => {
    const log: string[] = [];
    const bad = new ModelError('MODEL_INVALID', 'a.gguf is not a GGUF file', 'a.gguf');
    await expect(loadedProvider(async () => recording(log, bad), {})).rejects.toBe(bad);
    expect(log).toEqual(['load', 'dispose']);
  });
});
