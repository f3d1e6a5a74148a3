/**
 * The lab: what a host provides for the lab methods (`LabHost`, composed of the features' host
 * parts) and the events it pushes while work runs (`LabEvent`, checked with `isLabEvent`). The
 * lab methods themselves are the features' (`lab` in each feature definition; `LAB_METHODS` in
 * methods.ts); `createHandlers` delegates them to a `LabHost` after validating. Imports only
 * types, so the preload and the renderer can use `isLabEvent`.
 */
import type { FailureClass, NodeStatus } from '../trace/index.ts';
import { isTrainLoopEvent, type CancelTrainLoopPayload, type StartTrainLoopRequest, type TrainLoopEvent } from './trainLoop.ts';
import { isStoredEvent, type StoredEvent } from './storeEvents.ts';
import { isMassJobEvent, type MassJobEvent, type MassJobHost } from './massJobs.ts';
import { isDownloadEvent, type DownloadEvent, type DownloadHost } from './downloads.ts';
import { isStudyJobEvent, type StudyJobEvent, type StudyJobHost } from './studyJobs.ts';
import type { Awaitable } from './feature.ts';
import type { CardsHost } from './features/cards.ts';
import type { CatalogueHost } from './features/catalogue.ts';
import type { ForkHost } from './features/fork.ts';
import type { JobHost } from './features/jobs.ts';
import type { RunsHost } from './features/runs.ts';
import type { WorkflowsHost } from './features/workflows.ts';
import { isJobEvent } from './jobEvents.ts';
import { isPlaygroundEvent, type PlaygroundEvent, type PlaygroundHost } from './playground.ts';
import type { JobEvent } from '../jobs/kind.ts';

export { isStoredEvent, STORED_AREAS, type StoredArea, type StoredEvent } from './storeEvents.ts';
export { isTrainLoopEvent, type CancelTrainLoopPayload, type StartTrainLoopRequest, type TrainLoopEvent, type TrainRoleMetrics } from './trainLoop.ts';
export type { Awaitable } from './feature.ts';
export type { AddModelPayload, DatasetGet, DatasetInfo, ExampleWorkflow, ModelEntry, ModelHeader, TestGeneration, TestModelPayload } from './features/catalogue.ts';
export type { ActiveRun, CancelRunPayload, ResumeRunPayload, ResumeRunResult, StartRunRequest } from './features/runs.ts';

/**
 * Pushed from the host while experiments run (Electron: the `flowlab:event` IPC channel; browser
 * host: Server-Sent Events on `/api/events`). Ordered per experiment; a train loop's events
 * (`TrainLoopEvent`, trainLoop.ts) carry its `loopId` instead and are ordered per loop; `stored`
 * (`StoredEvent`, storeEvents.ts) says which areas of the store changed, whoever wrote them.
 */
export type LabEvent =
  | { type: 'experiment'; experimentId: string; status: 'running' | 'completed' | 'cancelled' | 'failed'; done: number; total: number; message?: string }
  | { type: 'node'; experimentId: string; runId: string; nodeId: string; attempt: number; phase: 'started' | 'finished'; status?: NodeStatus; failureClass?: FailureClass; simulated?: boolean }
  | { type: 'run'; experimentId: string; runId: string; taskIndex: number; done: number; total: number; status: 'completed' | 'failed' | 'cancelled'; correct: boolean }
  | TrainLoopEvent
  | StoredEvent
  | MassJobEvent
  | DownloadEvent
  | StudyJobEvent
  | JobEvent
  | PlaygroundEvent;

/** The events of experiments (those with an `experimentId` subject): every LabEvent but a train loop's, the store's, a MASS job's, a download's, a study job's and a playground generation's. */
export type ExperimentLabEvent = Exclude<LabEvent, TrainLoopEvent | StoredEvent | MassJobEvent | DownloadEvent | StudyJobEvent | JobEvent | PlaygroundEvent>;

/** Whether `e` is an experiment's event (not a train loop's). */
export function isExperimentLabEvent(e: LabEvent): e is ExperimentLabEvent {
  return e.type === 'experiment' || e.type === 'node' || e.type === 'run';
}

/** Payload of the methods that take none: nothing, or an empty object. */
export type NoPayload = Record<string, never> | undefined;

