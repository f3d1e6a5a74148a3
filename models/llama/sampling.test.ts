import { describe, expect, it } from 'vitest';
import type { GenerateRequest } from '../../core/model/index.ts';
import { asRoleName } from '../../core/ids.ts';
import { ON_POLICY, SAMPLING_DEFAULTS, samplerOptions } from './sampling.ts';

const request = (params: Partial<GenerateRequest['params']>, seed: number): GenerateRequest => ({
  role: asRoleName('solver'), model: 'm', prompt: 'p', params: { temperature: 0, maxTokens: 8, ...params }, seed,
  key: { taskKey: 't', nodeId: 'n', attempt: 1, callIndex: 0 },
});

describe('samplerOptions', () => {
  it('takes the request\'s sampling, each cut-off defaulting to the path\'s defaults', () => {
    expect(samplerOptions(request({}, 7), SAMPLING_DEFAULTS)).toEqual({ temperature: 0, topK: 40, topP: 0.95, minP: 0, seed: 7 });
    expect(samplerOptions(request({}, 7), ON_POLICY)).toEqual({ temperature: 0, topK: 0, topP: 1, minP: 0, seed: 7 });
    expect(samplerOptions(request({ temperature: 0.7, topK: 5, topP: 0.5, minP: 0.1 }, 1), ON_POLICY)).toEqual({ temperature: 0.7, topK: 5, topP: 0.5, minP: 0.1, seed: 1 });
  });

  it('maps the seed into [0, 2^32)', () => {
    expect(samplerOptions(request({}, -1), ON_POLICY).seed).toBe(2 ** 32 - 1);
    expect(samplerOptions(request({}, 2 ** 32 + 3), ON_POLICY).seed).toBe(3);
  });
});
