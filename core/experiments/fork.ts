/**
 * Forks: re-run a stored run from one node run on, with one intervention there (docs/fork.md).
 *
 * Everything upstream of the fork node run is served from the parent's recording (the replay
 * provider the caller hands in, so no model is loaded for it; prompts are checked against the
 * recording), the fork node run gets the intervention, and the node and every node run that
 * depends on it run live. The fork is graded, credited and laddered like any run and stored whole
 * (its own experiment of kind `fork`, the run, and its link to the parent) in one transaction, or
 * not at all. The parent is never written.
 *
 * Which node runs are upstream (served from the recording) is decided from the parent's trace and
 * the graph it ran (a designed run: its design spliced in): a node run (n, k) runs live when n is
 * the fork node f and k >= the fork attempt a, or n is reachable from f in the graph (data,
 * control and loop edges) and it ended after f@a in the parent (its `seq`) or the parent never ran
 * it; every other node run is served from the recording. Forking at the design node makes every
 * designed node live. So a fork inside a loop attempt or inside a designer-generated graph re-runs
 * exactly from that node run, never what came before it.
 */
import { parseDocument } from 'yaml';
import { runGraph, runGraphOf } from '../design/index.ts';
import { NodeFailure, type RunnableTool, type ToolSource } from '../engine/index.ts';
import { asRunId, type RoleName } from '../ids.ts';
import type { ModelConfig, ModelPort } from '../model/config.ts';
import { missingConfigField, storedModels } from '../store/config.ts';
import { ModelError } from '../model/errors.ts';
import { loadedProvider, type GenerateRequest, type GenerateResult, type ModelProvider } from '../model/provider.ts';
import type { RunRecord } from '../results/index.ts';
import { computeWorkflowHash, newExperimentId, type ForkLink, type Store } from '../store/index.ts';
import { getDataset } from '../tasks/registry.ts';
import type { Dataset } from '../tasks/types.ts';
import type { ModelCallRecord, NodeEvent } from '../trace/events.ts';
import { jsonSchemaValidator, parseWorkflow, type Graph, type ToolLookup } from '../workflow/index.ts';
import { replayHintsFor } from '../distill/hooks.ts';
import { buildDesignInjector, buildInjector, checkFaultSpecs } from '../faults/experimentFaults.ts';
import { gradedRun, runIdOf, taskOf } from '../pipeline/index.ts';
import { ForkError, type Intervention } from './forkError.ts';
import { forkPlan } from './forkPlan.ts';
import { storedWorkflowOptions } from './storedWorkflow.ts';

export { ForkError, type ForkErrorCode, type Intervention } from './forkError.ts';
export { forkPlan, reachableFrom, parseNodeRef, type ForkSide } from './forkPlan.ts';

/** A recorded call with where it sat: what the replay provider serves (models/replay `RecordedCall`). */
export type RecordedCall = ModelCallRecord & { taskIndex: number; nodeId: string; attempt: number };

export interface ForkSpec {
  parentRunId: string;
  nodeId: string;
  /** The attempt of the node run to fork at (1-based). Default: the node's first recorded attempt. */
  attempt?: number;
  intervention: Intervention;
  /** CPU threads of the live models (default: the parent's). */
  threads?: number;
}

export interface ForkDeps {
  store: Store;
  /** Builds the live models, from the parent's stored model config (models/factory.ts fileModelPort). */
  models: ModelPort;
  tools: ToolSource & ToolLookup;
  /** A dataset by name (the grader). Default: core/tasks getDataset. */
  datasets?: (name: string, dataDir?: string) => Dataset;
  /** A provider serving recorded calls by (task, node, attempt, call) and never loading a model (models/replay ReplayProvider). */
  replay: (calls: RecordedCall[], options: { checkPrompts: boolean }) => ModelProvider;
}

