/**
 * The browser-safe part of the API, for the preload and the renderer: the channel allowlist,
 * typed errors, the remote client, the event check and the contract's types. It imports no Node
 * module, no store and no zod, so a sandboxed preload can bundle it. Hosts import `./index.ts`.
 */
export {
  API_CHANNELS,
  API_METHODS,
  CHANNEL_PREFIX,
  channelOf,
  EVENT_CHANNEL,
  isApiMethod,
  isLabMethod,
  LAB_METHODS,
  type ApiMethod,
  type LabMethod,
} from './channels.ts';
export { ApiError, stripInvokePrefix, type ApiErrorCode, type ApiErrorData } from './errors.ts';
export { createRemoteApi, type Invoke } from './remote.ts';
export { isLabEvent } from './lab.ts';
export type {
  ActiveRun,
  AddModelPayload,
  CancelRunPayload,
  DatasetInfo,
  ExampleWorkflow,
  LabApiAdditions,
  LabEvent,
  LabHost,
  ModelEntry,
  ResumeRunPayload,
  StartRunRequest,
  Subscribe,
  TestGeneration,
  TestModelPayload,
} from './lab.ts';
export type {
  CardEffect,
  CardEffectSide,
  CardEffectView,
  GetCardEffectPayload,
  GetRolloutsPayload,
  ImproveApiAdditions,
  LibraryCard,
  ListCardsPayload,
  RolloutEntry,
  RolloutGroup,
  RolloutRoleStats,
  RolloutRoleValue,
  RolloutsView,
} from './improve.ts';
export type {
  CurvePoint,
  HeldoutSide,
  LearningApiAdditions,
  LearningCurves,
  LearningPayload,
  LoopCurve,
  RoleLearning,
  RungMeans,
  WeightVersionView,
} from './learning.ts';
export type {
  ApiPayload,
  ApiResult,
  AppInfo,
  ExperimentDetail,
  ExperimentSummary,
  FlowlabApi,
  FlowlabClient,
  FlowlabDesktopApi,
  GetExperimentPayload,
  GetRunTracePayload,
  ListRunsPayload,
  RunTrace,
  ValidateWorkflowPayload,
  ValidateWorkflowResult,
  WorkflowSummary,
} from './contract.ts';
