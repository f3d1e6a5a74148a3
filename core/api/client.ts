/**
 * The browser-safe part of the API, for the preload and the renderer: the channel allowlist,
 * typed errors, the remote client and the contract's types. It imports no Node module, no
 * store and no zod, so a sandboxed preload can bundle it. Hosts import `./index.ts`.
 */
export { API_CHANNELS, API_METHODS, CHANNEL_PREFIX, channelOf, isApiMethod, type ApiMethod } from './channels.ts';
export { ApiError, stripInvokePrefix, type ApiErrorCode } from './errors.ts';
export { createRemoteApi, type Invoke } from './remote.ts';
export type {
  ApiPayload,
  ApiResult,
  AppInfo,
  ExperimentDetail,
  ExperimentSummary,
  FlowlabApi,
  FlowlabClient,
  GetExperimentPayload,
  GetRunTracePayload,
  ListRunsPayload,
  RunTrace,
  ValidateWorkflowPayload,
  ValidateWorkflowResult,
  WorkflowSummary,
} from './contract.ts';
