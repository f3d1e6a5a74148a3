/**
 * `flowlab generate`'s refusals through the real CLI, without a model: a bad flag value is a usage
 * error naming the flag (exit 2), a missing model file exits 1 naming it.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { cli } from '../test/cli.ts';

describe('flowlab generate refuses bad input', () => {
  it('names the flag of a bad value (exit 2), and a missing model file (exit 1)', async () => {
    const over = await cli(['generate', '--model', '/tmp/m.gguf', '--prompt', 'x', '--max-tokens', '5000']);
    expect([over.code, over.err.split('\n')[0]]).toEqual([2, 'flowlab generate: --max-tokens must be at most 4096']);
    const topP = await cli(['generate', '--model', '/tmp/m.gguf', '--prompt', 'x', '--top-p', 'high']);
    expect([topP.code, topP.err.split('\n')[0]]).toEqual([2, 'flowlab generate: --top-p takes a number, got "high"']);
    const schema = await cli(['generate', '--model', '/tmp/m.gguf', '--prompt', 'x', '--json-schema', '[1,2]']);
    expect([schema.code, schema.err.split('\n')[0]]).toEqual([2, 'flowlab generate: --json-schema expected object, received array']);
    // A schema the local file's grammar cannot decode is the --json-schema flag's fault, not the model file's (exit 2).
    const nonsense = await cli(['generate', '--model', '/tmp/m.gguf', '--prompt', 'x', '--json-schema', '{"type":"nonsense"}']);
    expect([nonsense.code, nonsense.err.split('\n')[0]]).toEqual([2, 'flowlab generate: --json-schema: keyword "type" at /type must be equal to one of the allowed values (["array","boolean","integer","null","number","object","string"]): not a valid JSON Schema (draft-07)']);
    const allOf = await cli(['generate', '--model', '/tmp/m.gguf', '--prompt', 'x', '--json-schema', '{"allOf":[{"type":"object"}]}']);
    expect([allOf.code, allOf.err.split('\n')[0]]).toEqual([2, expect.stringMatching(/^flowlab generate: --json-schema: at allOf: "allOf" cannot be enforced by the decoding grammar/)]);
    const missing = await cli(['generate', '--model', '/tmp/flowlab-no-such-model.gguf', '--prompt', 'x']);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/^flowlab generate: --model: .*\/tmp\/flowlab-no-such-model\.gguf/);
  }, 60_000);

  it('a generation that fails before any text writes nothing to stdout (it wrote a blank line), exit 1 with the reason', async () => {
    // An OpenAI-compatible endpoint that answers 400 to every call.
    const server = createServer((_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"no such model"}}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      const r = await cli(['generate', '--model', `openai:http://127.0.0.1:${port}/v1#m`, '--prompt', 'x']);
      expect([r.code, r.out]).toEqual([1, '']);
      expect(r.err).toMatch(/answered 400 for model "m".*: no such model\n$/);
    } finally {
      await new Promise((r) => server.close(r));
    }
  }, 60_000);
});
