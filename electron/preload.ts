/**
 * Preload script (sandboxed, context-isolated): exposes `window.flowlab`, the lab's API as a
 * promise client built from the channel allowlist, and nothing else (no ipcRenderer, no Node).
 * Imports only `core/api/client.ts`, which carries no Node module, so the bundle is
 * self-contained CommonJS, as sandboxed preloads require.
 */
import { contextBridge, ipcRenderer } from 'electron';
import { channelOf, createRemoteApi, stripInvokePrefix } from '../core/api/client.ts';

const api = createRemoteApi(async (method, payload) => {
  try {
    return await ipcRenderer.invoke(channelOf(method), payload);
  } catch (err) {
    // Electron keeps only the message across IPC; drop its "Error invoking remote method" prefix so
    // the renderer sees the ApiError's wire form (`<message> [<CODE>]`) and can rebuild the code.
    throw new Error(stripInvokePrefix(err instanceof Error ? err.message : String(err)));
  }
}) satisfies NonNullable<Window['flowlab']>;

contextBridge.exposeInMainWorld('flowlab', api);
