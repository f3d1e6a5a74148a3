/**
 * The allowlist of API methods, the IPC channel each one travels on, and the HTTP host's token header. The method names come
 * from methods.ts (derived from the features); like it, this file imports no zod, store or Node
 * module, so the sandboxed preload and the renderer can bundle it.
 */
import { API_METHODS, LAB_METHODS } from './methods.ts';

export { API_METHODS, LAB_METHODS, WORKSHOP_METHODS } from './methods.ts';

/** The name of one API method. */
export type ApiMethod = (typeof API_METHODS)[number];

/** The name of one lab method. */
export type LabMethod = (typeof LAB_METHODS)[number];

/** Whether `name` is one of the lab methods. */
export function isLabMethod(name: unknown): name is LabMethod {
  return typeof name === 'string' && (LAB_METHODS as readonly string[]).includes(name);
}

/**
 * The HTTP header carrying the session token of `flowlab serve` (host/server.ts checks it, the
 * renderer's HTTP transport in renderer/api.ts sends it; a page may give it as `?token=` instead).
 */
export const TOKEN_HEADER = 'x-flowlab-token';

/** Prefix of every Flowlab IPC channel, so they cannot collide with Electron's own. */
export const CHANNEL_PREFIX = 'flowlab:';

/** The IPC channel of a method: `flowlab:<method>`. */
export function channelOf<M extends ApiMethod>(method: M): `${typeof CHANNEL_PREFIX}${M}` {
  return `${CHANNEL_PREFIX}${method}`;
}

/**
 * The one push channel, main -> renderer: `LabEvent`s (see lab.ts) sent with
 * `webContents.send(EVENT_CHANNEL, event)`. Not an invoke channel: nothing is registered for it.
 */
export const EVENT_CHANNEL = `${CHANNEL_PREFIX}event` as const;

/**
 * The desktop app's Open dialog for a workflow file (electron/pickWorkflow.ts): an invoke channel
 * outside the API allowlist (a browser has no such dialog), taking no payload.
 */
export const PICK_WORKFLOW_CHANNEL = `${CHANNEL_PREFIX}pickWorkflowFile` as const;

/** The channel allowlist: exactly one channel per API method, in `API_METHODS` order. */
export const API_CHANNELS = API_METHODS.map(channelOf);

/** Whether `name` is one of the API's methods (an own, allowlisted name; not `toString` or `__proto__`). */
export function isApiMethod(name: unknown): name is ApiMethod {
  return typeof name === 'string' && (API_METHODS as readonly string[]).includes(name);
}
