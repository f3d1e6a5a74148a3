/**
 * Globals of the renderer. `window.flowlab` is set by the Electron preload (see
 * electron/preload.ts); it is absent when the page runs anywhere else.
 */
import type { FlowlabClient } from '../core/api/client.ts';

declare global {
  interface Window {
    /** The lab's API, exposed by the preload through contextBridge. */
    flowlab?: FlowlabClient;
  }
}

export {};
