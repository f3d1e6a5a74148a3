/**
 * The allowlist of API methods and the IPC channel each one travels on. This file imports
 * nothing, so the sandboxed preload and the renderer can bundle it without pulling in zod,
 * the store or any Node module.
 */

/**
 * The methods a `LabHost` answers (everything core cannot do by itself: files outside the store,
 * models, background runs): examples, datasets, models, runs, train loops. Every one of them is asynchronous
 * on every host. In Electron, main relays these to the utility process that owns the runner.
 */
export const LAB_METHODS = [
  'listExamples',
  'listDatasets',
  'listModels',
  'addModel',
  'testModel',
  'startRun',
  'cancelRun',
  'resumeRun',
  'activeRuns',
  'startTrainLoop',
  'cancelTrainLoop',
  // Workflow documents in the host's workflows folder (workflowFiles.ts).
  'listWorkflowFiles',
  'readWorkflowFile',
  'saveWorkflowFile',
  // MASS jobs (massJobs.ts): evolve, rank, rsi in the background.
  'startEvolve',
  'startRank',
  'startRsi',
  'cancelMass',
  'distillCard',
  // Model downloads into the host's models folder (downloads.ts).
  'startDownload',
  'cancelDownload',
  // Studies from the window (studyJobs.ts): the shipped plans, start (or dry run), cancel.
  'listStudyPlans',
  'startStudy',
  'cancelStudy',
  // Forks (fork.ts): re-run a stored run from one node with one intervention.
  'forkRun',
  // Jobs of any registered kind (jobs.ts, core/jobs): kinds, running jobs, start, cancel, resume.
  'listJobKinds',
  'listJobs',
  'startJob',
  'cancelJob',
  'resumeJob',
] as const;

/** The workshop methods (answered only by a workshop server: `flowlab workshop`). */
export const WORKSHOP_METHODS = ['getWorkshop', 'joinWorkshop', 'submitPrediction', 'controlWorkshop', 'listAttendees', 'removeAttendee'] as const;

/** Every method of `FlowlabApi`, in a stable order. Hosts expose these and nothing else. */
export const API_METHODS = [
  // Store reads and workflow checks (handlers.ts).
  'listExperiments',
  'getExperiment',
  'listRuns',
  // Runs found by filters and full-text search (the Runs table; see runSearch.ts).
  'searchRuns',
  'getRunTrace',
  'validateWorkflow',
  'appInfo',
  ...LAB_METHODS,
  // Rollout groups and the prior library (store reads; see improve.ts).
  'getRollouts',
  'listCards',
  'getCardEffect',
  // Weight versions and learning curves (store reads; see learning.ts).
  'listWeightVersions',
  'getLearningCurves',
  // Two runs aligned node by node (a store read; see diff.ts).
  'diffRuns',
  // A run's parent link and forks (a store read; see fork.ts).
  'listForks',
  // Studies: plan, cell progress and the table (store reads; see studies.ts).
  'listStudies',
  'getStudy',
  // MASS evolutions: champion timelines and design diffs (store reads; see mass.ts).
  'listEvolutions',
  'getEvolution',
  'getDesignDiff',
  'listOuterLoops',
  'getOuterLoop',
  // The loop from the window: compare two experiments, delete and export hint cards (see loop.ts).
  'compareExperiments',
  'deleteCard',
  'exportCards',
  // Workshop mode: the session, predictions, the presenter's controls (see workshop.ts).
  ...WORKSHOP_METHODS,
] as const;

/** The name of one API method. */
export type ApiMethod = (typeof API_METHODS)[number];

/** The name of one lab method. */
export type LabMethod = (typeof LAB_METHODS)[number];

/** Whether `name` is one of the lab methods. */
export function isLabMethod(name: unknown): name is LabMethod {
  return typeof name === 'string' && (LAB_METHODS as readonly string[]).includes(name);
}

/** Prefix of every Flowlab IPC channel, so they cannot collide with Electron's own. */
export const CHANNEL_PREFIX = 'flowlab:';

/** The IPC channel of a method: `flowlab:<method>`. */
export function channelOf<M extends ApiMethod>(method: M): `${typeof CHANNEL_PREFIX}${M}` {
  return `${CHANNEL_PREFIX}${method}`;
}

/**
 * The one push channel, main -> renderer: `LabEvent`s (see lab.ts) sent with
 * `webContents.send(EVENT_CHANNEL, event)`. Not an invoke channel: nothing is registered for it.
 */
export const EVENT_CHANNEL = `${CHANNEL_PREFIX}event` as const;

/**
 * The desktop app's Open dialog for a workflow file (electron/pickWorkflow.ts): an invoke channel
 * outside the API allowlist (a browser has no such dialog), taking no payload.
 */
export const PICK_WORKFLOW_CHANNEL = `${CHANNEL_PREFIX}pickWorkflowFile` as const;

/** The channel allowlist: exactly one channel per API method, in `API_METHODS` order. */
export const API_CHANNELS = API_METHODS.map(channelOf);

/** Whether `name` is one of the API's methods (an own, allowlisted name; not `toString` or `__proto__`). */
export function isApiMethod(name: unknown): name is ApiMethod {
  return typeof name === 'string' && (API_METHODS as readonly string[]).includes(name);
}
