/**
 * The browser-safe part of the API, for the preload and the renderer: the channel allowlist,
 * typed errors, the remote client, the event checks and (types only) every feature's payloads
 * and results. Its run-time imports carry no Node module, no store and no zod, so a sandboxed
 * preload can bundle it. Hosts import `./index.ts`.
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
  TOKEN_HEADER,
  WORKSHOP_METHODS,
  type ApiMethod,
  type LabMethod,
} from './channels.ts';
export { ApiError, stripInvokePrefix, type ApiErrorCode, type ApiErrorData } from './errors.ts';
/** The message of a thrown value (core/errors.ts, which imports nothing, so it stays browser-safe). */
export { errorMessage } from '../errors.ts';
export { createRemoteApi, type Invoke } from './remote.ts';
export { isExperimentLabEvent, isLabEvent, isTrainLoopEvent } from './lab.ts';
export { TRAIN_LOOP_DEFAULTS } from './trainLoop.ts';
export { isStoredEvent, STORED_AREAS, type StoredArea, type StoredEvent } from './storeEvents.ts';
export { WORKFLOW_FILE_NAME } from './workflowFileName.ts';
export type { ReadWorkflowFilePayload, SaveWorkflowFilePayload, ValidateWorkflowPayload, ValidateWorkflowResult, WorkflowFileInfo, WorkflowFileList, WorkflowFileText, WorkflowsApi, WorkflowSummary } from './features/workflows.ts';
export { isStudyJobEvent, type CancelStudyPayload, type StartStudyRequest, type StudyJobEstimate, type StudyJobEvent, type StudyJobStatus, type StudyPlanFile } from './studyJobs.ts';
export { isMassJobEvent, MASS_JOB_KINDS, type CancelMassPayload, type MassJobEvent, type MassJobKind, type StartEvolveRequest, type StartRankRequest, type StartRsiRequest } from './massJobs.ts';
export { isJobEvent } from './jobEvents.ts';
export { isPlaygroundEvent, MAX_PLAYGROUND_SCHEMA_CHARS, MAX_RENDERED_CHARS, MAX_PLAYGROUND_TEXT, MAX_PLAYGROUND_TOKENS, PLAYGROUND_DEFAULTS, tokensPerSecond, type CancelGenerationPayload, type GenerationStatus, type PlaygroundApi, type PlaygroundEvent, type PlaygroundHost, type PromptForm, type StartGenerationRequest } from './playground.ts';
export type { JobEvent, JobHost, JobKindInfo, JobRef, JobsApi, RunningJobView, StartJobRequest } from './features/jobs.ts';
export { downloadFileNameProblem, downloadSourceProblem, isDownloadEvent, MAX_DOWNLOAD_FILE_NAME, type CancelDownloadPayload, type DownloadApiAdditions, type DownloadEvent, type DownloadFailure, type DownloadHost, type StartDownloadRequest } from './downloads.ts';
export type { Awaitable, ExperimentLabEvent, LabEvent, LabHost, Subscribe, TrainLoopApi, TrainLoopEvent, TrainRoleMetrics, CancelTrainLoopPayload, StartTrainLoopRequest } from './lab.ts';
export type { AddModelPayload, CatalogueApi, CatalogueHost, DatasetGet, DatasetInfo, ExampleWorkflow, ModelEntry, ModelHeader, TestGeneration, TestModelPayload } from './features/catalogue.ts';
export type { ActiveRun, CancelRunPayload, ResumeRunPayload, ResumeRunResult, RunsApi, RunsHost, StartRunRequest } from './features/runs.ts';
export type { CompareExperimentsPayload, CompareReport, CompareSide, CompareView, ExperimentDetail, ExperimentGroupRef, ExperimentMeta, ExperimentsApi, ExperimentSummary, GetExperimentPayload, ListRunsPayload, PairedDelta } from './features/experiments.ts';
export type { GetRolloutsPayload, RolloutEntry, RolloutGroup, RolloutRoleStats, RolloutRoleValue, RolloutsApi, RolloutsView } from './features/rollouts.ts';
export type { CardEffect, CardEffectSide, CardEffectView, CardsApi, CardsDocument, CardsHost, CardTrust, DeleteCardPayload, DistillCardRequest, ExportCardsPayload, GetCardEffectPayload, LibraryCard, ListCardsPayload } from './features/cards.ts';
export type { AttendeeView, JoinedWorkshop, ControlWorkshopPayload, SubmitPredictionPayload, WorkshopApi, WorkshopHost, Choice, PredictionScore, RevealChart, RevealFact, StepResult, WorkshopStepSummary, WorkshopStepView, WorkshopView } from './features/workshop.ts';
export type { BlameEvalView, BlameRate, BlameReport, EvaluationsApi, GetBlameEvalPayload, RoleTrendPoint, RoleTrends, TrendExperiment } from './features/evaluations.ts';
export type { RunHit, RunQuery, RunSearchApi, RunSearchResult, RunSortKey, SearchField } from './features/runSearch.ts';
export type { Annotation, AnnotationQuery, AnnotationsApi, NewAnnotation } from './features/annotations.ts';
export type { DiffRunsPayload, RunDiffApi, RunDiffSide, RunDiffView } from './features/runDiff.ts';
export type { ForkApi, ForkHost, ForkRunRequest, ForkRunResult, ForkSummary, RunForks } from './features/fork.ts';
export type { StudiesApi, StudyCellView, StudyDelta, StudyDetail, StudySummaryView, StudyTable, StudyTableEntry, StudyUnitView } from './features/studies.ts';
export type { AgentChange, DesignDiff, EvolutionSummary, EvolutionTimeline, GetDesignDiffPayload, GetEvolutionPayload, GetOuterLoopPayload, MassApi, OuterCut, OuterCycleArm, OuterLoopSummary, OuterLoopView, OuterQuarantine, OuterRunRow, OuterTaskRanking, TaskTimeline, TimelineDesign, TimelineIteration, TimelineVerdict } from './features/mass.ts';
export type { AnswerGuard, JudgeAudit } from '../guards/index.ts';
export type { CurvePoint, HeldoutSide, LearningApi, LearningCurves, LearningPayload, LoopCurve, RoleLearning, RungMeans, WeightVersionView } from './features/learning.ts';
export type { AppApi, AppInfo } from './features/app.ts';
export type { GetRunTracePayload, NodeOrigin, RunDesign, RunDesignIssue, RunGraph, RunGraphEdge, RunGraphNode, RunTrace, RunTraceApi } from './features/runTrace.ts';
export type { ApiPayload, ApiResult, FlowlabApi, FlowlabClient, FlowlabDesktopApi, PickedWorkflowFile } from './contract.ts';
/**
 * The data types the views show, re-exported (types only) so the renderer reaches core through
 * this one file: run results (core/results), trace events (core/trace), credit roots
 * (core/blame/credit), reward ladders (core/reward), workflow issues and weights (core/workflow),
 * fault kinds (core/faults) and experiment status (core/store).
 */
export type { RunRecord } from '../results/index.ts';
export type { FailureClass, ModelCallRecord, NodeEvent, NodeStatus } from '../trace/index.ts';
export type { AlignedNode, DiffAspect, Difference, Divergence, RunDiff } from '../trace/index.ts';
export type { RootFailure } from '../blame/credit/types.ts';
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
