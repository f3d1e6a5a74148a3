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
  PICK_WORKFLOW_CHANNEL,
  WORKSHOP_METHODS,
  type ApiMethod,
  type LabMethod,
} from './channels.ts';
export { ApiError, stripInvokePrefix, type ApiErrorCode, type ApiErrorData } from './errors.ts';
export { createRemoteApi, type Invoke } from './remote.ts';
export { isExperimentLabEvent, isLabEvent, isTrainLoopEvent } from './lab.ts';
export { isStoredEvent, STORED_AREAS, type StoredArea, type StoredEvent } from './storeEvents.ts';
export { WORKFLOW_FILE_NAME, type ReadWorkflowFilePayload, type SaveWorkflowFilePayload, type WorkflowFileInfo, type WorkflowFileList, type WorkflowFileText, type WorkflowFilesApiAdditions } from './workflowFiles.ts';
export { isStudyJobEvent, type CancelStudyPayload, type StartStudyRequest, type StudyJobEstimate, type StudyJobEvent, type StudyJobStatus, type StudyPlanFile } from './studyJobs.ts';
export { isMassJobEvent, MASS_JOB_KINDS, type CancelMassPayload, type MassJobEvent, type MassJobKind, type StartEvolveRequest, type StartRankRequest, type StartRsiRequest } from './massJobs.ts';
export { downloadFileNameProblem, downloadSourceProblem, isDownloadEvent, MAX_DOWNLOAD_FILE_NAME, type CancelDownloadPayload, type DownloadApiAdditions, type DownloadEvent, type DownloadFailure, type DownloadHost, type StartDownloadRequest } from './downloads.ts';
export type {
  ActiveRun,
  AddModelPayload,
  CancelRunPayload,
  CancelTrainLoopPayload,
  DatasetInfo,
  ExampleWorkflow,
  ExperimentLabEvent,
  LabApiAdditions,
  LabEvent,
  LabHost,
  ModelEntry,
  ModelHeader,
  ResumeRunPayload,
  StartRunRequest,
  StartTrainLoopRequest,
  Subscribe,
  TestGeneration,
  TestModelPayload,
  TrainLoopEvent,
  TrainRoleMetrics,
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
export type { AttendeeView, JoinedWorkshop, ControlWorkshopPayload, SubmitPredictionPayload, WorkshopApiAdditions, WorkshopHost, Choice, PredictionScore, RevealChart, RevealFact, StepResult, WorkshopStepSummary, WorkshopStepView, WorkshopView } from './workshop.ts';
export type { RunHit, RunQuery, RunSearchResult, RunSortKey, SearchField } from './runSearch.ts';
export type { DiffApiAdditions, DiffRunsPayload, RunDiffSide, RunDiffView } from './diff.ts';
export type { ForkApiAdditions, ForkHost, ForkRunRequest, ForkRunResult, ForkSummary, RunForks } from './fork.ts';
export type { StudiesApiAdditions, StudyCellView, StudyDelta, StudyDetail, StudySummaryView, StudyTable, StudyTableEntry, StudyUnitView } from './studies.ts';
export type { AgentChange, DesignDiff, EvolutionSummary, EvolutionTimeline, GetDesignDiffPayload, GetEvolutionPayload, GetOuterLoopPayload, MassApiAdditions, OuterCut, OuterCycleArm, OuterLoopSummary, OuterLoopView, OuterQuarantine, OuterRunRow, OuterTaskRanking, TaskTimeline, TimelineDesign, TimelineIteration, TimelineVerdict } from './mass.ts';
export type { AnswerGuard, JudgeAudit } from '../guards/index.ts';
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
  PickedWorkflowFile,
  GetExperimentPayload,
  GetRunTracePayload,
  ListRunsPayload,
  NodeOrigin,
  RunDesign,
  RunDesignIssue,
  RunGraph,
  RunGraphEdge,
  RunGraphNode,
  RunTrace,
  ValidateWorkflowPayload,
  ValidateWorkflowResult,
  WorkflowSummary,
} from './contract.ts';
/**
 * The data types the views show, re-exported (types only) so the renderer reaches core through
 * this one file: run results (core/results), trace events (core/trace), credit roots
 * (core/credit), reward ladders (core/reward), workflow issues and weights (core/workflow),
 * fault kinds (core/faults) and experiment status (core/store).
 */
export type { RunRecord } from '../results/index.ts';
export type { FailureClass, ModelCallRecord, NodeEvent, NodeStatus } from '../trace/index.ts';
export type { AlignedNode, DiffAspect, Difference, Divergence, RunDiff } from '../trace/index.ts';
export type { RootFailure } from '../credit/types.ts';
export type { LadderScores, RoleLadder, Rung } from '../reward/ladder.ts';
/** The ladder's rungs in order (a value: the views draw one segment per rung). */
export { RUNGS } from '../reward/ladder.ts';
export { answerGuard, constantFlag } from '../guards/answers.ts';
export { knownLabelClassOf } from '../guards/labelClass.ts';
export { DIFF_ASPECT_LABEL, differsText } from '../trace/diff.ts';
export type { LadderWeights } from '../workflow/graph.ts';
export type { SpecIssue } from '../workflow/errors.ts';
export type { FaultKind } from '../faults/inject.ts';
export type { DesignFaultKind } from '../faults/inject.ts';
export type { ExperimentStatus } from '../store/types.ts';