/** Model calls of a fork by where they were answered. */
export interface ForkCallCounts {
  /** Served from the parent's recording (upstream), by node id. */
  recorded: Record<string, number>;
  /** The intervention's own answer at the fork node (an `output` on an agent node). */
  intervened: number;
  /** Answered by a live model, by node id. */
  live: Record<string, number>;
}

export interface ForkOutcome {
  /** The link as stored (absent with `save: false`). */
  link?: ForkLink;
  run: RunRecord;
  events: NodeEvent[];
  parent: RunRecord;
  nodeId: string;
  attempt: number;
  calls: ForkCallCounts;
  /** Models the live side loaded (0 when nothing ran live). */
  modelsLoaded: number;
}

/** The stored config of a fork's experiment: the parent's, plus the link. */
export interface ForkConfig {
  parentRunId: string;
  parentExperimentId: string;
  nodeId: string;
  attempt: number;
  intervention: Intervention;
}

/**
 * Forks a stored run at one node run with one intervention and stores the fork (unless
 * `options.save` is false), linked to its parent.
 * Errors (nothing stored, the parent untouched): ForkError UNKNOWN_RUN, UNKNOWN_NODE (not in the
 * graph the run ran; the message lists its nodes), NEVER_RAN (the node was never run: only skipped
 * or cascaded, or no event), UNKNOWN_ATTEMPT, BAD_INTERVENTION (a prompt on a tool or designed node,
 * `unfault` where no fault was injected, a role the workflow lacks), INCOMPLETE_RECORDING (no events,
 * a node run missing (a gap in `seq`), an agent node run with no recorded call, the task not planned, a recorded call missing when
 * served), RECORDING_MISMATCH (an upstream prompt differs from the recording), MODEL_FAILED (a live
 * model could not be found or loaded: nothing stored).
 */
