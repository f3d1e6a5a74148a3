import type { z } from 'zod';
import { FaultSpecError } from '../faults/index.ts';
import { ModelError } from '../model/index.ts';
import { StoreError, type Store } from '../store/index.ts';
import { DatasetError } from '../tasks/index.ts';
import { defaultTools } from '../tools/index.ts';
import { formatIssue, parseWorkflow, SpecError, type ToolLookup } from '../workflow/index.ts';
import { API_METHODS, isLabMethod, type ApiMethod } from './channels.ts';
import { payloadSchemas, type ApiPayload, type ExperimentSummary, type FlowlabApi, type ValidateWorkflowResult, type WorkflowSummary } from './contract.ts';
import { ApiError } from './errors.ts';
import { buildRunDiff } from './diffHandlers.ts';
import { forkHandlers } from './forkHandlers.ts';
import { buildCardEffect, buildRolloutsView, listLibraryCards } from './improveHandlers.ts';
import type { LabHost } from './lab.ts';
import { buildLearningCurves, listVersions } from './learningHandlers.ts';
import { buildStudyDetail, listStudyViews } from './studyHandlers.ts';
import { createRunTraceReader } from './runTrace.ts';
import type { WorkshopHost } from './workshop.ts';
import { WorkshopError } from '../workshop/index.ts';
import { getDesignDiff, getEvolution, getOuterLoop, listEvolutions, listOuterLoops } from './massHandlers.ts';
import { massJobHandlers } from './massJobHandlers.ts';
import { downloadHandlers } from './downloadHandlers.ts';
import { jobHandlers } from './jobs.ts';
import { studyJobHandlers } from './studyJobHandlers.ts';
import { compareExperiments, deleteCard, experimentMetaOf, exportCards } from './loopHandlers.ts';
import { searchRuns } from './runSearch.ts';

/** What the handlers need: the open store, the app version, the lab host, and optionally the tool registry. */
export interface HandlerDeps {
  /** The open experiment store. Handlers never close it; the host owns its lifecycle. */
  store: Store;
  /** The app version reported by `appInfo`. */
  version: string;
  /** The models folder reported by `appInfo` (the Models view shows it when it is empty). */
  modelDir?: string;
  /** Tools known to `validateWorkflow`. Default: `defaultTools()` (calculator, extract_number). */
  tools?: ToolLookup;
  /**
   * What core cannot do by itself: examples and datasets on disk, the model catalogue, test
   * generations and background runs (`createLabHost` in host/, or Electron main's relay to its
   * utility process). Without it the lab methods reject with `UNAVAILABLE`.
   */
  lab?: LabHost;
  /** The workshop session (`flowlab workshop`); without it the workshop methods are `UNAVAILABLE`. */
  workshop?: WorkshopHost;
}

/**
 * Builds the lab's API over core (one handler map for both hosts, contract.ts): plain functions, no Electron, usable by the
 * preload's IPC host and the browser host alike. Every method validates its payload with zod
 * first and throws only `ApiError` (see `FlowlabApi` for codes).
 */
