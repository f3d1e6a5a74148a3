/**
 * The fork feature (core/experiments/fork.ts does the work, docs/fork.md): `forkRun` re-runs a
 * stored run from one node run with one intervention (a lab method: it loads the run's models
 * for the live part), `listForks` reads a run's link to its parent and its own forks (a store
 * read). Plain, JSON-safe data.
 */
import * as z from 'zod';
import type { Store } from '../../store/index.ts';
import { defineFeature, labMethod, type Awaitable } from '../feature.ts';
import { AbsolutePath, Count, Id, Name } from '../fields.ts';

/** `forkRun`'s payload: the run, the node run, and exactly one intervention. */
export interface ForkRunRequest {
  runId: string;
  nodeId: string;
  /** 1-based; default: the node's first attempt that ran. */
  attempt?: number;
  /** Replace the node's output (an agent node's completion text; a tool node's result). */
  output?: string;
  /** Replace the node's prompt template. */
  prompt?: string;
  /** The fork's run seed. */
  seed?: number;
  /** Another model (an absolute GGUF path in the host's model folders) for a role, from the node run on. */
  roleModel?: { role: string; path: string };
  /** CPU threads of the live models. */
  threads?: number;
}

/** One fork as the lists show it. */
export interface ForkSummary {
  runId: string;
  experimentId: string;
  parentRunId: string;
  nodeId: string;
  attempt: number;
  /** `output`, `prompt`, `role-model`, `seed` or `unfault`. */
  intervention: string;
  status: 'completed' | 'failed' | 'cancelled';
  correct: boolean;
  answer?: string;
  createdAt?: number;
}

/** `forkRun`'s answer: the stored fork and where its model calls were answered. */
export interface ForkRunResult extends ForkSummary {
  parentCorrect: boolean;
  /** Calls served from the parent's recording (upstream), by node. */
  recorded: Record<string, number>;
  /** Calls answered by a live model, by node. */
  live: Record<string, number>;
  modelsLoaded: number;
}

/** `listForks`' answer for one run: its parent (when it is a fork) and its forks, oldest first. */
export interface RunForks {
  runId: string;
  parent?: ForkSummary;
  forks: ForkSummary[];
}

/** The fork methods. */
export interface ForkApi {
  /** A run's parent link and its forks. Errors: `NOT_FOUND`. */
  listForks(payload: { runId: string }): RunForks;
  /**
   * Forks a stored run (core/experiments forkRun) and stores the fork linked to it. Errors:
   * `NOT_FOUND` (no run), `BAD_REQUEST` (no or several interventions, an unknown node, a node that
   * never ran, an incomplete recording: the message says which), `UNAVAILABLE` (a host without
   * models), `BUSY` (a model file in use).
   */
  forkRun(payload: ForkRunRequest): Promise<ForkRunResult>;
}

/** What a lab host adds for forks (optional: hosts without models answer `forkRun` with UNAVAILABLE). */
export interface ForkHost {
  forkRun?(payload: ForkRunRequest): Awaitable<ForkRunResult>;
}

export const forkFeature = defineFeature<ForkApi>()({
  name: 'fork',
  payloads: {
    listForks: z.strictObject({ runId: Id }),
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
  },
  lab: ['forkRun'],
  handlers: (deps: { store: Store; lab?: ForkHost | undefined }) => ({
    listForks: ({ runId }) => listForks(deps.store, runId),
    forkRun: async (payload) => {
      deps.store.getRun(payload.runId); // NOT_FOUND for an unknown run
      return labMethod(deps, 'forkRun', 'this host cannot load models to fork runs')(payload);
    },
  }),
});

/** One stored fork link as a summary (the fork's run read for its status). */
export function forkSummary(store: Store, link: { runId: string; experimentId: string; parentRunId: string; nodeId: string; attempt: number; intervention: Record<string, unknown>; createdAt?: number }): ForkSummary {
  const run = store.getRun(link.runId);
  return {
    runId: link.runId, experimentId: link.experimentId, parentRunId: link.parentRunId, nodeId: link.nodeId, attempt: link.attempt,
    intervention: String(link.intervention.kind ?? ''), status: run.status, correct: run.correct,
    ...(run.answer !== undefined && { answer: run.answer }), ...(link.createdAt !== undefined && { createdAt: link.createdAt }),
  };
}

/** A run's parent link and its forks. Errors: StoreError NOT_FOUND (no run). */
export function listForks(store: Store, runId: string): RunForks {
  store.getRun(runId);
  const parent = store.forks.linkOf(runId);
  return { runId, ...(parent && { parent: forkSummary(store, parent) }), forks: store.forks.forksOf(runId).map((l) => forkSummary(store, l)) };
}
