/**
 * The ONE typed API that both hosts expose: the Electron preload and, later, the
 * browser host of `flowlab serve`. Each method has a zod schema for its payload (validated by
 * `createHandlers` before use, since payloads arrive from an untrusted renderer) and a result
 * type. Results are plain, structured-clone-safe data.
 */
import * as z from 'zod';
import type { ExperimentSummary as StoreExperimentSummary } from '../store/index.ts';
import type { NodeEvent } from '../trace/index.ts';
import type { RunRecord } from '../results/index.ts';
import type { EdgeType, NodeKind, SpecIssue } from '../workflow/index.ts';
import type { ApiMethod } from './channels.ts';
import type { DiffApiAdditions } from './diff.ts';
import type { ForkApiAdditions } from './fork.ts';
import type { ImproveApiAdditions } from './improve.ts';
import type { LabApiAdditions, Subscribe } from './lab.ts';
import type { LearningApiAdditions } from './learning.ts';
import type { StudiesApiAdditions } from './studies.ts';
import type { MassApiAdditions } from './mass.ts';
import { MAX_WORKFLOW_FILE_NAME, WORKFLOW_FILE_NAME, type WorkflowFilesApiAdditions } from './workflowFiles.ts';
import type { MassJobApiAdditions } from './massJobs.ts';
import { downloadFileNameProblem, downloadSourceProblem, type DownloadApiAdditions } from './downloads.ts';
import type { StudyJobApiAdditions } from './studyJobs.ts';
import type { ExperimentMeta, LoopApiAdditions } from './loop.ts';
import type { WorkshopApiAdditions } from './workshop.ts';
import { searchRunsSchema, type RunSearchApiAdditions } from './runSearch.ts';

/** Longest id accepted in a payload. */
export const MAX_ID_LENGTH = 200;
/** Largest workflow document `validateWorkflow` accepts, in characters (1 MiB). */
export const MAX_WORKFLOW_CHARS = 1 << 20;

const Id = z.string().min(1, 'must not be empty').max(MAX_ID_LENGTH, `must be at most ${MAX_ID_LENGTH} characters`);
/** Methods without a payload accept `undefined` or `{}` (nothing else). */
const NoPayload = z.strictObject({}).optional();

/** Longest file path accepted in a payload, in characters. */
export const MAX_PATH_LENGTH = 4096;
/** Longest `testModel` prompt, in characters. */
export const MAX_PROMPT_CHARS = 4000;
/** Most tasks one `startRun` may plan. */
export const MAX_RUN_LIMIT = 10_000;
/** Most `inject` fault specs in one `startRun`. */
export const MAX_INJECT = 32;
/** Most hint cards one `startRun` may name. */
export const MAX_CARDS = 1000;
/** Most per-role model choices in one `startRun`. */
export const MAX_ROLE_MODELS = 64;

/**
 * An absolute file path: POSIX (`/x`), Windows drive (`C:\x`, `C:/x`) or UNC (`\\server\x`); no
 * NUL byte. Relative paths are refused: the host's working directory means nothing to a user.
 */
const AbsolutePath = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_PATH_LENGTH, `must be at most ${MAX_PATH_LENGTH} characters`)
  .refine((p) => !p.includes('\0'), 'must not contain a NUL character')
  .refine((p) => /^(\/|[A-Za-z]:[\\/]|\\\\)/.test(p), 'must be an absolute path');
/** A short name: a dataset, split or role. */
const Name = z.string().min(1, 'must not be empty').max(100, 'must be at most 100 characters').refine((n) => !n.includes('\0'), 'must not contain a NUL character (U+0000)');
const Count = (min: number, max: number) =>
  z.int(`must be an integer from ${min} to ${max}`).min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);

