/**
 * The provider conformance suite (`providerConformance.ts`) against the providers that need no
 * model file: replay (answering from a recording of the suite's own calls) and scripted. The
 * node-llama-cpp adapter's run is model-dependent: `models/llama/llama.conformance.model.test.ts`.
 */
import { asRoleName } from '../../core/ids.ts';
import { ScriptedProvider, type GenerateRequest } from '../../core/model/index.ts';
import { ReplayProvider, type RecordedCall } from '../replay/index.ts';
import {
  CONFORMANCE_TASK_KEY,
  conformanceAnswer,
  conformanceRequests,
  describeProviderConformance,
} from './providerConformance.ts';

/** A recording of the suite's calls, as the store would return it. */
function recording(): RecordedCall[] {
  return Object.values(conformanceRequests()).map((r) => {
    const completion = conformanceAnswer(r);
    return {
      taskIndex: 0,
      nodeId: r.key.nodeId,
      attempt: r.key.attempt,
      callIndex: r.key.callIndex,
      role: asRoleName('writer'),
      modelRef: r.model,
      model: 'recorded.gguf',
      prompt: r.prompt,
      params: r.params,
      seed: r.seed,
      ...(r.jsonSchema ? { jsonSchema: r.jsonSchema } : {}),
      completion,
      promptTokens: 5,
      completionTokens: completion.split(' ').length,
      ms: 12,
      startedAt: 1_700_000_000_000,
      stopReason: 'eos',
    };
  });
}

/** Answers at once, except the long call, which takes 10 s unless aborted (the mid-call abort check). */
function slowLongScript(request: GenerateRequest): string | Promise<string> {
  if (request.params.maxTokens < conformanceRequests().long.params.maxTokens) return conformanceAnswer(request);
  return new Promise((resolve) => setTimeout(() => resolve(conformanceAnswer(request)), 10_000).unref());
}

describeProviderConformance('replay', () => new ReplayProvider(recording(), { taskKeyOf: () => CONFORMANCE_TASK_KEY }), {
  loadsModels: false,
  abortsMidCall: false,
  unknownRefCode: 'REPLAY_MISSING',
});

describeProviderConformance('scripted', () => new ScriptedProvider(slowLongScript), {
  loadsModels: false,
  abortsMidCall: true,
});
