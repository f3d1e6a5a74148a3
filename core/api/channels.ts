/**
 * The allowlist of API methods and the IPC channel each one travels on. This file imports
 * nothing, so the sandboxed preload and the renderer can bundle it without pulling in zod,
 * the store or any Node module.
 */

/** Every method of `FlowlabApi`, in a stable order. Hosts expose these and nothing else. */
export const API_METHODS = [
  'listExperiments',
  'getExperiment',
  'listRuns',
  'getRunTrace',
  'validateWorkflow',
  'appInfo',
] as const;

/** The name of one API method. */
export type ApiMethod = (typeof API_METHODS)[number];

/** Prefix of every Flowlab IPC channel, so they cannot collide with Electron's own. */
export const CHANNEL_PREFIX = 'flowlab:';

/** The IPC channel of a method: `flowlab:<method>`. */
export function channelOf<M extends ApiMethod>(method: M): `${typeof CHANNEL_PREFIX}${M}` {
  return `${CHANNEL_PREFIX}${method}`;
}

/** The channel allowlist: exactly one channel per API method, in `API_METHODS` order. */
export const API_CHANNELS = API_METHODS.map(channelOf);

/** Whether `name` is one of the API's methods (an own, allowlisted name; not `toString` or `__proto__`). */
export function isApiMethod(name: unknown): name is ApiMethod {
  return typeof name === 'string' && (API_METHODS as readonly string[]).includes(name);
}
