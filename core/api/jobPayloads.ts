/**
 * The payload schemas of the job families (train loops, MASS jobs, model downloads, study jobs),
 * moved verbatim from contract.ts; features/jobFamilies.ts wraps them as features.
 */
import * as z from 'zod';
import { MAX_PARALLEL } from '../limits.ts';
import { downloadFileNameProblem, downloadSourceProblem } from './downloads.ts';
import { AbsolutePath, Count, Id, MAX_PATH_LENGTH, MAX_ROLE_MODELS, MAX_RUN_LIMIT, MAX_WORKFLOW_CHARS, Name, NoPayload } from './fields.ts';

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
  /** Runs and judge calls in flight (`--parallel`, core/mass/inFlight.ts); not stored: the records do not depend on it. */
  parallel: Count(1, MAX_PARALLEL).optional(),
};
export const massJobSchemas = {
  startEvolve: z.strictObject({
    dataset: Name, model: AbsolutePath, split: Name.optional(), limit: Count(1, 100).optional(), offset: Count(0, MAX_RUN_LIMIT).optional(),
    iterations: Count(1, 100).optional(), rule: z.enum(['baseline', 'direct']).optional(), seed: Count(0, 0x7fffffff).optional(), id: LoopId.optional(),
    threads: Count(1, 256).optional(), contextSize: Count(256, 131_072).optional(), parallel: Count(1, MAX_PARALLEL).optional(),
    optimizer: z.enum(['edit', 'free']).optional(), judge: z.enum(['self', 'pair', 'verifier']).optional(), proposer: z.enum(['model', 'random']).optional(),
    selectTasks: Count(1, 32).optional(), auditSwaps: Count(0, 100).optional(), heldout: Count(1, 10_000).optional(), heldoutSplit: Name.optional(),
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
export const downloadSchemas = {
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
export const studyJobSchemas = {
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

/** Train loops (trainLoop.ts). */
export const trainLoopSchemas = {
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
    entropy: z.number().min(0, 'must be at least 0').max(1, 'must be at most 1').optional(),
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
    sftPool: Count(0, 1000).optional(),
    models: z.strictObject({
      default: AbsolutePath.optional(),
      roles: z.record(Name, AbsolutePath).refine((r) => Object.keys(r).length <= MAX_ROLE_MODELS, `must name at most ${MAX_ROLE_MODELS} roles`).optional(),
    }),
    roleVersions: z.record(Name, Id).refine((r) => Object.keys(r).length <= MAX_ROLE_MODELS, `must name at most ${MAX_ROLE_MODELS} roles`).optional(),
    threads: Count(1, 256).optional(),
    contextSize: Count(64, 131_072).optional(),
  }),
  cancelTrainLoop: z.strictObject({ loopId: Id }),
};
