import { describe, expect, it } from 'vitest';
import { ApiError } from '../core/api/index.ts';
import { interventionOfRequest } from './fork.ts';

describe('forkRun requests as interventions', () => {
  it('maps each field to its intervention and refuses none or several', () => {
    expect(interventionOfRequest({ runId: 'e/0', nodeId: 'solve', output: '{"expression":"1+1"}' })).toEqual({ kind: 'output', output: '{"expression":"1+1"}' });
    expect(interventionOfRequest({ runId: 'e/0', nodeId: 'solve', prompt: 'P' })).toEqual({ kind: 'prompt', prompt: 'P' });
    expect(interventionOfRequest({ runId: 'e/0', nodeId: 'solve', seed: 0 })).toEqual({ kind: 'seed', seed: 0 });
    expect(interventionOfRequest({ runId: 'e/0', nodeId: 'solve', roleModel: { role: 'solver', path: '/m/b.gguf' } })).toEqual({ kind: 'role-model', role: 'solver', model: '/m/b.gguf' });
    for (const bad of [{ runId: 'e/0', nodeId: 'solve' }, { runId: 'e/0', nodeId: 'solve', seed: 1, prompt: 'P' }]) {
      expect(() => interventionOfRequest(bad)).toThrow(ApiError);
      expect(() => interventionOfRequest(bad)).toThrow(/forkRun: give exactly one intervention: output, prompt, seed or roleModel/);
    }
  });
});
