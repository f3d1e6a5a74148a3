/**
 * An orchestrated MASS run: a design (or the bare task) compiled into a workflow
 * (compile.ts), run on one task as an ordinary stored Flowlab run (stored.ts), and read back as a
 * workspace: answer, external grade, artefacts, every agent's conversation, delegation, tokens.
 */
import type { RoleName } from '../ids.ts';
import type { ModelProvider } from '../model/provider.ts';
import type { RunRecord } from '../results/index.ts';
import { openStore } from '../store/index.ts';
import type { Store } from '../store/index.ts';
import type { Task } from '../tasks/types.ts';
import { defaultTools } from '../tools/index.ts';
import type { NodeEvent } from '../trace/index.ts';
import { compileMass, MASS_BUDGET, type CompiledMass, type MassBudget } from './compile.ts';
import { massTools } from './redelegate.ts';
import { runStep, type StepDeps } from './stored.ts';
import type { Conversation, MassDesign, MassFamily, Workspace } from './types.ts';

/** What `runMass` needs. Without `store` the run is kept in a private in-memory store (tests, one-off runs). */
export interface MassRunDeps extends Partial<Omit<StepDeps, 'provider' | 'store'>> {
  provider: ModelProvider;
  family: MassFamily;
  store?: Store;
}

export interface MassRunOptions {
  /** The step's experiment id (default `mass-<task id>-<v|bare>-<seed>`); the same id reads the stored run back. */
  experimentId?: string;
  /** The design's version number, recorded in the workspace (null or absent with no design). */
  version?: number | null;
  /** Run seed (default 1). */
  seed?: number;
  budget?: MassBudget;
  /** Recorded in the step's config (`config.mass`), e.g. the evolution, task and iteration. */
  about?: Record<string, unknown>;
  /** Who wrote the design: its nodes are wired by `human` (default) or by the `optimizer` role. */
  author?: 'human' | 'optimizer';
}

/**
 * Runs `design` (null: the bare task, the orchestrator alone, free to delegate) on `task` and
 * returns its workspace. The run is an ordinary Flowlab run of a `mass` experiment: credit,
 * ladder, `flowlab show` and `flowlab replay` work on it. Re-running with the same experiment id
 * reads the stored run back (resume). Errors: those of `runStep`.
 */
export async function runMass(design: MassDesign | null, task: Task, deps: MassRunDeps, opts: MassRunOptions = {}): Promise<Workspace> {
  const seed = opts.seed ?? 1;
  const compiled = compileMass(design, task, deps.family, opts.budget ?? MASS_BUDGET, 'mass', opts.author);
  const experimentId = opts.experimentId ?? `mass-${task.id.replace(/\//g, '-')}-${design ? `v${opts.version ?? 0}` : 'bare'}-${seed}`;
  const own = deps.store ? undefined : openStore(':memory:');
  const store = deps.store ?? own!;
  try {
    const modelFor = deps.modelFor ?? (design ? agentModels(design) : undefined);
    const step = await runStep(
      { store, provider: deps.provider, providerFor: deps.providerFor, tools: massTools(deps.tools ?? defaultTools()), signal: deps.signal, modelFor, config: deps.config, recordTokens: deps.recordTokens, sampling: deps.sampling, ...(deps.beforeSave && { beforeSave: deps.beforeSave }) },
      {
        experimentId,
        workflowText: compiled.workflowText,
        task,
        input: compiled.input,
        grader: deps.family.grader,
        checks: deps.family.checks,
        seed,
        about: { step: 'workspace', version: design ? (opts.version ?? 0) : null, ...opts.about },
      },
    );
    const grade = deps.family.grader.grade(parseAnswer(step.run.answer), task);
    return workspaceOf(step.run, step.events, compiled, design, opts.version ?? (design ? 0 : null), grade);
  } finally {
    own?.close();
  }
}

/** Per-role models from the design: an agent with `model` runs on that reference. */
function agentModels(design: MassDesign): ((role: RoleName) => string) | undefined {
  const refs = new Map(design.agents.filter((a) => a.model).map((a) => [a.agent_id, a.model!]));
  return refs.size ? (role) => refs.get(role) ?? 'default' : undefined;
}

/** The stored answer text as the grader reads it (JSON text of a decoded value, or plain text). */
function parseAnswer(answer: string | undefined): unknown {
  if (answer === undefined) return undefined;
  try {
    return JSON.parse(answer);
  } catch {
    return answer;
  }
}

/** The workspace of a stored MASS run (pure): see `Workspace`. */
export function workspaceOf(run: RunRecord, events: readonly NodeEvent[], compiled: CompiledMass, design: MassDesign | null, version: number | null, grade: Workspace['grade']): Workspace {
  const ordered = [...events].sort((a, b) => a.seq - b.seq);
  const conversations: Conversation[] = [];
  for (const e of ordered) {
    if (e.kind !== 'agent' || !e.calls.length) continue;
    const agent = e.role === 'helper' || e.role === 'orchestrator' ? String(e.role) : String(e.role ?? e.nodeId);
    const messages: Conversation['messages'] = [];
    if (e.calls[0]!.system) messages.push({ role: 'system', content: e.calls[0]!.system });
    for (const c of e.calls) {
      messages.push({ role: 'user', content: c.prompt });
      messages.push({ role: 'assistant', content: c.completion });
    }
    conversations.push({ agent, nodeId: e.nodeId, messages });
  }
  const hopIds = new Map(compiled.hopNodes.map((h) => [h.nodeId, h.agent]));
  const files: Record<string, string> = {};
  const contractFailures: Workspace['contractFailures'] = [];
  let delegated = false;
  let handoffs = 0;
  for (const e of ordered) {
    const agent = hopIds.get(e.nodeId) ?? (e.nodeId === 'helper' ? 'helper' : undefined);
    if (!agent) continue;
    if (e.status === 'ok' || e.status === 'failed') delegated = true;
    if (e.status === 'ok' && Object.entries(e.inputs).some(([k, v]) => /^r\d+$/.test(k) && v !== null && v !== undefined)) handoffs++;
    if (e.status === 'failed' && e.failureClass === 'execution') contractFailures.push({ nodeId: e.nodeId, agent, code: e.errorCode ?? 'FAILED', message: e.message ?? '' });
    const spec = design?.agents.find((a) => a.agent_id === agent);
    if (e.status === 'ok' && spec && e.output && typeof e.output === 'object') {
      for (const k of spec.contract.artefacts) {
        const v = (e.output as Record<string, unknown>)[k];
        if (typeof v === 'string') files[`${agent}/${k}`] = v;
      }
    }
  }
  if (run.answer !== undefined) files['answer'] = run.answer;
  const ws: Workspace = {
    experimentId: run.experimentId,
    runId: run.runId,
    version,
    status: run.status,
    taskPrompt: String(compiled.input.mass_task),
    designText: String(compiled.input.mass_design),
    grade,
    files,
    conversations,
    delegated,
    handoffs,
    contractFailures,
    tokens: { prompt: run.promptTokens, completion: run.completionTokens },
    seconds: Math.max(0, (run.endedAt - run.startedAt) / 1000),
  };
  if (run.answer !== undefined) ws.answer = run.answer;
  return ws;
}
