/**
 * Issue 4 additions to the lab's API: the contract the host side (core/api handlers, host/,
 * `flowlab serve`, Electron main + utility process) and the renderer both code against.
 * Plain, structured-clone-safe data. The host side folds these methods into contract.ts,
 * channels.ts (allowlist) and handlers.ts with zod payload schemas.
 */
import type { FailureClass, NodeStatus } from '../trace/index.ts';

/** A workflow shipped in examples/ (read-only; the editor opens a copy). */
export interface ExampleWorkflow {
  /** e.g. `examples/gsm8k-team.yaml` */
  file: string;
  name: string;
  text: string;
}

export interface DatasetInfo {
  name: string;
  splits: string[];
  describe: string;
  /** False when its files are not found (the message says where it looked). */
  available: boolean;
  message?: string;
}

/** A GGUF file known to the lab: in the model folder, or added by path. */
export interface ModelEntry {
  path: string;
  fileName: string;
  sizeBytes: number;
  /** Where it came from. */
  source: 'folder' | 'added';
  /** Header metadata (read without loading the model); absent with `error` when unreadable. */
  info?: {
    architecture: string;
    name?: string;
    parameters?: number;
    fileType: string;
    contextLength?: number;
    hasChatTemplate: boolean;
  };
  error?: string;
}

/** What the user picked in the Run view. Models: `default` and/or per-role GGUF paths. */
export interface StartRunRequest {
  /** The workflow document (YAML) as edited; validated before anything starts. */
  workflowText: string;
  dataset: string;
  split: string;
  limit: number;
  offset?: number;
  seed: number;
  models: { default?: string; roles?: Record<string, string> };
  /** SIMULATED faults, `role=kind@rate` as in `flowlab blame-eval`; the experiment is marked simulated. */
  inject?: string[];
  threads?: number;
}

export interface ActiveRun {
  experimentId: string;
  done: number;
  total: number;
  startedAt: number;
}

export interface TestGeneration {
  text: string;
  promptTokens: number;
  completionTokens: number;
  ms: number;
}

/**
 * Pushed from the host while experiments run (Electron: the `flowlab:event` IPC channel; browser
 * host: Server-Sent Events on `/api/events`). Ordered per experiment.
 */
export type LabEvent =
  | { type: 'experiment'; experimentId: string; status: 'running' | 'completed' | 'cancelled' | 'failed'; done: number; total: number; message?: string }
  | { type: 'node'; experimentId: string; runId: string; nodeId: string; attempt: number; phase: 'started' | 'finished'; status?: NodeStatus; failureClass?: FailureClass; simulated?: boolean }
  | { type: 'run'; experimentId: string; runId: string; taskIndex: number; done: number; total: number; status: 'completed' | 'failed' | 'cancelled'; correct: boolean };

/** The new API methods (payload -> result). Errors as in FlowlabApi (ApiError codes). */
export interface LabApiAdditions {
  listExamples(): ExampleWorkflow[];
  listDatasets(): DatasetInfo[];
  listModels(): ModelEntry[];
  /** Adds a GGUF by absolute path (checked: exists, GGUF header readable). */
  addModel(payload: { path: string }): ModelEntry;
  /** One short generation with a model (maxTokens default 24, at most 256). */
  testModel(payload: { path: string; prompt: string; maxTokens?: number }): Promise<TestGeneration>;
  /** Validates, creates the experiment and starts it in the background. */
  startRun(payload: StartRunRequest): Promise<{ experimentId: string }>;
  cancelRun(payload: { experimentId: string }): { cancelled: boolean };
  activeRuns(): ActiveRun[];
}

/** Client-side subscription to pushed events; returns an unsubscribe function. */
export type Subscribe = (listener: (event: LabEvent) => void) => () => void;
