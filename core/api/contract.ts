/**
 * The ONE typed API that both hosts expose (the Electron preload and the browser host of
 * `flowlab serve`), derived from the features (features/index.ts): `FlowlabApi` is every
 * feature's method interface, `payloadSchemas` every method's zod schema (validated by
 * `createHandlers` before use, since payloads arrive from an untrusted renderer). Results are
 * plain, structured-clone-safe data.
 *
 * Every method throws `ApiError` only: `BAD_REQUEST` for an invalid payload, `NOT_FOUND` for an
 * unknown id, `UNAVAILABLE` when the store is closed, `INTERNAL` otherwise. The store methods
 * answer synchronously; the lab methods (`LAB_METHODS`) return Promises and reject with the same
 * ApiErrors (a bad payload included).
 */
import type * as z from 'zod';
import type { ApiMethod } from './channels.ts';
import type { ApiOf, SchemasOf, UnionToIntersection } from './feature.ts';
import { FEATURES } from './features/index.ts';
import type { Subscribe } from './lab.ts';

type Features = (typeof FEATURES)[number];
type AllMethods = UnionToIntersection<ApiOf<Features>>;
type AllSchemas = UnionToIntersection<SchemasOf<Features>>;

/**
 * The lab's API as the host implements it (see `createHandlers`): every feature's methods.
 * Payload-less methods take an optional `{}`.
 */
export interface FlowlabApi extends AllMethods {}

/** Payload schemas, one per API method (each feature's `payloads`). */
export const payloadSchemas = Object.fromEntries(FEATURES.flatMap((f) => Object.entries(f.payloads))) as AllSchemas;

/** The validated payload type of a method. */
export type ApiPayload<M extends ApiMethod> = z.output<AllSchemas[M]>;

/** The result type of a method. */
export type ApiResult<M extends ApiMethod> = Awaited<ReturnType<FlowlabApi[M]>>;

/**
 * The API as a client sees it across a process boundary: the same methods, each returning a
 * Promise. The preload's `window.flowlab` and the renderer's client have this type.
 */
export type FlowlabClient = {
  [M in ApiMethod]: (...args: Parameters<FlowlabApi[M]>) => Promise<ApiResult<M>>;
};

/**
 * What the Electron preload exposes as `window.flowlab`: the promise client plus `onEvent`, a
 * subscription to pushed `LabEvent`s (checked with `isLabEvent` before delivery).
 */
export type FlowlabDesktopApi = FlowlabClient & {
  onEvent: Subscribe;
  /**
   * The desktop app's file picker for a workflow document (electron/pickWorkflow.ts): the text of
   * the `.yaml` / `.yml` file the user chose, or null when they cancelled. Absent in a browser.
   */
  pickWorkflowFile?: () => Promise<PickedWorkflowFile | null>;
};

/** A workflow file the user picked in the desktop app's Open dialog. */
export interface PickedWorkflowFile {
  /** Its base name (the dialog's folder is not sent to the page). */
  name: string;
  text: string;
}

// Compile-time guard: the method list (methods.ts) and the features name exactly the same methods.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const methodListMatchesFeatures: Same<ApiMethod, keyof FlowlabApi> = true;
void methodListMatchesFeatures;