export function createHandlers(deps: HandlerDeps): FlowlabApi {
  const { store } = deps;
  const tools = deps.tools ?? defaultTools();
  const lab = (method: ApiMethod): LabHost => {
    if (!deps.lab) throw new ApiError('UNAVAILABLE', `${method}: this host cannot run the lab (no lab host); use the desktop app or \`flowlab serve\``, method);
    return deps.lab;
  };
  const runTrace = createRunTraceReader(store, tools);
  /** The lab host, when it keeps workflow files (else UNAVAILABLE). */
  const workflowFiles = (method: 'listWorkflowFiles' | 'readWorkflowFile' | 'saveWorkflowFile'): LabHost => {
    const host = lab(method);
    if (!host[method]) throw new ApiError('UNAVAILABLE', `${method}: this host keeps no workflows folder`, method);
    return host;
  };
  const workshop = (method: ApiMethod): WorkshopHost => {
    if (!deps.workshop) throw new ApiError('UNAVAILABLE', `${method}: no workshop runs on this host; start one with \`flowlab workshop <scenario>\``, method);
    return deps.workshop;
  };

  const impl: { [M in ApiMethod]: (payload: ApiPayload<M>) => ReturnType<FlowlabApi[M]> } = {
    listExperiments: () => store.listExperiments().map(toSummary),

    getExperiment: ({ id }) => {
      const row = store.getExperiment(id); // NOT_FOUND when absent
      // The store computes progress and scores in its list query; reuse it so both views agree.
      const summary = store.listExperiments().find((e) => e.id === row.id);
      if (!summary) throw new StoreError('NOT_FOUND', `no experiment ${id}`, id);
      return summary;
    },

    listRuns: ({ experimentId }) => store.listRuns(experimentId),

    searchRuns: (query) => searchRuns(store, query),

    getRunTrace: ({ runId }) => runTrace(runId),

    validateWorkflow: ({ text, file }) => validateWorkflowText(text, file, tools),

    appInfo: () => ({ version: deps.version, dbFile: store.file, ...(deps.modelDir !== undefined ? { modelDir: deps.modelDir } : {}) }),

    listExamples: async () => lab('listExamples').listExamples(),
    listDatasets: async () => lab('listDatasets').listDatasets(),
    listModels: async () => lab('listModels').listModels(),
    addModel: async (payload) => lab('addModel').addModel(payload),
    testModel: async (payload) => lab('testModel').testModel(payload),
    startRun: async (payload) => lab('startRun').startRun(payload),
    cancelRun: async (payload) => {
      store.getExperiment(payload.experimentId); // NOT_FOUND for an unknown id
      return lab('cancelRun').cancelRun(payload);
    },
    resumeRun: async (payload) => {
      if (!store.trainLoops.find(payload.experimentId)) store.getExperiment(payload.experimentId); // NOT_FOUND for an unknown id (a loop id resumes the loop)
      const host = lab('resumeRun');
      if (!host.resumeRun) throw new ApiError('UNAVAILABLE', 'resumeRun: this host cannot resume experiments', 'resumeRun');
      return host.resumeRun(payload);
    },
    activeRuns: async () => lab('activeRuns').activeRuns(),
    startTrainLoop: async (payload) => {
      const host = lab('startTrainLoop');
      if (!host.startTrainLoop) throw new ApiError('UNAVAILABLE', 'startTrainLoop: this host cannot run train loops', 'startTrainLoop');
      return host.startTrainLoop(payload);
    },
    ...massJobHandlers(lab),
    ...studyJobHandlers(lab),
    cancelTrainLoop: async (payload) => {
      const host = lab('cancelTrainLoop');
      if (!host.cancelTrainLoop) throw new ApiError('UNAVAILABLE', 'cancelTrainLoop: this host cannot run train loops', 'cancelTrainLoop');
      return host.cancelTrainLoop(payload);
    },

    listWorkflowFiles: async () => workflowFiles('listWorkflowFiles').listWorkflowFiles!(),
    readWorkflowFile: async (payload) => workflowFiles('readWorkflowFile').readWorkflowFile!(payload),
    saveWorkflowFile: async (payload) => workflowFiles('saveWorkflowFile').saveWorkflowFile!(payload),

    getRollouts: ({ experimentId }) => buildRolloutsView(store, experimentId),
    listCards: (payload) => listLibraryCards(store, payload?.role),
    getCardEffect: ({ cardId }) => buildCardEffect(store, cardId),
    listWeightVersions: (payload) => listVersions(store, payload?.role),
    getLearningCurves: (payload) => buildLearningCurves(store, payload?.role),
    diffRuns: ({ a, b }) => buildRunDiff(store, runTrace, a, b),
    listStudies: () => listStudyViews(store),
    getStudy: ({ studyId }) => buildStudyDetail(store, studyId),
    listEvolutions: () => listEvolutions(store),
    getEvolution: ({ evolutionId }) => getEvolution(store, evolutionId),
    getDesignDiff: (payload) => getDesignDiff(store, payload),
    listOuterLoops: () => listOuterLoops(store),
    getOuterLoop: ({ loopId }) => getOuterLoop(store, loopId),
    compareExperiments: ({ a, b, seed }) => compareExperiments(store, a, b, seed),
    deleteCard: ({ cardId }) => deleteCard(store, cardId),
    distillCard: async (payload) => {
      store.getExperiment(payload.experimentId); // NOT_FOUND for an unknown id
      const host = lab('distillCard');
      if (!host.distillCard) throw new ApiError('UNAVAILABLE', 'distillCard: this host cannot load models to distil cards', 'distillCard');
      return host.distillCard(payload);
    },
    exportCards: (payload) => exportCards(store, payload?.ids),
    ...downloadHandlers(lab),
    ...jobHandlers(lab),
    ...forkHandlers(store, lab),
    getWorkshop: () => workshop('getWorkshop').view(),
    joinWorkshop: (payload) => workshop('joinWorkshop').join(payload?.attendee),
    listAttendees: () => workshop('listAttendees').attendees(),
    removeAttendee: ({ attendee }) => workshop('removeAttendee').remove(attendee),
    submitPrediction: ({ attendee, stepId, choice }) => workshop('submitPrediction').submit(attendee, stepId, choice),
    controlWorkshop: ({ action, index }) => workshop('controlWorkshop').control(action === 'goto' ? { action, index: index! } : { action: action as Exclude<typeof action, 'goto'> }),
  };

  const api = {} as Record<ApiMethod, (payload?: unknown) => unknown>;
  for (const method of API_METHODS) {
    const run = impl[method] as (payload: unknown) => unknown;
    if (isLabMethod(method)) {
      // Asynchronous on every host: a bad payload rejects like any other failure.
      api[method] = async (payload?: unknown) => {
        const valid = validatePayload(method, payload);
        try {
          return await run(valid);
        } catch (err) {
          throw toApiError(err, method);
        }
      };
      continue;
    }
    api[method] = (payload?: unknown) => {
      const valid = validatePayload(method, payload);
      try {
        return run(valid);
      } catch (err) {
        throw toApiError(err, method);
      }
    };
  }
  return api as unknown as FlowlabApi;
}