/** The train loop's methods (lab methods; the job family's API, trainLoop.ts has the types). */
export interface TrainLoopApi {
  /**
   * Starts `flowlab train-loop` in the background with the same options (StartTrainLoopRequest,
   * trainLoop.ts) through the same service; resolves with the loop's id once its models are
   * checked. Progress arrives as `TrainLoopEvent`s (`trainLoop` running ... completed). Errors:
   * `BAD_REQUEST` naming the field (invalid workflow, unknown dataset, split, role or weight
   * version, a role without a model, a missing or invalid model file), `UNAVAILABLE` (dataset
   * files absent, no trainer), `BUSY` (a model file in use).
   */
  startTrainLoop(payload: StartTrainLoopRequest): Promise<{ loopId: string }>;
  /**
   * Stops a train loop after the iteration in flight (the versions written so far stay
   * recorded); resolves once it has stopped. `cancelled: false` when it is not running here.
   */
  cancelTrainLoop(payload: CancelTrainLoopPayload): Promise<{ cancelled: boolean }>;
}

/**
 * What a host provides for the lab methods (implemented in host/ by `createLabHost`, and in
 * Electron main by the relay to the utility process): the host parts of the features. Payloads
 * arrive validated by `createHandlers`. Implementations throw `ApiError` (with method and field)
 * for what the user can fix; anything else is mapped by `toApiError`.
 */
export interface LabHost extends CatalogueHost, RunsHost, WorkflowsHost, CardsHost, ForkHost, JobHost, MassJobHost, DownloadHost, StudyJobHost, PlaygroundHost {
  /** Optional: hosts without it answer `startTrainLoop` / `cancelTrainLoop` with UNAVAILABLE. */
  startTrainLoop?(payload: StartTrainLoopRequest): Awaitable<{ loopId: string }>;
  cancelTrainLoop?(payload: CancelTrainLoopPayload): Awaitable<{ cancelled: boolean }>;
}

/** Client-side subscription to pushed events; returns an unsubscribe function. */
export type Subscribe = (listener: (event: LabEvent) => void) => () => void;

const NODE_STATUSES: readonly string[] = ['ok', 'failed', 'cascade', 'skipped'];
const FAILURE_CLASSES: readonly string[] = ['wiring', 'execution', 'cascade', 'infrastructure'];

/**
 * Whether `value` is a well-formed `LabEvent` (checked field by field, without zod, so the
 * sandboxed preload and the renderer can use it on what arrives over IPC or SSE).
 */
export function isLabEvent(value: unknown): value is LabEvent {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const e = value as Record<string, unknown>;
  if (typeof e['type'] === 'string' && e['type'].startsWith('train')) return isTrainLoopEvent(value);
  if (e['type'] === 'stored') return isStoredEvent(value);
  if (typeof e['type'] === 'string' && e['type'].startsWith('mass')) return isMassJobEvent(value);
  if (typeof e['type'] === 'string' && e['type'].startsWith('download')) return isDownloadEvent(value);
  if (e['type'] === 'studyJob' || e['type'] === 'studyProgress') return isStudyJobEvent(value);
  if (e['type'] === 'job') return isJobEvent(value);
  if (e['type'] === 'generation' || e['type'] === 'generationText') return isPlaygroundEvent(value);
  const str = (k: string) => typeof e[k] === 'string' && (e[k] as string).length <= 400;
  const count = (k: string) => Number.isInteger(e[k]) && (e[k] as number) >= 0;
  const optional = (k: string, ok: (v: unknown) => boolean) => e[k] === undefined || ok(e[k]);
  if (!str('experimentId')) return false;
  switch (e['type']) {
    case 'experiment':
      return (
        ['running', 'completed', 'cancelled', 'failed'].includes(e['status'] as string) &&
        count('done') && count('total') && optional('message', (v) => typeof v === 'string')
      );
    case 'node':
      return (
        str('runId') && str('nodeId') && count('attempt') && (e['phase'] === 'started' || e['phase'] === 'finished') &&
        optional('status', (v) => NODE_STATUSES.includes(v as string)) &&
        optional('failureClass', (v) => FAILURE_CLASSES.includes(v as string)) &&
        optional('simulated', (v) => typeof v === 'boolean')
      );
    case 'run':
      return (
        str('runId') && count('taskIndex') && count('done') && count('total') &&
        ['completed', 'failed', 'cancelled'].includes(e['status'] as string) && typeof e['correct'] === 'boolean'
      );
    default:
      return false;
  }
}
