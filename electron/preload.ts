/**
 * Preload script (sandboxed, context-isolated): exposes `window.flowlab`, the lab's API as a
 * promise client built from the channel allowlist plus `onEvent` for pushed LabEvents, and
 * nothing else (no ipcRenderer, no Node). Imports only code that carries no Node module, so the
 * bundle is self-contained CommonJS, as sandboxed preloads require.
 */
import { contextBridge, ipcRenderer } from 'electron';
import { createDesktopApi, createWorkflowPicker } from './desktopApi.ts';

contextBridge.exposeInMainWorld('flowlab', { ...createDesktopApi(ipcRenderer), pickWorkflowFile: createWorkflowPicker(ipcRenderer) } satisfies NonNullable<Window['flowlab']>);