/**
 * `validateWorkflow`'s answer for a document: the graph's outline, or every located issue (a
 * SpecError's). Pure and synchronous, so a host may run it in a worker (host/workflowValidator.ts).
 * @throws what parseWorkflow throws besides SpecError (a bug).
 */
export function validateWorkflowText(text: string, file: string | undefined, tools: ToolLookup = defaultTools()): ValidateWorkflowResult {
  try {
    const { graph } = parseWorkflow(text, { tools, ...(file === undefined ? {} : { file }) });
    const summary: WorkflowSummary = {
      name: graph.name,
      notation: graph.notation,
      nodes: graph.nodes.map((n) => (n.role === undefined ? { id: n.id, kind: n.kind } : { id: n.id, kind: n.kind, role: n.role })),
      edges: graph.edges.map((e) => ({ from: e.from, to: e.to, type: e.type })),
    };
    return { ok: true, summary };
  } catch (err) {
    if (err instanceof SpecError) return { ok: false, issues: err.issues.map((i) => ({ ...i, path: [...i.path] })) };
    throw err;
  }
}

/**
 * Validates a method's payload against its schema and returns the parsed value.
 * @throws ApiError `BAD_REQUEST` naming the method and the first field at fault, e.g.
 *   `listRuns: payload field "experimentId": expected string, received number`.
 */
export function validatePayload<M extends ApiMethod>(method: M, payload: unknown): ApiPayload<M> {
  const schema = payloadSchemas[method] as unknown as z.ZodType<ApiPayload<M>>;
  const parsed = schema.safeParse(payload);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => describeIssue(issue, payload));
  const first = problems[0]!;
  const message = `${method}: ${problems.map((p) => p.text).join('; ')}`;
  return throwBadRequest(message, method, first.field, parsed.error);
}

function throwBadRequest(message: string, method: string, field: string | undefined, cause: unknown): never {
  throw new ApiError('BAD_REQUEST', message, method, field, { cause });
}

