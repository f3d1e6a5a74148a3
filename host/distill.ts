/**
 * `distillCard` for the lab (desktop app, `flowlab serve`): `flowlab distill` as a request
 * (cli/commands/distill.ts does the same from flags). The teacher is the role's own model as
 * the experiment recorded it (its adapters kept, only threads and context changed) or the
 * request's `teacher` file; the card is distilled by core/distill `distillFromExperiment` and
 * stored in the prior library with its provenance.
 */
import path from 'node:path';
import { ApiError, cardTrustReader, type DistillCardRequest, type LibraryCard } from '../core/api/index.ts';
import { DistillError, distillFromExperiment } from '../core/distill/index.ts';
import type { ModelConfig, ModelProvider } from '../core/model/index.ts';
import { storedModels, type Store } from '../core/store/index.ts';
import type { ToolRegistry } from '../core/tools/index.ts';
import { parseWorkflow } from '../core/workflow/index.ts';

const M = 'distillCard';

/** What distilling needs from its host. */
export interface DistillDeps {
  store: Store;
  tools: ToolRegistry;
  /** Builds (and loads) the teacher's provider. */
  loadProvider: (config: ModelConfig) => Promise<ModelProvider>;
  /** Takes the teacher's model file for the duration (BUSY when in use); returns the release. */
  claim: (file: string) => () => void;
}

/** The teacher's model config for `req`: its reference, file and config. @throws ApiError `BAD_REQUEST` naming the field. */
export function teacherOf(store: Store, tools: ToolRegistry, req: DistillCardRequest): { ref: string; file: string; config: ModelConfig } {
  const exp = store.getExperiment(req.experimentId); // NOT_FOUND
  const { graph } = parseWorkflow(exp.workflowYaml, { tools });
  if (!graph.roles.has(req.role as never)) {
    throw new ApiError('BAD_REQUEST', `${M}: experiment ${exp.id} has no role "${req.role}" (roles: ${[...graph.roles.keys()].join(', ')})`, M, 'role');
  }
  const stored = storedModels(exp);
  const contextSize = req.contextSize ?? 2048;
  if (req.teacher) {
    const file = path.resolve(req.teacher);
    return { ref: 'teacher', file, config: { models: { teacher: file }, roleModels: {}, ...(req.threads !== undefined && { threads: req.threads }), contextSize, gpu: false } };
  }
  const ref = stored?.roleModels[req.role];
  const file = ref ? stored?.models[ref] : undefined;
  if (!ref || !file) throw new ApiError('BAD_REQUEST', `${M}: experiment ${exp.id} records no model for role "${req.role}": give a teacher model file`, M, 'teacher');
  return { ref, file, config: { ...stored!, models: { [ref]: file }, roleModels: {}, threads: req.threads ?? stored!.threads, contextSize, gpu: false } };
}

/**
 * Distils and stores one card; resolves with it and its trust marks. Errors: as `distillCard`
 * (core/api/features/cards.ts); a DistillError (no exemplar, the teacher's reply not a card) is
 * `BAD_REQUEST` with its message.
 */
export async function distillInLab(deps: DistillDeps, req: DistillCardRequest): Promise<LibraryCard> {
  const { store, tools } = deps;
  const teacher = teacherOf(store, tools, req);
  const release = deps.claim(teacher.file);
  try {
    const provider = await deps.loadProvider(teacher.config);
    try {
      const { graph } = parseWorkflow(store.getExperiment(req.experimentId).workflowYaml, { tools });
      const card = await distillFromExperiment({
        store, experimentId: req.experimentId, graph, role: req.role, shots: req.shots ?? 5, onlySuccesses: Boolean(req.onlySuccesses),
        provider, teacherRef: teacher.ref, seed: req.seed ?? 0, budgetTokens: req.budget ?? 512, maxTokens: req.maxTokens ?? 600,
      });
      return { ...card, uses: 0, trust: cardTrustReader(store)(card) };
    } finally {
      await provider.dispose().catch(() => {});
    }
  } catch (err) {
    if (err instanceof DistillError) throw new ApiError('BAD_REQUEST', `${M}: ${err.message}`, M, 'experimentId', { cause: err });
    throw err;
  } finally {
    release();
  }
}
