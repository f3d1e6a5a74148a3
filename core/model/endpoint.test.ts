/** Endpoint references (core/model/endpoint.ts), in a workflow's `models` (located SpecIssues) and through the resolver (models/resolve.ts). */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fingerprintModel, resolveModels, verifyModelFiles } from '../../models/resolve.ts';
import { parseWorkflow, SpecError } from '../workflow/index.ts';
import { ModelConfigError } from './config.ts';
import { EndpointRefError, endpointId, isEndpointRef, parseEndpointRef } from './endpoint.ts';

describe('parseEndpointRef', () => {
  it('reads one endpoint with defaults, and every option', () => {
    expect(parseEndpointRef('openai:http://127.0.0.1:8080/v1/#stories260K')).toEqual([
      { baseUrl: 'http://127.0.0.1:8080/v1', model: 'stories260K', concurrency: 4, timeoutMs: 120_000, retries: 3, form: 'json_schema', extras: true, logprobs: false },
    ]);
    const [e] = parseEndpointRef('openai:https://api.example.com/v1#gpt-x&key=MY_KEY&concurrency=8&timeout=30&retries=0&form=vllm&extras=0&logprobs=1');
    expect(e).toEqual({ baseUrl: 'https://api.example.com/v1', model: 'gpt-x', keyEnv: 'MY_KEY', concurrency: 8, timeoutMs: 30_000, retries: 0, form: 'vllm', extras: false, logprobs: true });
    expect(endpointId(e!)).toBe('https://api.example.com/v1#gpt-x');
  });

  it('reads several comma-joined endpoints (one model, several servers)', () => {
    const specs = parseEndpointRef('openai:http://a:8000/v1#m&concurrency=2,http://b:8000/v1#m');
    expect(specs.map((s) => [s.baseUrl, s.concurrency])).toEqual([['http://a:8000/v1', 2], ['http://b:8000/v1', 4]]);
  });

  const bad: Array<[string, RegExp, number]> = [
    ['http://a/v1#m', /starts with "openai:"/, 0],
    ['openai:http://a/v1', /names no model: add #<model-id>/, 18],
    ['openai:ftp://a/v1#m', /only http and https/, 7],
    ['openai:http://a/v1#m,', /empty endpoint at offset 21/, 21],
    ['openai:http://u:pw@a/v1#m', /carries credentials/, 7],
    ['openai:http://a/v1#m&key=sk-123', /names an environment variable/, 21],
    ['openai:http://a/v1#m&concurrency=0', /integer from 1 to 64/, 21],
    ['openai:http://a/v1#m&form=xml', /form is one of json_schema, llama, grammar, vllm, ollama, none/, 21],
    ['openai:http://a/v1#m&colour=red', /unknown option/, 21],
    ['openai:not a url#m', /is not a URL/, 7],
  ];
  for (const [ref, message, offset] of bad) {
    it(`refuses ${ref} at offset ${offset}`, () => {
      const err = (() => {
        try {
          parseEndpointRef(ref);
        } catch (e) {
          return e;
        }
        throw new Error('accepted');
      })();
      expect(err).toBeInstanceOf(EndpointRefError);
      expect((err as EndpointRefError).code).toBe('BAD_ENDPOINT');
      expect((err as EndpointRefError).message).toMatch(message);
      expect((err as EndpointRefError).offset).toBe(offset);
    });
  }
});

const NO_TOOLS = { get: () => undefined, list: () => [] };
const wf = (modelPath: string) => `name: x
models:
  remote: { path: "${modelPath}" }
roles:
  writer: { kind: generator, model: remote }
  critic: { kind: verifier }
nodes:
  - { id: a, role: writer, prompt: hi }
  - { id: b, role: critic, inputs: { a: a }, prompt: "{{a}}" }
`;

describe('endpoint references in workflows and the resolver', () => {
  it('a bad one in models.<ref>.path is a located BAD_ENDPOINT issue', () => {
    try {
      parseWorkflow(wf('openai:http://127.0.0.1:8080/v1'), { file: 'wf.yaml', tools: NO_TOOLS });
      throw new Error('accepted');
    } catch (e) {
      expect(e).toBeInstanceOf(SpecError);
      const issue = (e as SpecError).issues.find((i) => i.code === 'BAD_ENDPOINT');
      expect(issue).toMatchObject({ file: 'wf.yaml', line: 3, path: ['models', 'remote', 'path'] });
      expect(issue!.message).toMatch(/not a valid endpoint reference: .*names no model/);
    }
  });

  it('a good one is kept as given (not resolved as a path), beside files; fingerprints skip it', () => {
    const ref = 'openai:http://127.0.0.1:8080/v1#tiny';
    const { graph } = parseWorkflow(wf(ref), { file: '/tmp/wf.yaml', tools: NO_TOOLS });
    const { config } = resolveModels(graph, { default: 'local.gguf', baseDir: '/models' });
    expect(config.models).toEqual({ remote: ref, default: path.resolve('/models', 'local.gguf') });
    expect(isEndpointRef(config.models['remote']!)).toBe(true);
    expect(fingerprintModel(ref)).toBe('endpoint');
    expect(() => verifyModelFiles({ ...config, models: { remote: ref } }, { ...config, models: { remote: ref } })).not.toThrow();
  });

  it('--model / --role-model endpoint references are checked: BAD_ENDPOINT naming the field and role', () => {
    const { graph } = parseWorkflow(wf('openai:http://h/v1#m'), { tools: NO_TOOLS });
    const err = (() => {
      try {
        resolveModels(graph, { default: 'openai:http://h/v1#m', roles: { critic: 'openai:http://h/v1#m&bogus=1' } });
      } catch (e) {
        return e;
      }
      throw new Error('accepted');
    })() as ModelConfigError;
    expect(err).toBeInstanceOf(ModelConfigError);
    expect([err.code, err.field, err.detail.role]).toEqual(['BAD_ENDPOINT', 'roles', 'critic']);
    expect(err.message).toMatch(/role "critic": option "bogus=1" at offset \d+: unknown option/);
  });
});
