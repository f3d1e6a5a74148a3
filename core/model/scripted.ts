import type { GenerateRequest, GenerateResult, ModelProvider } from './provider.ts';

/** Produces the text of a scripted reply; may throw to simulate a failing call. */
export type Script = (request: GenerateRequest) => string | Promise<string>;

/**
 * A simulated model: replies come from a script, not from a model.
 * Used only by tests, benchmarks and fault-injection teaching material; its name says so
 * ("scripted (simulated)") wherever a run records it. Token counts are whitespace word counts.
 */
export class ScriptedProvider implements ModelProvider {
  readonly name = 'scripted (simulated)';
  calls = 0;
  constructor(private readonly script: Script) {}

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const started = performance.now();
    this.calls++;
    const text = await this.script(request);
    return {
      text,
      tokens: { prompt: countWords(request.prompt), completion: countWords(text) },
      ms: performance.now() - started,
      seed: request.seed,
      model: this.name,
      stopReason: 'eos',
    };
  }

  modelsLoaded(): number {
    return 0;
  }

  async dispose(): Promise<void> {}
}

function countWords(s: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < s.length; i++) {
    const space = s.charCodeAt(i) <= 32;
    if (!space && !inWord) n++;
    inWord = !space;
  }
  return n;
}
