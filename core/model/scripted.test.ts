import { describe, expect, it } from 'vitest';
import { ScriptedProvider } from './scripted.ts';
import { asRoleName } from '../ids.ts';

describe('ScriptedProvider', () => {
  it('returns the script text, counts words as tokens, and names itself simulated', async () => {
    const p = new ScriptedProvider((r) => `echo ${r.prompt}`);
    const out = await p.generate({
      role: asRoleName('solver'), model: 'm', prompt: 'two words', params: { temperature: 0, maxTokens: 8 },
      seed: 7, key: { taskKey: 't', nodeId: 'n', attempt: 1, callIndex: 0 },
    });
    expect(out.text).toBe('echo two words');
    expect(out.tokens).toEqual({ prompt: 2, completion: 3 });
    expect(out.seed).toBe(7);
    expect(p.name).toContain('simulated');
    expect(p.calls).toBe(1);
  });
});
