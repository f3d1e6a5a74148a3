/**
 * The laptop RL loop (issue 6): rollouts -> reward ladder -> per-role group advantages -> one
 * policy step per trained role -> a new GGUF version per role -> reload -> repeat.
 *
 * Each iteration is a stored `rollouts` experiment (G on-policy samples per task, decoded
 * together, token ids recorded), so every trajectory, ladder and advantage of the loop can be
 * inspected, compared and exported like any other. Each trained role holds its own weights
 * (its own trainable model and its own model ref, `train:<role>`), so roles co-evolve
 * independently even when they start from the same file. Every version written is recorded in
 * the store with its lineage (parent version, experiment, iteration, hyper-parameters,
 * metrics). Held-out evaluation runs before and after, with the same tasks and seeds (paired).
 *
 * core never imports an ML library: the trainer and the model provider are injected.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { ExperimentId, RoleName } from '../ids.ts';
import type { ToolSource } from '../engine/index.ts';
import { deriveSeed } from '../engine/seeds.ts';
import { executePending } from '../experiments/execute.ts';
import type { ModelProvider } from '../model/provider.ts';
import { RUNGS } from '../reward/ladder.ts';
import { groupRollouts, rolloutIndex, rolloutTaskId } from '../rollouts/groups.ts';
import { computeWorkflowHash } from '../store/ids.ts';
import type { Store } from '../store/index.ts';
import type { WeightVersion } from '../store/weights.ts';
import type { Grader, Task } from '../tasks/types.ts';
import type { RunRecord } from '../results/index.ts';
import type { Graph } from '../workflow/graph.ts';
import type { StepResult, TrainableModel, Trainer } from './port.ts';
import { policySamples } from './samples.ts';

/** Model files as the provider sees them: ref -> GGUF path, and which ref each role uses. */
export interface LoopModels {
  models: Record<string, string>;
  roleModels: Record<string, string>;
}

export interface TrainLoopOptions {
  store: Store;
  graph: Graph;
  /** The workflow's source (stored with each experiment) and file, if any. */
  workflow: { yaml: string; file?: string };
  dataset: { name: string; grader: Grader };
  /** Training tasks: iteration k takes the next `tasksPerIteration` of them (wrapping around). */
  trainTasks: readonly Task[];
  /** Held-out tasks evaluated before and after (none: no held-out evaluation). */
  heldoutTasks: readonly Task[];
  tools: ToolSource;
  trainer: Trainer;
  /** Builds a provider over these model files; called at the start and after every write (reload). */
  makeProvider: (models: LoopModels) => Promise<ModelProvider>;
  /** The models before training (roles not trained keep theirs throughout). */
  models: LoopModels;
  /** Roles whose weights are trained (each gets its own version lineage). */
  roles: readonly string[];
  /** Versions the trained roles start from (`--role-version`): their files and the parents of the first new versions. */
  startVersions?: Readonly<Record<string, WeightVersion>>;
  group: number;
  iterations: number;
  tasksPerIteration: number;
  lr: number;
  kl: number;
  temperature: number;
  maxGradNorm?: number;
  /** Held-out samples per task (fixed seeds, same before and after) and their temperature (0: greedy, one per task). */
  heldoutSamples: number;
  heldoutTemperature: number;
  seed: number;
  /** Where the versions are written: `<versionsDir>/<loopId>/<role>/iter-<k>.gguf`. */
  versionsDir: string;
  /** Most trajectories decoded at once (default: every trajectory of an iteration, up to 64). */
  parallel?: number;
  signal?: AbortSignal;
  /** Progress: rollouts done within an iteration, and each finished iteration / evaluation. */
  onEvent?: (e: LoopEvent) => void;
  /** Extra config stored with each experiment (the CLI's model settings). */
  config?: Record<string, unknown>;
  /** A loop id (default `tl-<time>-<rand>`). */
  loopId?: string;
}

export type LoopEvent =
  | { type: 'rollout'; iteration: number; done: number; total: number }
  | { type: 'iteration'; metrics: IterationMetrics }
  | { type: 'heldout'; phase: 'before' | 'after'; result: HeldoutResult };

/** One role's numbers in one iteration. */
export interface RoleIterationMetrics {
  /** Mean ladder reward h of the role over the iteration's rollouts. */
  reward: number;
  /** Mean of each rung (format, validity, completion, correctness, credit). */
  rungs: Record<(typeof RUNGS)[number], number>;
  /** Samples (model calls) trained on, and how many had a non-zero advantage. */
  samples: number;
  signalSamples: number;
  /** Groups whose rewards for this role were all equal (no signal). */
  zeroSpreadGroups: number;
  /** The policy step: loss, mean k3 KL to the starting weights, tokens trained, train tokens/s. */
  loss?: number;
  kl?: number;
  trainTokens: number;
  trainTokensPerSecond?: number;
  /** The version written this iteration (absent when the role had no samples). */
  versionId?: string;
  path: string;
}