export async function forkRun(spec: ForkSpec, deps: ForkDeps, options: { save?: boolean; signal?: AbortSignal } = {}): Promise<ForkOutcome> {
  const { store } = deps;
  const parent = findRun(store, spec.parentRunId);
  const exp = store.getExperiment(parent.experimentId);
  const config = exp.config ?? {};
  if (exp.kind === 'import') throw new ForkError('INCOMPLETE_RECORDING', 'run', `run ${parent.runId} was imported from traces (flowlab import): its model calls were not recorded by Flowlab, so there is nothing to serve a fork from`);
  // A MASS step (or a fork of one) parses and runs with the MASS checks and re-delegation tool.
  const { tools, checks } = storedWorkflowOptions(config, deps.tools);
  const base = parseWorkflow(exp.workflowYaml, { tools, checks }).graph;
  const events = store.getRunEvents(parent.runId);
  if (events.length === 0) throw new ForkError('INCOMPLETE_RECORDING', 'run', `run ${parent.runId} has no recorded node events; there is nothing to serve the fork from`);
  const ran = runGraphOf(base, events, { tools, checks });
  const node = ran.nodes.find((n) => n.id === spec.nodeId);
  if (!node) throw new ForkError('UNKNOWN_NODE', 'node', `run ${parent.runId} has no node "${spec.nodeId}" (its nodes: ${ran.nodes.map((n) => n.id).join(', ')})`);
  const runs = events.filter((e) => e.nodeId === spec.nodeId && (e.status === 'ok' || e.status === 'failed'));
  if (runs.length === 0) {
    const seen = events.filter((e) => e.nodeId === spec.nodeId).map((e) => `${e.status}@${e.attempt}`);
    throw new ForkError('NEVER_RAN', 'node', `node "${spec.nodeId}" never ran in run ${parent.runId} (${seen.length ? `recorded only as ${seen.join(', ')}` : 'no event recorded'}); fork at a node that ran, or at the one that failed above it`);
  }
  const attempt = spec.attempt ?? Math.min(...runs.map((e) => e.attempt));
  const at = runs.find((e) => e.attempt === attempt);
  if (!at) throw new ForkError('UNKNOWN_ATTEMPT', 'node', `node "${spec.nodeId}" of run ${parent.runId} has no run at attempt ${attempt} (attempts that ran: ${runs.map((e) => e.attempt).join(', ')})`);
  checkRecording(events, ran, parent.runId);
  const planned = store.listTasks(exp.id).find((t) => t.taskIndex === parent.taskIndex);
  if (!planned) throw new ForkError('INCOMPLETE_RECORDING', 'run', `experiment ${exp.id} plans no task ${parent.taskIndex} for run ${parent.runId}`);

  const iv = spec.intervention;
  // The workflow the fork runs (a prompt intervention edits the node's prompt in the text).
  let workflowYaml = exp.workflowYaml;
  let graph = base;
  if (iv.kind === 'prompt') {
    const own = base.nodes.find((n) => n.id === spec.nodeId);
    if (!own || own.kind !== 'agent') throw new ForkError('BAD_INTERVENTION', 'prompt', `--prompt: node "${spec.nodeId}" is ${own ? `a ${own.kind} node` : 'a designed node'}; only an agent node of the workflow has a prompt to change`);
    workflowYaml = withPrompt(exp.workflowYaml, own.path, iv.prompt);
    graph = parseWorkflow(workflowYaml, { tools, checks }).graph;
  }
  if (iv.kind === 'workflow') {
    workflowYaml = iv.text;
    graph = parseWorkflow(workflowYaml, { tools, checks }).graph; // SpecError, located, for a bad edit
    if (!graph.nodes.some((n) => n.id === spec.nodeId) && graph.designNode === undefined) {
      throw new ForkError('BAD_INTERVENTION', 'edit-workflow', `--edit-workflow: the edited workflow has no node "${spec.nodeId}" to fork at`);
    }
  }
  if ((iv.kind === 'role-model' || iv.kind === 'role-lora') && !base.roles.has(iv.role as RoleName)) {
    throw new ForkError('BAD_INTERVENTION', 'role-model', `--role-model: the workflow has no role "${iv.role}" (roles: ${[...base.roles.keys()].join(', ')})`);
  }
  const parentFaults = new Map(events.filter((e) => e.fault).map((e) => [`${e.nodeId}#${e.attempt}`, e.fault!]));
  if (iv.kind === 'unfault' && !parentFaults.has(`${spec.nodeId}#${attempt}`)) {
    throw new ForkError('BAD_INTERVENTION', 'intervene', `node run ${spec.nodeId}@${attempt} of run ${parent.runId} carries no SIMULATED fault to remove`);
  }

  // SIMULATED faults of a blame evaluation stay where they were, but for an `unfault` at the fork node run.
  const inject = exp.kind === 'blame-eval' || exp.kind === 'fork' ? config.inject ?? [] : [];
  const specs = inject.length ? checkFaultSpecs(base, inject) : [];
  const injector = specs.length ? buildInjector(base, specs, exp.seed) : undefined;
  const designInjector = specs.length ? buildDesignInjector(specs, exp.seed, tools) : undefined;
  const taskKey = String(parent.taskIndex);
  const isForkRun = (n: string, k: number) => n === spec.nodeId && k === attempt;
  // The fork node run is free of its planned fault when the fault is removed (`unfault`) or its output replaced whole (`output`).
  const faultFree = (n: string, k: number) => (iv.kind === 'unfault' || iv.kind === 'output') && isForkRun(n, k);
  // A design served from the recording gets the fault its parent's design run carried, no other (a fork of an `unfault` fork has none).
  const designFault = designInjector && ((ctx: Parameters<typeof designInjector.hook>[0]) => {
    const design = ran.designNode ?? '';
    if (faultFree(design, ctx.attempt)) return undefined;
    if (side(design, ctx.attempt) === 'recorded' && !parentFaults.has(`${design}#${ctx.attempt}`)) return undefined;
    return designInjector.hook(ctx);
  });

  // Reachability on the graph the fork runs (an edited workflow's new edges count), with the parent's design spliced in.
  const planGraph = iv.kind === 'workflow' ? runGraphOf(graph, events, { tools, checks }) : ran;
  const side = forkPlan(planGraph, events, spec.nodeId, attempt, iv.kind); // a tool node's output is replaced in forkTools, never asked of a provider
  const recordedCalls: RecordedCall[] = events.flatMap((e) => e.calls.map((c) => ({ ...c, taskIndex: parent.taskIndex, nodeId: e.nodeId, attempt: e.attempt })));
  const checked = deps.replay(recordedCalls, { checkPrompts: true });
  const loose = iv.kind === 'prompt' ? deps.replay(recordedCalls, { checkPrompts: false }) : checked;
  const recordedModels = storedModels(exp);
  if (!recordedModels) throw missingConfigField(exp.id, 'config.models');
  const liveModels = liveConfig(recordedModels, iv, spec.threads);
  const counts: ForkCallCounts = { recorded: {}, intervened: 0, live: {} };
  const problems: ModelError[] = [];
  let live: Promise<ModelProvider> | undefined;
  const liveProvider = () => (live ??= loadedProvider(deps.models.create, liveModels));
  const plain: ModelProvider = { name: 'fork live', modelsLoaded: () => 0, dispose: async () => {}, generate: async (r) => (await liveProvider()).generate(r) };
  const faulty = injector ? injector.wrapProvider(plain) : plain;
  const bump = (m: Record<string, number>, k: string) => void (m[k] = (m[k] ?? 0) + 1);
  const router: ModelProvider = {
    name: 'fork',
    modelsLoaded: () => 0,
    dispose: async () => {},
    async generate(req: GenerateRequest): Promise<GenerateResult> {
      const { nodeId, attempt: k } = req.key;
      const where = side(nodeId, k);
      if (where === 'recorded') {
        bump(counts.recorded, nodeId);
        try {
          return await (nodeId === spec.nodeId ? loose : checked).generate(req);
        } catch (e) {
          if (e instanceof ModelError && (e.code === 'REPLAY_MISSING' || e.code === 'REPLAY_PROMPT_MISMATCH')) problems.push(e);
          throw e;
        }
      }
      if (where === 'intervene') {
        counts.intervened++;
        return { text: (iv as { output: string }).output, tokens: { prompt: 0, completion: 0 }, ms: 0, seed: req.seed, model: 'fork intervention (output)', stopReason: 'eos' };
      }
      bump(counts.live, nodeId);
      return (iv.kind === 'unfault' && isForkRun(nodeId, k) ? plain : faulty).generate(req);
    },
  };
  const faultyTools = injector ? injector.wrapTools(tools) : tools;
  const forkTools: ToolSource = {
    get(name: string): RunnableTool | undefined {
      const tool = tools.get(name);
      if (!tool) return undefined;
      const wrapped = faultyTools.get(name)!;
      return {
        ...tool,
        run(inputs, ctx) {
          if (isForkRun(ctx.nodeId ?? '', ctx.attempt ?? 1)) {
            if (iv.kind === 'output') return toolOutput(tool, ctx.nodeId ?? '', iv.output);
            if (iv.kind === 'unfault') return tool.run(inputs, ctx);
          }
          return wrapped.run(inputs, ctx);
        },
      };
    },
  };

  const forkExperimentId = newExperimentId().replace(/^exp-/, 'fork-');
  const runId = runIdOf(forkExperimentId, parent.taskIndex);
  const hints = replayHintsFor(store, exp, base);
  const seed = iv.kind === 'seed' ? iv.seed : parent.seed;
  let outcome;
  try {
    outcome = await runGraph(graph, {
      runId,
      taskKey,
      taskInput: taskOf(planned).input,
      seed,
      provider: router,
      tools: forkTools,
      checks,
      signal: options.signal,
      modelFor: (role) => liveModels.roleModels[role] ?? 'default',
      // A rollout's calls sampled on-policy at the experiment's temperature (core/experiments/service.ts): so do its forks' live calls.
      ...(config.rollouts && { sampling: { temperature: config.rollouts.temperature, topK: 0, topP: 1, minP: 0 } }),
      hints: hints && ((role) => hints(role, parent.runId)),
      designFault,
    });
  } finally {
    if (live) await (await live.catch(() => undefined))?.dispose().catch(() => {});
  }
  const modelsLoaded = live ? (await live.catch(() => undefined))?.modelsLoaded() ?? 0 : 0;
  if (problems.length) {
    const p = problems[0]!;
    const code = p.code === 'REPLAY_MISSING' ? 'INCOMPLETE_RECORDING' : 'RECORDING_MISMATCH';
    throw new ForkError(code, 'run', `run ${parent.runId}: the recording cannot serve the fork's upstream (${problems.length} call(s)); first: ${p.message}`, { cause: p });
  }
  if (outcome.status === 'cancelled') throw new ForkError('INCOMPLETE_RECORDING', 'run', `the fork of ${parent.runId} was cancelled; nothing was stored`);
  const fatal = outcome.events.find((e) => e.failureClass === 'infrastructure' && /^MODEL_/.test(e.errorCode ?? ''));
  if (fatal) throw new ForkError('MODEL_FAILED', 'models', `the fork's live model failed at node ${fatal.nodeId}: ${fatal.errorCode}: ${fatal.message}; nothing was stored`);

  for (const e of outcome.events) {
    const key = `${e.nodeId}#${e.attempt}`;
    if (side(e.nodeId, e.attempt) === 'recorded' && parentFaults.has(key)) Object.assign(e, { simulated: true, fault: parentFaults.get(key) });
    else if (side(e.nodeId, e.attempt) !== 'recorded' && !faultFree(e.nodeId, e.attempt)) {
      const kind = injector?.faultAt(taskKey, e.nodeId, e.attempt);
      if (kind) Object.assign(e, { simulated: true, fault: kind });
    }
  }
  const dataset = (deps.datasets ?? ((n, d) => getDataset(n, { dataDir: d })))(exp.dataset, config.dataDir);
  const task = taskOf(planned);
  const run = await gradedRun(outcome, task, dataset.grader, { runId: asRunId(runId), experimentId: forkExperimentId as RunRecord['experimentId'], taskIndex: parent.taskIndex, taskId: parent.taskId, seed });
  const result: ForkOutcome = { run, events: outcome.events, parent, nodeId: spec.nodeId, attempt, calls: counts, modelsLoaded };
  if (options.save === false) return result;

  const fork: ForkConfig = { parentRunId: parent.runId, parentExperimentId: exp.id, nodeId: spec.nodeId, attempt, intervention: iv };
  const { fork: _parentFork, ...inherited } = config;
  result.link = store.forks.commit({
    experiment: {
      id: forkExperimentId,
      kind: 'fork',
      workflowName: exp.workflowName,
      workflowYaml,
      workflowHash: workflowYaml === exp.workflowYaml ? exp.workflowHash : computeWorkflowHash(workflowYaml),
      dataset: exp.dataset,
      split: exp.split,
      limit: 1,
      seed: exp.seed,
      config: { ...inherited, models: liveModels, fork },
      tasks: [planned],
    },
    run,
    events: outcome.events,
    link: { parentRunId: parent.runId, parentExperimentId: exp.id, nodeId: spec.nodeId, attempt, intervention: iv as unknown as Record<string, unknown> },
  });
  const used = usedCards(store, parent.runId);
  if (used.length) store.improve.recordUses(runId, used);
  return result;
}

