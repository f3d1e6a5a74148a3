/**
 * One provider over two: model references that are endpoint references (`openai:...`) go to an
 * `OpenAiProvider`, file references to the node-llama-cpp provider, so one run may mix local
 * files and servers per role.
 */
import { ModelError, type EndpointDecision, type GenerateRequest, type GenerateResult, type ModelProvider } from '../../core/model/index.ts';

export class RoutedProvider implements ModelProvider {
  readonly name: string;

  /**
   * @param files the provider of the file references (`fileRefs`); `endpoints` the provider of the others (`endpointRefs`).
   */
  constructor(
    private readonly files: ModelProvider,
    private readonly fileRefs: ReadonlySet<string>,
    private readonly endpoints: ModelProvider,
    private readonly endpointRefs: ReadonlySet<string>,
  ) {
    this.name = `${files.name} + ${endpoints.name}`;
  }

  /** @throws ModelError `MODEL_UNKNOWN_REF` for a ref of neither set; otherwise what the chosen provider throws. */
  generate(request: GenerateRequest): Promise<GenerateResult> {
    if (this.endpointRefs.has(request.model)) return this.endpoints.generate(request);
    if (this.fileRefs.has(request.model)) return this.files.generate(request);
    return Promise.reject(new ModelError('MODEL_UNKNOWN_REF', `model ref "${request.model}" is not configured (known: ${[...this.fileRefs, ...this.endpointRefs].join(', ')})`, request.model));
  }

  modelsLoaded(): number {
    return this.files.modelsLoaded() + this.endpoints.modelsLoaded();
  }

  /** Loads the files (every file ref, or `ref` when it is one); endpoints load nothing. */
  async load(ref?: string): Promise<unknown> {
    if (ref !== undefined && !this.fileRefs.has(ref)) return [];
    return this.files.load?.(ref);
  }

  tokenOffsets(ref: string, ids: readonly number[]): Promise<number[]> {
    if (!this.files.tokenOffsets || !this.fileRefs.has(ref)) return Promise.reject(new ModelError('GENERATION_FAILED', `model ref "${ref}" has no local tokenizer (an endpoint)`, ref));
    return this.files.tokenOffsets(ref, ids);
  }

  /** The endpoint provider's decisions (backpressure, failover). */
  endpointDecisions(): EndpointDecision[] {
    return this.endpoints.endpointDecisions?.() ?? [];
  }

  async dispose(): Promise<void> {
    await Promise.all([this.files.dispose(), this.endpoints.dispose()]);
  }
}