export interface IterationMetrics {
  iteration: number;
  experimentId: string;
  /** Mean grader score (the outcome) over the iteration's rollouts. */
  score: number;
  roles: Record<string, RoleIterationMetrics>;
  /** Completion tokens sampled, and per second of sampling. */
  sampledTokens: number;
  sampleTokensPerSecond: number;
  seconds: { sampling: number; training: number; writeReload: number; total: number };
}

export interface HeldoutResult {
  experimentId: string;
  /** Mean grader score over every held-out sample. */
  score: number;
  samples: number;
  /** Mean ladder reward per role. */
  roles: Record<string, number>;
  /** A few completions of each trained role (the first samples), to see the text stays fluent. */
  examples: Record<string, string[]>;
}

export interface TrainLoopReport {
  loopId: string;
  roles: string[];
  iterations: IterationMetrics[];
  heldout?: { before: HeldoutResult; after: HeldoutResult };
  /** Each trained role's versions in order, and its final file. */
  versions: Record<string, string[]>;
  finalModels: Record<string, string>;
  cancelled: boolean;
  hyper: Record<string, unknown>;
}

/** The ref a trained role's model goes by (each trained role has its own). */
export const trainRef = (role: string) => `train:${role}`;

export function newLoopId(now = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `tl-${now.getUTCFullYear()}${p(now.getUTCMonth() + 1)}${p(now.getUTCDate())}-${p(now.getUTCHours())}${p(now.getUTCMinutes())}${p(now.getUTCSeconds())}-${Math.floor(Math.random() * 36 ** 4).toString(36).padStart(4, '0')}`;
}

