import { ApiError, createRemoteApi, type FlowlabClient } from '../core/api/client.ts';

/**
 * The renderer's API client. Calls go to `host` (by default `window.flowlab`, set by the Electron
 * preload); a failure is rethrown as an `ApiError` with its code rebuilt from the wire message.
 * With no host (the page opened outside the app) every call rejects with `UNAVAILABLE`; the
 * browser host of `flowlab serve` will plug in here later.
 */
export function createApiClient(host: FlowlabClient | undefined = defaultHost()): FlowlabClient {
  return createRemoteApi(async (method, payload) => {
    if (!host) {
      throw new ApiError('UNAVAILABLE', `${method}: the Flowlab API is not available here; open this page in the Flowlab desktop app`, method);
    }
    try {
      return await (host[method] as (payload: unknown) => Promise<unknown>)(payload);
    } catch (err) {
      throw ApiError.fromWire(err);
    }
  });
}

function defaultHost(): FlowlabClient | undefined {
  return typeof window === 'undefined' ? undefined : window.flowlab;
}