/** A bare workflow file name in the host's workflows folder (workflowFiles.ts), never a path. */
function WorkflowFileName() {
  return z
    .string()
    .min(1, 'must not be empty')
    .max(MAX_WORKFLOW_FILE_NAME, `must be at most ${MAX_WORKFLOW_FILE_NAME} characters`)
    .refine((n) => !/[\\/]/.test(n), 'must be a file name, not a path (no / or \\)')
    .refine((n) => WORKFLOW_FILE_NAME.test(n), 'must end in .yaml or .yml and use only letters, digits, spaces, _, - and . (no ..), starting with a letter, digit or _');
}
/** MASS jobs (massJobs.ts): the options of `flowlab evolve`, `rank`, `rsi`; ranges as the CLI's. */
const LoopId = z.string().regex(/^[A-Za-z0-9_.-]{1,200}$/, 'must use letters, digits, _ . - (at most 200)');
const Share = (lowOpen: boolean) => (lowOpen ? z.number().gt(0, 'must be greater than 0') : z.number().min(0, 'must be at least 0')).max(1, 'must be at most 1');
const rankFields = {
  dataset: Name,
  model: AbsolutePath,
  tasks: Count(1, 1000).optional(),
  runs: Count(2, 200).optional(),
  neighbours: Count(1, 50).optional(),
  btIterations: Count(1, 100_000).optional(),
  topK: Count(1, 200).optional(),
  validation: Count(0, 200).optional(),
  verifierMin: Share(false).optional(),
  temperature: z.number().gt(0, 'must be greater than 0').max(5, 'must be at most 5').optional(),
  champions: Id.optional(),
  simulateTamperer: z.enum(['expectation', 'environment']).optional(),
  tamperShare: Share(true).optional(),
  maxQuarantined: Share(false).optional(),
  minAgreement: Share(false).optional(),
  seed: Count(0, 0x7fffffff).optional(),
  loopId: LoopId.optional(),
  threads: Count(1, 256).optional(),
  contextSize: Count(64, 131_072).optional(),
};
const massJobSchemas = {
  startEvolve: z.strictObject({
    dataset: Name, model: AbsolutePath, split: Name.optional(), limit: Count(1, 100).optional(), offset: Count(0, MAX_RUN_LIMIT).optional(),
    iterations: Count(1, 100).optional(), rule: z.enum(['baseline', 'direct']).optional(), seed: Count(0, 0x7fffffff).optional(), id: LoopId.optional(),
    threads: Count(1, 256).optional(), contextSize: Count(256, 131_072).optional(),
  }),
  startRank: z.strictObject(rankFields),
  startRsi: z.strictObject({
    ...rankFields, cycles: Count(1, 100).optional(), heldout: Count(1, MAX_RUN_LIMIT).optional(), heldoutSamples: Count(1, 64).optional(),
    heldoutTemperature: z.number().min(0, 'must be at least 0').max(5, 'must be at most 5').optional(), sftPasses: Count(1, 100).optional(),
    sftLr: z.number().gt(0, 'must be greater than 0').lt(1, 'must be less than 1').optional(), sftBatch: Count(1, 4096).optional(),
    arms: z.array(z.enum(['self', 'verifier'])).min(1, 'must name at least one arm').max(2, 'must name at most 2 arms').optional(),
  }),
  cancelMass: z.strictObject({ jobId: Id }),
};
/** Model downloads (downloads.ts): the source's and file name's form; where the source points is the host's check. */
const downloadSchemas = {
  startDownload: z.strictObject({
    source: z.string().min(1, 'must not be empty').max(MAX_PATH_LENGTH, `must be at most ${MAX_PATH_LENGTH} characters`).superRefine((v, ctx) => {
      const problem = downloadSourceProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
    sha256: z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex digits').optional(),
    sizeBytes: z.number().int('must be an integer').min(1, 'must be at least 1').max(Number.MAX_SAFE_INTEGER, 'is too large').optional(),
    fileName: z.string().superRefine((v, ctx) => {
      const problem = downloadFileNameProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }).optional(),
  }),
  cancelDownload: z.strictObject({ downloadId: Id }),
};

/** Study jobs (studyJobs.ts): the options of `flowlab study`; ranges as the CLI's; exactly one of planName and planText. */
const MAX_STUDY_PLAN_CHARS = 200_000;
const studyJobSchemas = {
  listStudyPlans: NoPayload,
  startStudy: z.strictObject({
    planName: z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}\.ya?ml$/, 'must be a plan file name ending in .yaml or .yml (letters, digits, _ . -), not a path').refine((n) => !n.includes('..'), 'must not contain ..').optional(),
    planText: z.string().min(1, 'must not be empty').max(MAX_STUDY_PLAN_CHARS, `must be at most ${MAX_STUDY_PLAN_CHARS} characters`).optional(),
    dryRun: z.boolean().optional(),
    model: AbsolutePath.optional(),
    threads: Count(1, 256).optional(),
    budgetTokens: Count(1, Number.MAX_SAFE_INTEGER).optional(),
    budgetMinutes: z.number().gt(0, 'must be greater than 0').max(525_600, 'must be at most 525600').optional(),
    calibrationTasks: Count(1, 64).optional(),
  }).refine((p) => (p.planName === undefined) !== (p.planText === undefined), { message: 'give exactly one of planName (a shipped plan) and planText (a pasted plan)', path: ['planName'] }),
  cancelStudy: z.strictObject({ studyId: Id }),
};

