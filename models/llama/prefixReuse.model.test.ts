/**
 * Prefix reuse (LlamaModelConfig.prefixReuse): a call that shares a prompt prefix with an earlier
 * call's evaluated tokens evaluates only the rest, and its text is the text it gets without reuse
 * (greedy and seeded sampling), so stored runs replay the same either way.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/fixtures.ts';
import { writeGgufWithMetadata } from './ggufFixture.ts';
import { LlamaProvider } from './LlamaProvider.ts';
import { CHATML } from './templates.fixture.ts';
import { haveModels, req, STORIES } from './testing.ts';

const system = 'You turn a plan into one arithmetic expression that computes the answer. Write only the expression.';
const question = 'Question: A robe takes 2 bolts of blue fiber and half that much white fiber. How many bolts in total does it take?';
/** A node's first attempt, its second (a reviewer's feedback appended), another task, the first again. */
const prompts = [`${question}\nPlan: add them`, `${question}\nPlan: add them\nReviewer: use numbers`, 'Question: Tom has 3 apples and buys 2 more. How many now?\nPlan: add', `${question}\nPlan: add them`];

describe.skipIf(!haveModels)('prefix reuse on a template-carrying tiny model', () => {
  const file = path.join(tempDir('prefix-reuse'), 'stories-chatml.gguf');
  const providers: LlamaProvider[] = [];
  beforeAll(() => writeGgufWithMetadata(STORIES, file, { 'tokenizer.chat_template': CHATML }));
  afterAll(() => Promise.all(providers.map((p) => p.dispose())));

  const runAll = async (prefixReuse: boolean, temperature: number) => {
    const p = new LlamaProvider({ models: { default: { path: file, threads: 1, prefixReuse } } });
    providers.push(p);
    const out = [];
    for (const [i, prompt] of prompts.entries()) out.push(await p.generate(req({ system, prompt, seed: 7 + i, params: { temperature, maxTokens: 24 } })));
    return out;
  };

  it('the same texts with reuse on and off (greedy and temperature 0.8, fixed seeds); fewer tokens evaluated with it', async () => {
    for (const temperature of [0, 0.8]) {
      const on = await runAll(true, temperature);
      const off = await runAll(false, temperature);
      expect(on.map((r) => r.text)).toEqual(off.map((r) => r.text));
      expect(off.map((r) => r.promptTokensEvaluated)).toEqual(off.map((r) => r.tokens.prompt));
      expect(on[0]!.promptTokensEvaluated).toBe(on[0]!.tokens.prompt); // nothing evaluated before
      // The second attempt re-evaluates only the feedback line and what follows it.
      expect(on[1]!.promptTokensEvaluated).toBeLessThan(0.25 * on[1]!.tokens.prompt);
      expect(on[3]!.promptTokensEvaluated).toBeLessThan(0.6 * on[3]!.tokens.prompt);
      expect(on.every((r) => r.applied?.prefixReuse === true) && off.every((r) => r.applied?.prefixReuse === false)).toBe(true);
    }
  });

  it('a group of concurrent calls with one prompt chains on the sequence holding it: the same texts, the prompt evaluated once', async () => {
    const group = async (prefixReuse: boolean) => {
      const p = new LlamaProvider({ models: { default: { path: file, threads: 1, prefixReuse, sequences: 4 } } });
      providers.push(p);
      return Promise.all([0, 1, 2, 3].map((i) => p.generate(req({ system, prompt: prompts[0]!, seed: 11 + i, params: { temperature: 0, maxTokens: 16 } }))));
    };
    const on = await group(true);
    const off = await group(false);
    expect(on.map((r) => r.text)).toEqual(off.map((r) => r.text));
    const sent = on.reduce((s, r) => s + r.tokens.prompt, 0);
    const evaluated = on.reduce((s, r) => s + (r.promptTokensEvaluated ?? 0), 0);
    // The first call evaluates the whole prompt, each later one its last token only.
    expect(evaluated).toBe(on[0]!.tokens.prompt + 3);
    expect(evaluated).toBeLessThan(0.3 * sent);
    expect(off.reduce((s, r) => s + (r.promptTokensEvaluated ?? 0), 0)).toBe(sent);
  });
});
