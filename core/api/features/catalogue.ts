/**
 * The catalogue feature: what the lab has to work with, read by its host from disk: the example
 * workflows, the datasets (with whether their files are present), the GGUF models of the model
 * folder and those added by path, and one short test generation with a model. Lab methods:
 * asynchronous on every host, answered by the `LabHost`.
 */
import * as z from 'zod';
import { defineFeature, labOf, type Awaitable } from '../feature.ts';
import { AbsolutePath, Count, MAX_PROMPT_CHARS, NoPayload } from '../fields.ts';

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
  /** When not available and fetchable: how a user gets it (core/tasks/downloads.ts). */
  get?: DatasetGet;
}

/** How to get a dataset's files: the command, the data folder they go to, bytes, licence and source. */
export interface DatasetGet {
  command: string;
  folder: string;
  bytes: number;
  licence: string;
  source: string;
}

/** The GGUF header fields the model catalogue shows (a subset of `GgufInfo` from models/llama). */
export interface ModelHeader {
  architecture: string;
  name?: string;
  parameters?: number;
  fileType: string;
  contextLength?: number;
  hasChatTemplate: boolean;
}

/** A GGUF file known to the lab: in the model folder, or added by path. */
export interface ModelEntry {
  /** Absolute path of the file. */
  path: string;
  /** Its base name, e.g. `stories260K.gguf`. */
  fileName: string;
  /** File size in bytes (0 when the file is gone). */
  sizeBytes: number;
  /** Where it came from. */
  source: 'folder' | 'added';
  /** Header metadata (read without loading the model); absent with `error` when unreadable. */
  info?: ModelHeader;
  error?: string;
  /** Set when local models cannot run on this machine (the llama.cpp binary is missing or does not load): why, where it was looked for, and the fix. */
  unavailable?: string;
}

export interface TestGeneration {
  /** The completion (greedy, seed 0). */
  text: string;
  /** Tokens, counted by the model's own tokenizer. */
  promptTokens: number;
  completionTokens: number;
  /** Generation wall time in milliseconds (loading the model not included). */
  ms: number;
}

/** `addModel`'s payload: an absolute path to a `.gguf` file. */
export interface AddModelPayload {
  path: string;
}

/** `testModel`'s payload. `maxTokens`: completion tokens, 1..256, default 24. `prompt`: 1..4000 characters. */
export interface TestModelPayload {
  path: string;
  prompt: string;
  maxTokens?: number;
}

/** The catalogue methods (lab methods). Errors as in FlowlabApi (ApiError codes). */
export interface CatalogueApi {
  /** The workflows of `examples/*.yaml`, sorted by file name. */
  listExamples(payload?: Record<string, never>): Promise<ExampleWorkflow[]>;
  /** Every dataset the registry knows, with whether its files are present. */
  listDatasets(payload?: Record<string, never>): Promise<DatasetInfo[]>;
  /** GGUF files of the model folder, then those added by path (header metadata, or `error`). */
  listModels(payload?: Record<string, never>): Promise<ModelEntry[]>;
  /**
   * Adds a GGUF by absolute path (checked: exists, GGUF header readable) and remembers it.
   * Errors: `BAD_REQUEST` naming the file when it is missing or not a valid GGUF.
   */
  addModel(payload: AddModelPayload): Promise<ModelEntry>;
  /** One short greedy generation with a model (maxTokens default 24, at most 256). Errors: `BAD_REQUEST` (bad file). */
  testModel(payload: TestModelPayload): Promise<TestGeneration>;
}

/** What a lab host implements of them. */
export interface CatalogueHost {
  listExamples(): Awaitable<ExampleWorkflow[]>;
  listDatasets(): Awaitable<DatasetInfo[]>;
  listModels(): Awaitable<ModelEntry[]>;
  addModel(payload: AddModelPayload): Awaitable<ModelEntry>;
  testModel(payload: TestModelPayload): Awaitable<TestGeneration>;
}

export const catalogueFeature = defineFeature<CatalogueApi>()({
  name: 'catalogue',
  payloads: {
    listExamples: NoPayload,
    listDatasets: NoPayload,
    listModels: NoPayload,
    addModel: z.strictObject({ path: AbsolutePath }),
    testModel: z.strictObject({
      path: AbsolutePath,
      prompt: z.string().min(1, 'must not be empty').max(MAX_PROMPT_CHARS, `must be at most ${MAX_PROMPT_CHARS} characters`),
      /** Completion tokens; default 24. */
      maxTokens: Count(1, 256).optional(),
    }),
  },
  lab: ['listExamples', 'listDatasets', 'listModels', 'addModel', 'testModel'],
  handlers: (deps: { lab?: CatalogueHost | undefined }) => ({
    listExamples: async () => labOf(deps, 'listExamples').listExamples(),
    listDatasets: async () => labOf(deps, 'listDatasets').listDatasets(),
    listModels: async () => labOf(deps, 'listModels').listModels(),
    addModel: async (payload) => labOf(deps, 'addModel').addModel(payload),
    testModel: async (payload) => labOf(deps, 'testModel').testModel(payload),
  }),
});
