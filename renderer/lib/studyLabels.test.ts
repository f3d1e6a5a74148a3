import { describe, expect, it } from 'vitest';
import { studyModelLabel } from './studyLabels.ts';

describe("the Studies view's model name (its heading read \"Model model\")", () => {
  it('names the file, with the id when it differs from the file name', () => {
    expect(studyModelLabel({ models: [{ id: 'model', model: '/shared/models/stories260K.gguf' }] }, 'model')).toBe('stories260K.gguf (id model)');
    expect(studyModelLabel({ models: [{ id: 'stories260K', model: '$FLOWLAB_SHARED/models/stories260K.gguf' }] }, 'stories260K')).toBe('stories260K.gguf');
    expect(studyModelLabel({}, 'model')).toBe('model');
  });
});