function findRun(store: Store, runId: string): RunRecord {
  try {
    return store.getRun(runId);
  } catch (err) {
    if ((err as { code?: string }).code === 'NOT_FOUND') throw new ForkError('UNKNOWN_RUN', 'run', `no run "${runId}" in ${store.file} (a run id is <experiment-id>/<task index>)`, { cause: err });
    throw err;
  }
}

/**
 * The recording must hold every node run (their `seq`, the completion order, is 0..n-1 with no gap:
 * a missing one that ran before the fork node run would otherwise be taken for one that never ran,
 * and run live in its place), and every agent node run that ran ok must have its model calls.
 */
function checkRecording(events: readonly NodeEvent[], graph: Graph, runId: string): void {
  const seqs = new Set(events.map((e) => e.seq));
  const last = Math.max(...seqs);
  const missing: number[] = [];
  for (let q = 0; q <= last && missing.length < 10; q++) if (!seqs.has(q)) missing.push(q);
  if (missing.length) {
    throw new ForkError('INCOMPLETE_RECORDING', 'run', `run ${runId}: node runs are missing from the recording (seq ${missing.join(', ')}${missing.length === 10 ? ', ...' : ''} of 0..${last}); the fork cannot serve what ran before its node from it`);
  }
  const kinds = new Map(graph.nodes.map((n) => [n.id as string, n.kind]));
  for (const e of events) {
    if (e.status === 'ok' && kinds.get(e.nodeId) !== 'tool' && e.calls.length === 0 && !(graph.designNode === e.nodeId && e.output === undefined)) {
      throw new ForkError('INCOMPLETE_RECORDING', 'run', `run ${runId}: node run ${e.nodeId}@${e.attempt} ended ok but has no recorded model call; the recording is incomplete`);
    }
  }
}