/**
 * Turns any error from core into an ApiError for `method`, keeping the original as `cause`:
 * store `NOT_FOUND` -> `NOT_FOUND`, a closed store -> `UNAVAILABLE`, `EXPERIMENT_BUSY` -> `BUSY`;
 * an invalid workflow, unknown dataset or split, bad fault spec, or missing or invalid model
 * file -> `BAD_REQUEST`; dataset files absent -> `UNAVAILABLE`; anything else -> `INTERNAL`.
 * The message starts with `<method>: `.
 */
export function toApiError(err: unknown, method: string): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof StoreError) {
    const code = err.code === 'NOT_FOUND' ? 'NOT_FOUND' : err.code === 'CLOSED' ? 'UNAVAILABLE' : err.code === 'EXPERIMENT_BUSY' ? 'BUSY' : 'INTERNAL';
    return new ApiError(code, `${method}: ${err.message}`, method, undefined, { cause: err });
  }
  if (err instanceof SpecError) {
    const issues = err.issues.map(formatIssue).join('; ');
    return new ApiError('BAD_REQUEST', `${method}: invalid workflow: ${issues}`, method, undefined, { cause: err });
  }
  if (err instanceof DatasetError) {
    const code = err.code === 'DATASET_NOT_FOUND' ? 'UNAVAILABLE' : err.code === 'BAD_LINE' || err.code === 'EMPTY_FILE' || err.code === 'NOT_UTF8' ? 'INTERNAL' : 'BAD_REQUEST';
    return new ApiError(code, `${method}: ${err.message}`, method, undefined, { cause: err });
  }
  if (err instanceof WorkshopError) {
    return new ApiError(err.code === 'NOT_REHEARSED' || err.code === 'STEP_FAILED' ? 'UNAVAILABLE' : err.code === 'ROOM_FULL' || err.code === 'NOT_ATTENDEE' ? 'FORBIDDEN' : 'BAD_REQUEST', `${method}: ${err.message}`, method, undefined, { cause: err });
  }
  if (err instanceof FaultSpecError) {
    return new ApiError('BAD_REQUEST', `${method}: ${err.message}`, method, undefined, { cause: err });
  }
  if (err instanceof ModelError && (err.code === 'MODEL_NOT_FOUND' || err.code === 'MODEL_INVALID')) {
    return new ApiError('BAD_REQUEST', `${method}: ${err.message}`, method, undefined, { cause: err });
  }
  const detail = err instanceof Error ? err.message : String(err);
  return new ApiError('INTERNAL', `${method}: ${detail}`, method, undefined, { cause: err });
}

function describeIssue(issue: z.core.$ZodIssue, payload: unknown): { field: string | undefined; text: string } {
  const path = issue.path.map((s) => (typeof s === 'symbol' ? String(s) : s));
  const field = path.length ? path.join('.') : undefined;
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((k) => `"${k}"`).join(', ');
    const where = field ? `payload field "${field}"` : 'payload';
    return { field: field ? `${field}.${issue.keys[0]}` : issue.keys[0], text: `${where}: unknown field(s) ${keys}` };
  }
  if (!field) {
    if (issue.code === 'invalid_type') return { field, text: `payload: expected an object, received ${kindOf(payload)}` };
    return { field, text: `payload: ${issue.message}` };
  }
  if (issue.code === 'invalid_type' && valueAt(payload, path) === undefined) {
    return { field, text: `payload field "${field}": missing (expected ${issue.expected})` };
  }
  if (issue.code === 'invalid_type' && issue.expected === 'int' && typeof valueAt(payload, path) === 'number') {
    // A number of the wrong kind (a fraction where an integer is expected): the schema's own words.
    return { field, text: `payload field "${field}": ${issue.message}` };
  }
  if (issue.code === 'invalid_type') {
    return { field, text: `payload field "${field}": expected ${issue.expected}, received ${kindOf(valueAt(payload, path))}` };
  }
  return { field, text: `payload field "${field}": ${issue.message}` };
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let v = value;
  for (const seg of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[seg];
  }
  return v;
}

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function toSummary(e: ReturnType<Store['listExperiments']>[number]): ExperimentSummary {
  const { workflowYaml: _yaml, config, ...summary } = e;
  return { ...summary, ...experimentMetaOf(e.id, config) };
}