/** Payload schemas, one per API method. */
export const payloadSchemas = {
  listExperiments: NoPayload,
  getExperiment: z.strictObject({ id: Id }),
  listRuns: z.strictObject({ experimentId: Id }),
  searchRuns: searchRunsSchema,
  getRunTrace: z.strictObject({ runId: Id }),
  validateWorkflow: z.strictObject({
    /** The workflow document, YAML or JSON. */
    text: z.string().max(MAX_WORKFLOW_CHARS, `must be at most ${MAX_WORKFLOW_CHARS} characters`),
    /** A file name used only in issue locations (nothing is read from disk). */
    file: z.string().min(1).max(4096).optional(),
  }),
  appInfo: NoPayload,
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
  startRun: z.strictObject({
    workflowText: z.string().min(1, 'must not be empty').max(MAX_WORKFLOW_CHARS, `must be at most ${MAX_WORKFLOW_CHARS} characters`),
    dataset: Name,
    split: Name,
    limit: Count(1, MAX_RUN_LIMIT),
    offset: Count(0, 10_000_000).optional(),
    seed: Count(0, 0x7fffffff),
    models: z.strictObject({
      default: AbsolutePath.optional(),
      roles: z
        .record(Name, AbsolutePath)
        .refine((r) => Object.keys(r).length <= MAX_ROLE_MODELS, `must name at most ${MAX_ROLE_MODELS} roles`)
        .optional(),
    }),
    /** SIMULATED faults, `role=kind@rate` (parsed by the host). */
    inject: z.array(z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters')).max(MAX_INJECT, `must have at most ${MAX_INJECT} entries`).optional(),
    threads: Count(1, 256).optional(),
    contextSize: Count(256, 131_072).optional(),
    roleLora: z
      .record(Name, z.array(z.strictObject({ path: AbsolutePath, scale: z.number().min(-100).max(100).optional() })).min(1, 'must name at least one adapter').max(8, 'must have at most 8 adapters'))
      .refine((r) => Object.keys(r).length <= MAX_ROLE_MODELS, `must name at most ${MAX_ROLE_MODELS} roles`)
      .optional(),
    roleVersions: z.record(Name, Id).refine((r) => Object.keys(r).length <= MAX_ROLE_MODELS, `must name at most ${MAX_ROLE_MODELS} roles`).optional(),
    cards: z.union([z.literal('all'), z.literal('none'), z.array(Id).min(1, 'must name at least one card').max(MAX_CARDS, `must have at most ${MAX_CARDS} entries`)]).optional(),
    cardBudget: Count(1, 100_000).optional(),
    distillEvery: Count(1, MAX_RUN_LIMIT).optional(),
    distillShots: Count(1, 100).optional(),
    distillRoles: z.array(Name).min(1, 'must name at least one role').max(MAX_ROLE_MODELS, `must have at most ${MAX_ROLE_MODELS} entries`).optional(),
    distillWithFailures: z.boolean().optional(),
    kind: z.enum(['run', 'rollouts']).optional(),
    group: Count(1, 64).optional(),
    temperature: z.number().min(0, 'must be at least 0').max(5, 'must be at most 5').optional(),
    mode: Name.optional(),
    recordTokens: z.boolean().optional(),
    runs: Count(1, MAX_RUN_LIMIT).optional(),
    parallel: Count(1, 1024).optional(),
  }),
  cancelRun: z.strictObject({ experimentId: Id }),
  resumeRun: z.strictObject({
    experimentId: Id,
    /** Moved model files given again (they must be the same files). */
    models: z
      .strictObject({
        default: AbsolutePath.optional(),
        roles: z.record(Name, AbsolutePath).refine((r) => Object.keys(r).length <= MAX_ROLE_MODELS, `must name at most ${MAX_ROLE_MODELS} roles`).optional(),
      })
      .optional(),
    force: z.boolean().optional(),
  }),
  activeRuns: NoPayload,
  /** `flowlab train-loop`'s options (StartTrainLoopRequest in trainLoop.ts; the CLI's bounds). */
  startTrainLoop: z.strictObject({
    workflowText: z.string().min(1, 'must not be empty').max(MAX_WORKFLOW_CHARS, `must be at most ${MAX_WORKFLOW_CHARS} characters`),
    dataset: Name,
    split: Name.optional(),
    heldoutSplit: Name.optional(),
    roles: z.array(Name).min(1, 'must name at least one role').max(MAX_ROLE_MODELS, `must have at most ${MAX_ROLE_MODELS} entries`).optional(),
    group: Count(1, 64).optional(),
    iterations: Count(1, MAX_RUN_LIMIT).optional(),
    limit: Count(1, MAX_RUN_LIMIT).optional(),
    lr: z.number().gt(0, 'must be greater than 0').lt(1, 'must be less than 1').optional(),
    kl: z.number().min(0, 'must be at least 0').max(100, 'must be at most 100').optional(),
    temperature: z.number().gt(0, 'must be greater than 0 (on-policy training samples)').max(5, 'must be at most 5').optional(),
    maxGradNorm: z.number().min(0, 'must be at least 0').max(1e6, 'must be at most 1000000').optional(),
    heldout: Count(0, MAX_RUN_LIMIT).optional(),
    heldoutSamples: Count(1, 64).optional(),
    heldoutTemperature: z.number().min(0, 'must be at least 0').max(5, 'must be at most 5').optional(),
    seed: Count(0, 0x7fffffff).optional(),
    warmStart: Count(0, MAX_RUN_LIMIT).optional(),
    sftMix: z.boolean().optional(),
    sftSteps: Count(1, 100).optional(),
    sftLr: z.number().gt(0, 'must be greater than 0').lt(1, 'must be less than 1').optional(),
    sftMinScore: z
      .union([
        z.number().gt(0, 'must be greater than 0').max(1, 'must be at most 1'),
        z.record(Name, z.number().gt(0, 'must be greater than 0').max(1, 'must be at most 1')).refine((r) => Object.keys(r).length <= MAX_ROLE_MODELS, `must name at most ${MAX_ROLE_MODELS} roles`),
      ])
      .optional(),
    sftRoles: z.array(Name).min(1, 'must name at least one role').max(MAX_ROLE_MODELS, `must have at most ${MAX_ROLE_MODELS} entries`).optional(),
    models: z.strictObject({
      default: AbsolutePath.optional(),
      roles: z.record(Name, AbsolutePath).refine((r) => Object.keys(r).length <= MAX_ROLE_MODELS, `must name at most ${MAX_ROLE_MODELS} roles`).optional(),
    }),
    roleVersions: z.record(Name, Id).refine((r) => Object.keys(r).length <= MAX_ROLE_MODELS, `must name at most ${MAX_ROLE_MODELS} roles`).optional(),
    threads: Count(1, 256).optional(),
    contextSize: Count(64, 131_072).optional(),
  }),
  cancelTrainLoop: z.strictObject({ loopId: Id }),
  listWorkflowFiles: NoPayload,
  readWorkflowFile: z.strictObject({ name: WorkflowFileName() }),
  saveWorkflowFile: z.strictObject({
    name: WorkflowFileName(),
    text: z.string().max(MAX_WORKFLOW_CHARS, `must be at most ${MAX_WORKFLOW_CHARS} characters`).refine((t) => !t.includes('\0'), { error: (iss) => `must not contain a NUL character (U+0000; the first is at character ${String(iss.input).indexOf('\0')}): a workflow is text` }),
    overwrite: z.boolean().optional(),
  }),
  ...massJobSchemas,
  ...downloadSchemas,
  ...studyJobSchemas,
  getRollouts: z.strictObject({ experimentId: Id }),
  listCards: z.strictObject({ role: Name.optional() }).optional(),
  getCardEffect: z.strictObject({ cardId: Id }),
  listWeightVersions: z.strictObject({ role: Name.optional() }).optional(),
  getLearningCurves: z.strictObject({ role: Name.optional() }).optional(),
  diffRuns: z.strictObject({ a: Id, b: Id }),
  listStudies: z.strictObject({}).optional(),
  getStudy: z.strictObject({ studyId: Id }),
  listEvolutions: NoPayload,
  getEvolution: z.strictObject({ evolutionId: Id }),
  getDesignDiff: z.strictObject({ evolutionId: Id, taskIndex: z.number().int().min(0), a: z.number().int().min(0), b: z.number().int().min(0) }),
  listOuterLoops: NoPayload,
  getOuterLoop: z.strictObject({ loopId: Id }),
  compareExperiments: z.strictObject({ a: Id, b: Id, seed: Count(0, 2_147_483_647).optional() }),
  deleteCard: z.strictObject({ cardId: Id }),
  distillCard: z.strictObject({
    experimentId: Id,
    role: Name,
    shots: Count(1, 20).optional(),
    onlySuccesses: z.boolean().optional(),
    teacher: AbsolutePath.optional(),
    seed: Count(0, 2_147_483_647).optional(),
    budget: Count(64, 100_000).optional(),
    maxTokens: Count(16, 32_768).optional(),
    threads: Count(1, 256).optional(),
    contextSize: Count(256, 131_072).optional(),
  }),
  forkRun: z.strictObject({
    runId: Id,
    nodeId: Name,
    attempt: Count(1, 10_000).optional(),
    output: z.string().max(1_000_000, 'must be at most 1000000 characters').optional(),
    prompt: z.string().max(100_000, 'must be at most 100000 characters').optional(),
    seed: Count(0, 2_147_483_647).optional(),
    roleModel: z.strictObject({ role: Name, path: AbsolutePath }).optional(),
    threads: Count(1, 256).optional(),
  }).refine((p) => [p.output, p.prompt, p.seed, p.roleModel].filter((v) => v !== undefined).length === 1, { message: 'give exactly one intervention: output, prompt, seed or roleModel', path: ['output'] }),
  listForks: z.strictObject({ runId: Id }),
  exportCards: z.strictObject({ ids: z.array(Id).max(10_000, 'must have at most 10000 entries').optional() }).optional(),
  getWorkshop: NoPayload,
  joinWorkshop: z.strictObject({ attendee: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, - or _').optional() }).optional(),
  listAttendees: NoPayload,
  removeAttendee: z.strictObject({ attendee: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, - or _') }),
  submitPrediction: z.strictObject({ attendee: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, - or _'), stepId: Name, choice: Name }),
  controlWorkshop: z.strictObject({ action: z.enum(['next', 'prev', 'goto', 'reveal', 'reset', 'restart-timer']), index: z.int('must be an integer').min(0, 'must be at least 0').max(100, 'must be at most 100').optional() })
    .refine((c) => (c.action === 'goto') === (c.index !== undefined), { message: 'index is given with goto, and only with goto', path: ['index'] }),
} as const satisfies Record<ApiMethod, z.ZodType>;

/** The validated payload type of a method. */
export type ApiPayload<M extends ApiMethod> = z.output<(typeof payloadSchemas)[M]>;

export type GetExperimentPayload = ApiPayload<'getExperiment'>;
export type ListRunsPayload = ApiPayload<'listRuns'>;
export type GetRunTracePayload = ApiPayload<'getRunTrace'>;
export type ValidateWorkflowPayload = ApiPayload<'validateWorkflow'>;

/**
 * One row of the experiments list: the stored experiment with its progress and scores, without
 * the workflow text and run configuration (`getExperiment` has those).
 */
export type ExperimentSummary = Omit<StoreExperimentSummary, 'workflowYaml' | 'config'> & ExperimentMeta;

/** One experiment in full: the stored row (workflow text, config) plus its progress and scores. */
export type ExperimentDetail = StoreExperimentSummary;

/**
 * A run with all its node events (ordered by seq, each with its model calls), the graph it ran and,
 * for a designed workflow, its design (runTrace.ts builds it).
 */
export interface RunTrace {
  run: RunRecord;
  events: NodeEvent[];
  /**
   * The graph the run ran: the stored workflow compiled with the host's tools, with a designed
   * run's design spliced in (core/design `runGraphOf`). Absent when the stored workflow does not
   * compile here (`graphProblem` says why); the views then draw what its text outlines.
   */
  graph?: RunGraph;
  graphProblem?: string;
  /** The design record of a designed run (its design node's final attempt); absent otherwise. */
  design?: RunDesign;
  /** Why a design node's stored output could not be read as a design record (malformed). */
  designProblem?: string;
}

/**
 * Where a node of a run's graph comes from: the workflow document (`workflow`), the design stage
 * (`design`: the design node, run by the designer), or the designer's design (`designed`).
 */
export type NodeOrigin = 'workflow' | 'design' | 'designed';

/** One node of the graph a run ran, with its authors (FloWright: the wirer owns the wiring, the runner the run). */
export interface RunGraphNode {
  id: string;
  kind: NodeKind;
  role?: string;
  tool?: string;
  skill?: string;
  /** The role (or `human`) that wired the node into the graph. */
  wiredBy: string;
  /** Further wirers when authorship is shared (blame is then ambiguous). */
  sharedWiredBy?: string[];
  /** The role that runs it (agent and skill nodes). */
  runBy?: string;
  origin: NodeOrigin;
  /** Where the node is written: in the workflow document, or (designed nodes) in the design document. */
  path: Array<string | number>;
  /** A designed node the validator rejected: recorded failed (class wiring) without running. */
  wiringFault?: { code: string; message: string };
}

export interface RunGraphEdge {
  /** Unique within the graph: `<index>:<from>-><to>`. */
  id: string;
  from: string;
  to: string;
  type: EdgeType;
  port?: string;
  /** Loop back edges: how often the loop may re-enter `to`. */
  maxIterations?: number;
}

/** The graph a run ran (see RunTrace.graph). */
export interface RunGraph {
  name: string;
  notation: WorkflowSummary['notation'];
  nodes: RunGraphNode[];
  edges: RunGraphEdge[];
  /** The answer node's id. */
  answer: string;
  /** The workflow's design stage: its node and the role that designs (the designer). */
  design?: { nodeId: string; role: string };
}

/** A validation message of a design, located by its path inside the design document (core/design DesignIssue). */
export interface RunDesignIssue {
  /** A workflow issue code, or the node error code it became (DANGLING_EDGE, UNKNOWN_TOOL, ...). */
  code: string;
  path: Array<string | number>;
  message: string;
  /** The designed node that owns it (recorded as a wiring root failure); absent: a design-level problem. */
  nodeId?: string;
  /** For a `code` design: where in the code text (1-based line and column). */
  inCode?: { line: number; column: number };
}

/** What the designer wrote for one run and what the validator made of it (core/design DesignRecord). */
export interface RunDesign {
  /** The design node and the role that wrote the design. */
  nodeId: string;
  designer: string;
  /** The attempt of the design node this record is from (its final one). */
  attempt: number;
  notation: 'steps' | 'graph' | 'states' | 'code';
  /** The designer's completion as written. */
  text: string;
  /** The document compiled (the parsed completion, or its SIMULATED tampered copy); absent when it did not parse. */
  document?: unknown;
  /** False: nothing of the design could run; `problem` says why. */
  usable: boolean;
  problem?: string;
  issues: RunDesignIssue[];
  /** A SIMULATED wiring fault put into the design before it was compiled (core/faults). */
  fault?: { kind: string; nodeId: string; simulated: true };
}

const DocPathSchema = z.array(z.union([z.string(), z.number()]));

/**
 * The stored design record read back (a node event's `output`, untrusted JSON): the fields the
 * views use, checked; unknown fields are dropped.
 */
export const designRecordSchema = z.object({
  notation: z.enum(['steps', 'graph', 'states', 'code']),
  text: z.string(),
  document: z.unknown().optional(),
  usable: z.boolean(),
  problem: z.string().optional(),
  issues: z.array(z.object({ code: z.string(), path: DocPathSchema, message: z.string(), nodeId: z.string().optional(), inCode: z.object({ line: z.number().int(), column: z.number().int() }).optional() })),
  fault: z.object({ kind: z.string(), nodeId: z.string(), simulated: z.literal(true) }).optional(),
});

/** The shape of a valid workflow, enough to draw it. */
export interface WorkflowSummary {
  name: string;
  notation: 'graph' | 'steps' | 'agents' | 'states' | 'code';
  nodes: { id: string; kind: NodeKind; role?: string }[];
  edges: { from: string; to: string; type: EdgeType }[];
}

/** `validateWorkflow`'s answer: the graph's outline, or every located issue. Never throws for a bad document. */
export type ValidateWorkflowResult = { ok: true; summary: WorkflowSummary } | { ok: false; issues: SpecIssue[] };

/** What the running app is. */
export interface AppInfo {
  /** The app's version (package.json `version`). */
  version: string;
  /** The SQLite database file in use (`:memory:` in tests). */
  dbFile: string;
  /** The folder the lab lists models from and downloads them into, when the host says (absolute). */
  modelDir?: string;
}

/**
 * The lab's API as the host implements it (see `createHandlers`). Payload-less methods take an
 * optional `{}`. Every method throws `ApiError` only: `BAD_REQUEST` for an invalid payload,
 * `NOT_FOUND` for an unknown id, `UNAVAILABLE` when the store is closed, `INTERNAL` otherwise.
 * The store methods (and the rollouts and hint-card reads, `ImproveApiAdditions` in improve.ts) answer
 * synchronously; the lab methods (`LabApiAdditions`, lab.ts) return
 * Promises and reject with the same ApiErrors (a bad payload included).
 */
export interface FlowlabApi extends LabApiAdditions, ImproveApiAdditions, LearningApiAdditions, DiffApiAdditions, StudiesApiAdditions, MassApiAdditions, WorkflowFilesApiAdditions, MassJobApiAdditions, LoopApiAdditions, WorkshopApiAdditions, DownloadApiAdditions, StudyJobApiAdditions, ForkApiAdditions, RunSearchApiAdditions {
  /** All experiments, newest first, with progress and scores. */
  listExperiments(payload?: ApiPayload<'listExperiments'>): ExperimentSummary[];
  /** One experiment with its workflow text and config. Errors: `NOT_FOUND`. */
  getExperiment(payload: GetExperimentPayload): ExperimentDetail;
  /** The stored runs of an experiment, in task order. Errors: `NOT_FOUND` (no such experiment). */
  listRuns(payload: ListRunsPayload): RunRecord[];
  /** A run, its node events, the graph it ran (a designed run's design spliced in) and its design record. Errors: `NOT_FOUND`. */
  getRunTrace(payload: GetRunTracePayload): RunTrace;
  /** Parses and validates a workflow document with the built-in tools; reports issues as data. */
  validateWorkflow(payload: ValidateWorkflowPayload): ValidateWorkflowResult;
  /** The app version and database file. */
  appInfo(payload?: ApiPayload<'appInfo'>): AppInfo;
}

/** The result type of a method. */
export type ApiResult<M extends ApiMethod> = Awaited<ReturnType<FlowlabApi[M]>>;

/**
 * The API as a client sees it across a process boundary: the same methods, each returning a
 * Promise. The preload's `window.flowlab` and the renderer's client have this type.
 */
export type FlowlabClient = {
  [M in ApiMethod]: (...args: Parameters<FlowlabApi[M]>) => Promise<ApiResult<M>>;
};

/**
 * What the Electron preload exposes as `window.flowlab`: the promise client plus `onEvent`, a
 * subscription to pushed `LabEvent`s (checked with `isLabEvent` before delivery).
 */
export type FlowlabDesktopApi = FlowlabClient & {
  onEvent: Subscribe;
  /**
   * The desktop app's file picker for a workflow document (electron/pickWorkflow.ts): the text of
   * the `.yaml` / `.yml` file the user chose, or null when they cancelled. Absent in a browser.
   */
  pickWorkflowFile?: () => Promise<PickedWorkflowFile | null>;
};

/** A workflow file the user picked in the desktop app's Open dialog. */
export interface PickedWorkflowFile {
  /** Its base name (the dialog's folder is not sent to the page). */
  name: string;
  text: string;
}

// Compile-time guard: the allowlist and the interface name exactly the same methods.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const allowlistMatchesInterface: Same<ApiMethod, keyof FlowlabApi> = true;
void allowlistMatchesInterface;