/** The parent's models with the intervention's role model and the thread count applied. */
function liveConfig(models: ModelConfig, iv: Intervention, threads?: number): ModelConfig {
  let cfg: ModelConfig = { ...models, ...(threads !== undefined && { threads }) };
  if (iv.kind === 'role-model' || iv.kind === 'role-lora') {
    const ref = `fork:${iv.role}`;
    const file = iv.kind === 'role-model' ? iv.model : cfg.models[cfg.roleModels[iv.role] ?? 'default'];
    if (file === undefined) throw new ForkError('BAD_INTERVENTION', 'role-lora', `--role-lora: the run records no model for role "${iv.role}" to put the adapter on`);
    cfg = { ...cfg, models: { ...cfg.models, [ref]: file }, roleModels: { ...cfg.roleModels, [iv.role]: ref } };
    if (iv.kind === 'role-lora') cfg = { ...cfg, loras: { ...cfg.loras, [ref]: [iv.lora] } };
    if (cfg.fingerprints) cfg = { ...cfg, fingerprints: Object.fromEntries(Object.entries(cfg.fingerprints).filter(([k]) => k !== ref)) };
  }
  return cfg;
}

/** The workflow text with one node's prompt replaced at its document path (comments and layout kept). */
function withPrompt(text: string, path: readonly (string | number)[], prompt: string): string {
  const doc = parseDocument(text);
  doc.setIn([...path, 'prompt'], prompt);
  return doc.toString();
}

/**
 * A tool node's replaced output: the text as JSON when it parses, else the text, checked against
 * the tool's declared output schema (ajv, as the engine checks an agent's completion). One that
 * breaks it is the node's own recorded failure (CONTRACT_VIOLATION, class execution), so the node
 * reading it never runs on a value its tool could not have returned and the blame stays here.
 */
function toolOutput(tool: RunnableTool, nodeId: string, text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = text;
  }
  const validate = jsonSchemaValidator.compile(tool.output);
  if (!validate(value)) {
    throw new NodeFailure('execution', 'CONTRACT_VIOLATION', `the fork's output for tool node ${nodeId} breaks the ${tool.name} tool's output schema: ${jsonSchemaValidator.errorsText(validate.errors, { dataVar: 'output' })}`);
  }
  return value;
}

function usedCards(store: Store, runId: string): string[] {
  return store.improve.listCards().filter((c) => store.improve.usesOf(c.id).includes(runId)).map((c) => c.id);
}

/** The fork link of a run, or undefined when it is not a fork. */
export function forkOf(store: Store, runId: string): ForkLink | undefined {
  return store.forks.linkOf(runId);
}
