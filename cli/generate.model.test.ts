/**
 * `flowlab generate` through the real CLI with the tiny model (stories260K, 1 thread): the streamed
 * stdout is the text `--json` reports for the same seed, with the prompt shown and the counts.
 * (Its refusals, without a model: generate.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { cli } from '../test/cli.ts';
import { haveShared, noteSkip, tinyModel } from '../test/fixtures.ts';

if (!haveShared) noteSkip('generate', 'the CLI playground with the tiny model', tinyModel);

describe.skipIf(!haveShared)('flowlab generate with stories260K', () => {
  it('streams to stdout the text --json reports for the same seed, the prompt and counts on stderr', async () => {
    const args = ['generate', '--model', tinyModel, '--prompt', 'Once upon a time', '--seed', '7', '--max-tokens', '48', '--threads', '1'];
    const streamed = await cli([...args, '--show-prompt']);
    const json = await cli([...args, '--json']);
    expect([streamed.code, json.code]).toEqual([0, 0]);
    const report = JSON.parse(json.out) as { status: string; text: string; completionTokens: number; promptTokens: number; renderedPrompt: string; promptForm: string; tokensPerSecond: number; stopReason: string };
    expect(streamed.out).toBe(`${report.text}\n`);
    expect([report.status, report.completionTokens, report.promptTokens, report.promptForm, report.renderedPrompt, report.stopReason]).toEqual(['completed', 48, 7, 'plain', 'Once upon a time', 'maxTokens']);
    expect(streamed.err).toMatch(/^--- prompt as the model sees it \(no chat template: plain completion, 7 tokens\) ---\nOnce upon a time\n--- reply ---\n48 completion tokens · \d+\.\d tokens\/s · first token \d+ ms · \d+ ms · 7 prompt tokens · stopped: max tokens\n$/);
  }, 120_000);
});
