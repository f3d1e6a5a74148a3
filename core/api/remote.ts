import { API_METHODS, type ApiMethod } from './channels.ts';
import type { FlowlabClient } from './contract.ts';

/** Sends one call to the host: the method name and its (unvalidated) payload. */
export type Invoke = (method: ApiMethod, payload: unknown) => Promise<unknown>;

/**
 * Builds the promise-returning client of the API from a transport, one method per allowlisted
 * name (a client generic over the handler map, contract.ts). The preload passes
 * `ipcRenderer.invoke`; the browser host will pass a `fetch`. The host validates payloads; the
 * client does not (it is the untrusted side). Imports no runtime code but the allowlist.
 */
export function createRemoteApi(invoke: Invoke): FlowlabClient {
  const client: Partial<Record<ApiMethod, (payload?: unknown) => Promise<unknown>>> = {};
  for (const method of API_METHODS) client[method] = (payload?: unknown) => invoke(method, payload);
  return Object.freeze(client) as FlowlabClient;
}
