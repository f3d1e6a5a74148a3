/**
 * The API's handlers over core, one map for both hosts: each feature's handlers (features/),
 * every payload validated with its feature's zod schema first, every error turned into an
 * `ApiError`. Plain functions, no Electron: the preload's IPC host and the browser host use it alike.
 */
import type { z } from 'zod';
import { errorMessage } from '../errors.ts';
import { FaultSpecError } from '../faults/index.ts';
import { ModelError } from '../model/index.ts';
import { StoreError, type Store } from '../store/index.ts';
import { DatasetError } from '../tasks/index.ts';
import { formatIssue, SpecError, type ToolLookup } from '../workflow/index.ts';
import { WorkshopError } from '../workshop/index.ts';
import type { ApiMethod } from './channels.ts';
import { payloadSchemas, type ApiPayload, type FlowlabApi } from './contract.ts';
import { ApiError } from './errors.ts';
import { FEATURES } from './features/index.ts';
import type { WorkshopHost } from './features/workshop.ts';
import type { LabHost } from './lab.ts';

export { validateWorkflowText } from './features/workflows.ts';

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
 * Builds the lab's API over core from the features (features/index.ts): for each method, its
 * payload validated with zod first, then its feature's handler; throws only `ApiError` (see
 * `FlowlabApi` for codes). The lab methods are asynchronous: a bad payload rejects like any
 * other failure.
 */
export function createHandlers(deps: HandlerDeps): FlowlabApi {
  const api: Partial<Record<ApiMethod, (payload?: unknown) => unknown>> = {};
  for (const feature of FEATURES) {
    const impl: Readonly<Record<string, (payload: never) => unknown>> = feature.handlers(deps);
    const lab: readonly string[] = feature.lab;
    for (const method of Object.keys(feature.payloads) as ApiMethod[]) {
      const run = impl[method]!;
      // Validated inside the try: a bad payload's ApiError passes toApiError unchanged.
      const call = (payload: unknown): unknown => run(validatePayload(method, payload) as never);
      api[method] = lab.includes(method)
        ? async (payload?: unknown) => {
            try {
              return await call(payload);
            } catch (err) {
              throw toApiError(err, method);
            }
          }
        : (payload?: unknown) => {
            try {
              return call(payload);
            } catch (err) {
              throw toApiError(err, method);
            }
          };
    }
  }
  return api as FlowlabApi;
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
  const detail = errorMessage(err);
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
  if (issue.code === 'invalid_type' && (issue.expected === 'int' || issue.expected === 'number') && typeof valueAt(payload, path) === 'number') {
    // A number of the wrong kind (a fraction where an integer is expected, NaN or Infinity): the schema's own words.
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
