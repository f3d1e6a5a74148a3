import { describe, expect, it } from 'vitest';
import { isRandomWeights, preferredModel } from './modelChoice.ts';

const m = (fileName: string, name?: string) => ({ path: `/models/${fileName}`, fileName, info: { architecture: 'llama', fileType: 'F32', hasChatTemplate: false, ...(name && { name }) } });

describe('the model a form starts with (the MASS form chose the first file: a random-weights model)', () => {
  const folder = [m('llama-2-tiny-random.gguf'), m('stories260K.gguf')];

  it('skips a random-weights model', () => {
    expect(isRandomWeights(folder[0]!)).toBe(true);
    expect(isRandomWeights(m('x.gguf', 'Tiny Random Llama'))).toBe(true);
    expect(preferredModel(folder)).toBe('/models/stories260K.gguf');
    expect(preferredModel([m('a-random.gguf')])).toBe('/models/a-random.gguf');
    expect(preferredModel([])).toBe('');
  });

  it('takes the model the newest matching experiment ran with', () => {
    const exps = [{ kind: 'run' as const, models: ['llama-2-tiny-random.gguf'] }, { kind: 'mass' as const, models: ['stories260K.gguf'] }];
    expect(preferredModel(folder, exps)).toBe('/models/llama-2-tiny-random.gguf');
    expect(preferredModel(folder, exps, (e) => e.kind === 'mass')).toBe('/models/stories260K.gguf');
  });
});