export async function runTrainLoop(o: TrainLoopOptions): Promise<TrainLoopReport> {
  if (!o.roles.length) throw new Error('train-loop: no role to train');
  for (const role of o.roles) {
    if (!o.graph.roles.has(role as RoleName)) throw new Error(`train-loop: the workflow has no role "${role}" (roles: ${[...o.graph.roles.keys()].join(', ')})`);
  }
  if (!(o.temperature > 0)) throw new Error('train-loop: on-policy training needs a sampling temperature > 0');
  if (!o.trainTasks.length) throw new Error('train-loop: no training tasks');
  const loopId = o.loopId ?? newLoopId();
  const G = o.group;
  const hyper = { lr: o.lr, kl: o.kl, temperature: o.temperature, group: G, tasksPerIteration: o.tasksPerIteration, maxGradNorm: o.maxGradNorm ?? null, seed: o.seed, dataset: o.dataset.name, loopId };
  const { store } = o;

  // Each trained role: its own ref, file, trainable model and lineage.
  const models: LoopModels = { models: { ...o.models.models }, roleModels: { ...o.models.roleModels } };
  const state = new Map<string, { model: TrainableModel; basePath: string; path: string; parentId?: string; versions: string[] }>();
  const trainables: TrainableModel[] = [];
  let provider: ModelProvider | undefined;
  try {
    for (const role of o.roles) {
      const start = o.startVersions?.[role];
      const file = start?.path ?? o.models.models[o.models.roleModels[role] ?? 'default'];
      if (!file) throw new Error(`train-loop: role "${role}" has no model file`);
      const model = await o.trainer.load(file);
      trainables.push(model);
      state.set(role, { model, basePath: start?.basePath ?? file, path: file, ...(start ? { parentId: start.id } : {}), versions: [] });
      models.models[trainRef(role)] = file;
      models.roleModels[role] = trainRef(role);
    }
    const snapshot = (): LoopModels => ({ models: { ...models.models }, roleModels: { ...models.roleModels } });
    // Stored with each experiment: the caller's model settings with the files in use then (so `resume` can rebuild them).
    const { fingerprints: _f, ...modelSettings } = (o.config?.models ?? {}) as Record<string, unknown>;
    const modelsConfig = () => ({ ...modelSettings, ...snapshot() });
    provider = await o.makeProvider(snapshot());

    const parallelOf = (n: number) => Math.max(1, Math.min(o.parallel ?? 64, n));
    const sampling = { temperature: o.temperature, topK: 0, topP: 1, minP: 0 };
    const modelFor = (role: RoleName) => models.roleModels[role] ?? 'default';
    const experimentBase = (split: string, limit: number) => ({
      workflowName: o.graph.name,
      workflowYaml: o.workflow.yaml,
      workflowHash: computeWorkflowHash(o.workflow.yaml),
      dataset: o.dataset.name,
      split,
      limit,
    });

    const evaluate = async (phase: 'before' | 'after'): Promise<HeldoutResult | undefined> => {
      if (!o.heldoutTasks.length) return undefined;
      const greedy = !(o.heldoutTemperature > 0);
      const K = greedy ? 1 : Math.max(1, o.heldoutSamples);
      const seed = deriveSeed(o.seed, 'heldout');
      const exp = store.createExperiment({
        kind: 'run',
        ...experimentBase('heldout', o.heldoutTasks.length),
        seed,
        config: { ...o.config, workflowFile: o.workflow.file, models: modelsConfig(), trainLoop: { loopId, phase: `heldout-${phase}`, samples: K, temperature: greedy ? 0 : o.heldoutTemperature } },
        tasks: o.heldoutTasks.flatMap((t, ti) => Array.from({ length: K }, (_, g) => ({ taskIndex: rolloutIndex(ti, g, K), taskId: K === 1 ? t.id : rolloutTaskId(t.id, g), input: t.input, expected: t.expected }))),
      });
      const res = await executePending({
        store, experimentId: exp.id, graph: o.graph, grader: o.dataset.grader, provider: provider!, tools: o.tools, seed, signal: o.signal, modelFor,
        parallel: parallelOf(o.heldoutTasks.length * K), sampling: greedy ? { temperature: 0 } : { temperature: o.heldoutTemperature, topK: 0, topP: 1, minP: 0 },
      });
      finish(store, exp.id, res);
      const runs = store.listRuns(exp.id);
      const calls = store.getExperimentCalls(exp.id);
      const result: HeldoutResult = {
        experimentId: exp.id,
        score: mean(runs.map((r) => r.score)),
        samples: runs.length,
        roles: Object.fromEntries(o.roles.map((role) => [role, mean(runs.map((r) => r.ladder?.[role]?.reward).filter(isNum))])),
        examples: Object.fromEntries(o.roles.map((role) => [role, calls.filter((c) => c.role === role && !c.error).slice(0, 3).map((c) => c.completion)])),
      };
      o.onEvent?.({ type: 'heldout', phase, result });
      return result;
    };

    const before = await evaluate('before');
    const iterations: IterationMetrics[] = [];
    let cancelled = false;
    const perIteration = Math.max(1, o.tasksPerIteration);
    for (let k = 1; k <= o.iterations; k++) {
      if (o.signal?.aborted) {
        cancelled = true;
        break;
      }
      const t0 = performance.now();
      const tasks = Array.from({ length: perIteration }, (_, i) => o.trainTasks[((k - 1) * perIteration + i) % o.trainTasks.length]!);
      const seed = deriveSeed(o.seed, 'iteration', k);
      const exp = store.createExperiment({
        kind: 'rollouts',
        ...experimentBase('train', tasks.length),
        seed,
        config: {
          ...o.config,
          workflowFile: o.workflow.file,
          models: modelsConfig(),
          rollouts: { group: G, temperature: o.temperature, mode: 'train-loop', learningRoles: [...o.roles], recordTokens: true },
          trainLoop: { loopId, iteration: k, hyper },
        },
        tasks: tasks.flatMap((t, ti) => Array.from({ length: G }, (_, g) => ({ taskIndex: rolloutIndex(ti, g, G), taskId: rolloutTaskId(t.id, g), input: t.input, expected: t.expected }))),
      });
      const res = await executePending({
        store, experimentId: exp.id, graph: o.graph, grader: o.dataset.grader, provider, tools: o.tools, seed, signal: o.signal, modelFor,
        parallel: parallelOf(tasks.length * G), sampling, recordTokens: true,
        onRun: (_run, done, total) => o.onEvent?.({ type: 'rollout', iteration: k, done, total }),
      });
      finish(store, exp.id, res);
      if (res.cancelled) {
        cancelled = true;
        break;
      }
      const runs = store.listRuns(exp.id);
      const calls = store.getExperimentCalls(exp.id);
      const { rows, summary } = groupRollouts(runs, G, o.roles);
      store.improve.saveAdvantages(rows);
      const tSampled = performance.now();

      // One policy step per trained role, on the role's own calls and advantages.
      const steps = new Map<string, { step?: StepResult; samples: number; signal: number }>();
      for (const role of o.roles) {
        const adv = new Map(rows.filter((r) => r.role === role && r.mode === 'ladder').map((r) => [r.runId, r.advantage]));
        const samples = policySamples(calls, role, (runId) => adv.get(runId));
        const signal = samples.filter((s) => s.advantage !== 0).length;
        const step = samples.length
          ? await state.get(role)!.model.policyStep(samples, { lr: o.lr, kl: o.kl, temperature: o.temperature, ...(o.maxGradNorm !== undefined ? { maxGradNorm: o.maxGradNorm } : {}) })
          : undefined;
        steps.set(role, { step, samples: samples.length, signal });
      }
      const tTrained = performance.now();

      // Write each updated role's new version, record it, reload the provider with the new files.
      const roleMetrics: Record<string, RoleIterationMetrics> = {};
      for (const role of o.roles) {
        const st = state.get(role)!;
        const { step, samples, signal } = steps.get(role)!;
        const m: RoleIterationMetrics = {
          reward: mean(runs.map((r) => r.ladder?.[role]?.reward).filter(isNum)),
          rungs: rungMeans(runs, role),
          samples,
          signalSamples: signal,
          zeroSpreadGroups: summary.roles[role]?.zeroSpreadGroups ?? 0,
          trainTokens: step?.tokens ?? 0,
          path: st.path,
        };
        if (step) {
          m.loss = step.loss;
          if (step.kl !== undefined) m.kl = step.kl;
          if (step.ms > 0) m.trainTokensPerSecond = step.tokens / (step.ms / 1000);
          const dir = path.join(o.versionsDir, loopId, safeName(role));
          mkdirSync(dir, { recursive: true });
          const file = path.join(dir, `iter-${String(k).padStart(3, '0')}.gguf`);
          const tWrite = performance.now();
          await st.model.writeGguf(file);
          const writeSeconds = (performance.now() - tWrite) / 1000;
          const version = store.weights.save({
            role,
            basePath: st.basePath,
            path: file,
            ...(st.parentId ? { parentId: st.parentId } : {}),
            experimentId: exp.id,
            iteration: k,
            hyper: { ...hyper, mode: 'grpo' },
            // Seconds: sampling and training of the iteration, and this role's GGUF write (the reload comes after the version is stored).
            metrics: {
              reward: m.reward, score: mean(runs.map((r) => r.score)), loss: step.loss, kl: step.kl ?? null, samples, signalSamples: signal, tokens: step.tokens,
              rungs: m.rungs, trainTokensPerSecond: m.trainTokensPerSecond ?? null,
              seconds: { sampling: (tSampled - t0) / 1000, training: (tTrained - tSampled) / 1000, write: writeSeconds },
            },
          });
          st.parentId = version.id;
          st.path = file;
          st.versions.push(version.id);
          models.models[trainRef(role)] = file;
          m.versionId = version.id;
          m.path = file;
        }
        roleMetrics[role] = m;
      }
      if ([...steps.values()].some((s) => s.step)) {
        await provider.dispose();
        provider = undefined;
        provider = await o.makeProvider(snapshot());
      }
      const tEnd = performance.now();
      const sampledTokens = calls.reduce((s, c) => s + (c.completionTokenIds?.length ?? c.completionTokens), 0);
      const metrics: IterationMetrics = {
        iteration: k,
        experimentId: exp.id,
        score: mean(runs.map((r) => r.score)),
        roles: roleMetrics,
        sampledTokens,
        sampleTokensPerSecond: sampledTokens / Math.max(1e-9, (tSampled - t0) / 1000),
        seconds: { sampling: (tSampled - t0) / 1000, training: (tTrained - tSampled) / 1000, writeReload: (tEnd - tTrained) / 1000, total: (tEnd - t0) / 1000 },
      };
      iterations.push(metrics);
      o.onEvent?.({ type: 'iteration', metrics });
    }
    const after = before && !cancelled ? await evaluate('after') : undefined;
    return {
      loopId,
      roles: [...o.roles],
      iterations,
      ...(before && after ? { heldout: { before, after } } : {}),
      versions: Object.fromEntries([...state].map(([role, s]) => [role, s.versions])),
      finalModels: Object.fromEntries([...state].map(([role, s]) => [role, s.path])),
      cancelled,
      hyper,
    };
  } finally {
    await provider?.dispose();
    for (const m of trainables) m.dispose();
  }
}

function finish(store: Store, id: ExperimentId, res: { cancelled: boolean; halted?: string }): void {
  if (res.halted) {
    store.finishExperiment(id, 'failed');
    throw new Error(`train-loop: experiment ${id} halted: ${res.halted}`);
  }
  store.finishExperiment(id, res.cancelled ? 'cancelled' : 'completed');
}

function rungMeans(runs: readonly RunRecord[], role: string): Record<(typeof RUNGS)[number], number> {
  const ladders = runs.map((r) => r.ladder?.[role]).filter((l) => l !== undefined);
  return Object.fromEntries(RUNGS.map((rung) => [rung, mean(ladders.map((l) => l[rung]))])) as Record<(typeof RUNGS)[number], number>;
}

const isNum = (x: number | undefined): x is number => typeof x === 'number' && Number.isFinite(x);
const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0);
const safeName = (role: string) => role.replace(/[^A-Za-z0-9_.-]/g, '_');
