/**
 * What the preload exposes as `window.flowlab`, built over the part of `ipcRenderer` it uses (a
 * parameter, so tests pass a fake). Imports only `core/api/client.ts`: no Node module, no zod,
 * so the sandboxed preload bundles it into one CommonJS file.
 */
import { channelOf, createRemoteApi, errorMessage, EVENT_CHANNEL, isLabEvent, PICK_WORKFLOW_CHANNEL, stripInvokePrefix, type FlowlabDesktopApi, type LabEvent, type PickedWorkflowFile } from '../core/api/client.ts';

/** The part of Electron's `ipcRenderer` the desktop API uses. */
export interface IpcRendererLike {
  invoke(channel: string, ...args: unknown[]): Promise<unknown>;
  on(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
  removeListener(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
}

/**
 * The API as a promise client over the allowlisted invoke channels, plus `onEvent(listener)`
 * over the `flowlab:event` push channel. Every pushed value is checked with `isLabEvent`; one
 * that is malformed is dropped. `onEvent` returns the function that removes its listener.
 * A rejected call's Error carries the ApiError wire form (`<message> [<CODE>]`) without
 * Electron's "Error invoking remote method" prefix.
 */
export function createDesktopApi(ipc: IpcRendererLike): FlowlabDesktopApi {
  const api = createRemoteApi(async (method, payload) => {
    try {
      return await ipc.invoke(channelOf(method), payload);
    } catch (err) {
      // Electron keeps only the message across IPC; drop its "Error invoking remote method" prefix so
      // the renderer sees the ApiError's wire form (`<message> [<CODE>]`) and can rebuild the code.
      throw new Error(stripInvokePrefix(errorMessage(err)));
    }
  });
  const onEvent = (listener: (event: LabEvent) => void): (() => void) => {
    if (typeof listener !== 'function') throw new TypeError('onEvent takes a listener function');
    const handler = (_event: unknown, data: unknown) => {
      if (isLabEvent(data)) listener(data);
    };
    ipc.on(EVENT_CHANNEL, handler);
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      ipc.removeListener(EVENT_CHANNEL, handler);
    };
  };
  return Object.freeze({ ...api, onEvent });
}

/**
 * The desktop app's Open dialog for a workflow file (`window.flowlab.pickWorkflowFile`): invokes
 * `flowlab:pickWorkflowFile` with no payload; resolves with the picked file's name and text, or
 * null when the user cancelled (electron/pickWorkflow.ts answers). A failure rejects with the
 * ApiError wire form, Electron's prefix dropped.
 */
export function createWorkflowPicker(ipc: IpcRendererLike): () => Promise<PickedWorkflowFile | null> {
  return async () => {
    try {
      const picked = await ipc.invoke(PICK_WORKFLOW_CHANNEL);
      if (picked === null) return null;
      const p = picked as Partial<PickedWorkflowFile> | undefined;
      if (!p || typeof p.name !== 'string' || typeof p.text !== 'string') throw new Error('pickWorkflowFile: the app answered something that is not a file [INTERNAL]');
      return { name: p.name, text: p.text };
    } catch (err) {
      throw new Error(stripInvokePrefix(errorMessage(err)));
    }
  };
}
