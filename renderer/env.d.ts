/**
 * Globals of the renderer. `window.flowlab` is set by the Electron preload (see
 * electron/preload.ts and electron/desktopApi.ts); it is absent when the page runs anywhere else
 * (then renderer/api.ts talks HTTP + SSE to `flowlab serve`).
 */
import type { FlowlabDesktopApi } from '../core/api/client.ts';

declare global {
  interface Window {
    /** The lab's API and pushed events, exposed by the preload through contextBridge. */
    flowlab?: FlowlabDesktopApi;
  }
}

export {};
