/**
 * `forkRun` for the lab (desktop app, `flowlab serve`): `flowlab fork` as a request (cli/commands/
 * fork.ts does the same from flags). The upstream is served from the run's recording by the replay
 * provider; the live part loads the run's own models (its stored model config), whose files the
 * runner holds meanwhile (`BUSY` for others, as an experiment holds its files).
 */
import { ApiError, type ForkRunRequest, type ForkRunResult } from '../core/api/index.ts';
import { ForkError, forkRun, type Intervention } from '../core/experiments/index.ts';
import type { ModelConfig, ModelProvider } from '../core/model/index.ts';
import { storedModels, type Store } from '../core/store/index.ts';
import type { ToolRegistry } from '../core/tools/index.ts';
import { ReplayProvider } from '../models/replay/index.ts';

const M = 'forkRun';

/** What forking needs from its host. */
export interface ForkLabDeps {
  store: Store;
  tools: ToolRegistry;
  /** Builds (not loads) a provider for a model config. */
  createProvider: (config: ModelConfig) => Promise<ModelProvider>;
  /** Checks the run's models (files and endpoint references: FORBIDDEN, BAD_REQUEST) and takes the files (BUSY); returns the release. */
  claim: (models: string[]) => Promise<() => void>;
}

/** The one intervention of a request. @throws ApiError BAD_REQUEST when there is none or several. */
export function interventionOfRequest(req: ForkRunRequest): Intervention {
  const given = [req.output !== undefined && 'output', req.prompt !== undefined && 'prompt', req.seed !== undefined && 'seed', req.roleModel !== undefined && 'roleModel'].filter(Boolean);
  if (given.length !== 1) throw new ApiError('BAD_REQUEST', `${M}: give exactly one intervention: output, prompt, seed or roleModel`, M, 'output');
  if (req.output !== undefined) return { kind: 'output', output: req.output };
  if (req.prompt !== undefined) return { kind: 'prompt', prompt: req.prompt };
  if (req.roleModel !== undefined) return { kind: 'role-model', role: req.roleModel.role, model: req.roleModel.path };
  return { kind: 'seed', seed: req.seed! };
}

/**
 * Forks and stores; resolves with the fork and its call counts. Errors: ApiError NOT_FOUND (no
 * run), BAD_REQUEST (a ForkError: unknown node, never ran, incomplete recording..., with its message
 * and the request field), the claim's errors.
 */
export async function forkInLab(deps: ForkLabDeps, req: ForkRunRequest): Promise<ForkRunResult> {
  const { store, tools } = deps;
  const intervention = interventionOfRequest(req);
  const parent = store.getRun(req.runId);
  const models = storedModels(store.getExperiment(parent.experimentId));
  const files = [...new Set([...(models ? Object.values(models.models) : []), ...(req.roleModel ? [req.roleModel.path] : [])])];
  const release = await deps.claim(files);
  try {
    const out = await forkRun(
      { parentRunId: req.runId, nodeId: req.nodeId, ...(req.attempt !== undefined && { attempt: req.attempt }), intervention, ...(req.threads !== undefined && { threads: req.threads }) },
      { store, tools, models: { create: deps.createProvider }, replay: (calls, o) => new ReplayProvider(calls, o) },
    );
    const link = out.link!;
    return {
      runId: out.run.runId, experimentId: link.experimentId, parentRunId: link.parentRunId, nodeId: link.nodeId, attempt: link.attempt,
      intervention: intervention.kind, status: out.run.status, correct: out.run.correct, ...(out.run.answer !== undefined && { answer: out.run.answer }),
      ...(link.createdAt !== undefined && { createdAt: link.createdAt }), parentCorrect: out.parent.correct, recorded: out.calls.recorded, live: out.calls.live, modelsLoaded: out.modelsLoaded,
    };
  } catch (err) {
    if (err instanceof ForkError) throw new ApiError('BAD_REQUEST', `${M}: ${err.message}`, M, err.field === 'node' ? 'nodeId' : err.field === 'run' ? 'runId' : err.field, { cause: err });
    throw err;
  } finally {
    release();
  }
}
