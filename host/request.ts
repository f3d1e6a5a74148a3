/**
 * The lab API's face of the shared resolvers: a `StartRunRequest` (core/api/lab.ts) mapped into
 * a `ModelRequest` (models/resolve.ts), a `CardsRequest` (core/distill) and an experiment spec
 * (core/experiments), and their typed errors turned into `ApiError`s naming the request field.
 */
import { ApiError, type StartRunRequest } from '../core/api/index.ts';
import { CardsRequestError, cardsConfigFor, type CardsConfig } from '../core/distill/index.ts';
import { ExperimentSpecError } from '../core/experiments/index.ts';
import { ModelConfigError, type ModelRequestField } from '../core/model/index.ts';
import type { Store } from '../core/store/index.ts';
import { DatasetError } from '../core/tasks/index.ts';
import { formatIssue, parseWorkflow, SpecError, type Graph } from '../core/workflow/index.ts';
import type { ToolSource } from '../core/engine/index.ts';
import { resolveModels, type ResolvedModels } from '../models/resolve.ts';

const M = 'startRun';

/** The request field of a resolver field (and role), as the lab API names it. */
export function apiFieldOf(field: ModelRequestField, role?: string): string {
  switch (field) {
    case 'default':
      return 'models.default';
    case 'roles':
      return `models.roles.${role}`;
    case 'roleLora':
      return `roleLora.${role}`;
    case 'roleVersions':
      return `roleVersions.${role}`;
    case 'workflow':
      return 'workflowText';
  }
}

/** Parses the request's workflow. Errors: BAD_REQUEST `workflowText` (of `method`) listing every located issue. */
export function parseRequestWorkflow(text: string, tools: ToolSource, method: string = M): Graph {
  try {
    return parseWorkflow(text, { tools }).graph;
  } catch (err) {
    if (err instanceof SpecError) {
      const n = err.issues.length;
      throw new ApiError('BAD_REQUEST', `${method}: the workflow has ${n} issue${n === 1 ? '' : 's'}: ${err.issues.map(formatIssue).join('; ')}`, method, 'workflowText', { cause: err });
    }
    throw err;
  }
}

/** The model fields a lab request shares with `startRun` (`startTrainLoop` has all but `roleLora`). */
export type RequestModelFields = Pick<StartRunRequest, 'models' | 'roleLora' | 'roleVersions' | 'threads' | 'contextSize'>;

/**
 * The request's models through the shared resolver: `models.default` / `models.roles`,
 * `roleLora`, `roleVersions` (looked up in the store), `threads`, `contextSize`; the workflow's
 * relative model paths resolve against `modelDir`. Errors: BAD_REQUEST (of `method`) naming the field.
 */
export function resolveRequestModels(graph: Graph, req: RequestModelFields, store: Store, modelDir: string, method: string = M): ResolvedModels {
  try {
    return resolveModels(graph, {
      default: req.models.default,
      roles: req.models.roles ?? {},
      ...(req.roleLora && { roleLora: req.roleLora }),
      ...(req.roleVersions && { roleVersions: req.roleVersions }),
      ...(req.threads !== undefined && { threads: req.threads }),
      ...(req.contextSize !== undefined && { contextSize: req.contextSize }),
      gpu: false,
      baseDir: modelDir,
    }, (id) => store.weights.find(id));
  } catch (err) {
    if (!(err instanceof ModelConfigError)) throw err;
    const { role, roles, versionId, path } = err.detail;
    const field = apiFieldOf(err.field, role);
    const message = {
      UNKNOWN_ROLE: `${err.field === 'roles' ? 'a model is chosen for' : `${err.field} names`} role "${role}", which the workflow does not have (roles: ${roles?.join(', ')})`,
      NO_MODEL: `role "${role}" has no model: choose a default model or one for role "${role}"`,
      CONFLICT: `role "${role}" has both a model file (models.roles) and a weight version (roleVersions)`,
      UNKNOWN_VERSION: `roleVersions.${role}: no weight version ${versionId} in the database`,
      VERSION_FILE_MISSING: `roleVersions.${role}: the file ${path} of weight version ${versionId} is missing`,
      BAD_ENDPOINT: err.message,
    }[err.code];
    throw new ApiError('BAD_REQUEST', `${method}: ${message}`, method, field, { cause: err });
  }
}

/**
 * The request's hint-card configuration (`cards`, `cardBudget`, `distill*`), chosen from the
 * store's library; undefined when no card is used. Errors: BAD_REQUEST `cards` / `distillRoles`.
 */
export function requestCards(graph: Graph, req: StartRunRequest, store: Store): CardsConfig | undefined {
  const selection = req.cards ?? 'none';
  if (selection === 'none' && req.distillEvery === undefined) return undefined;
  try {
    return cardsConfigFor({
      selection,
      ...(req.cardBudget !== undefined && { budgetTokens: req.cardBudget }),
      ...(req.distillEvery !== undefined && {
        distill: { every: req.distillEvery, ...(req.distillShots !== undefined && { shots: req.distillShots }), ...(req.distillRoles && { roles: req.distillRoles }), withFailures: Boolean(req.distillWithFailures) },
      }),
    }, graph, selection === 'none' ? [] : store.improve.listCards()).config;
  } catch (err) {
    if (err instanceof CardsRequestError) throw new ApiError('BAD_REQUEST', `${M}: ${err.message}`, M, err.field, { cause: err });
    throw err;
  }
}

/** An error of `startExperiment` in the API's form (ApiError with method and field); other errors unchanged. */
export function apiErrorOf(err: unknown, method: string = M): unknown {
  if (err instanceof ExperimentSpecError) return new ApiError('BAD_REQUEST', `${method}: ${err.message}`, method, err.field, { cause: err.cause ?? err });
  if (err instanceof DatasetError) {
    const field = err.code === 'UNKNOWN_SPLIT' ? 'split' : err.code === 'BAD_OPTIONS' ? 'limit' : 'dataset';
    const code = err.code === 'DATASET_NOT_FOUND' ? 'UNAVAILABLE' : err.code === 'BAD_LINE' || err.code === 'EMPTY_FILE' || err.code === 'NOT_UTF8' ? 'INTERNAL' : 'BAD_REQUEST';
    return new ApiError(code, `${method}: ${err.message}`, method, field, { cause: err });
  }
  return err;
}
