/**
 * Counterfactual blame (docs/fork.md): for every failed and every silent run of an experiment,
 * fork the run at chosen node runs with a corrected output (core/experiments/fork.ts) and see
 * whether the run flips to success. Structural blame (core/blame/credit) never re-runs anything, so it
 * cannot see a node that ran cleanly but was wrong; a fork that fixes one node and keeps the rest
 * of the world as recorded answers "had this node done its job, would the run have succeeded?"
 * (the counterfactual replay of AgenTracer, arXiv:2509.03312, and DoVer, arXiv:2512.06749, done
 * exactly: the upstream is the recording itself).
 *
 * The corrected output (`with`): `oracle` — the node's right output from its task family's oracle
 * (core/experiments/oracle.ts); where the family knows none, a node with a SIMULATED fault is re-run
 * without it (`unfault`: its own model's output); other nodes without one are reported as untried; `teacher` — the node's role re-run from there on by
 * another model; `output` — a given text (per node id, or one text for all).
 *
 * Reported (`scoreCounterfactual`, pure): per role and failure class, the causal precision of
 * structural blame (fixes of blamed nodes that flip the run / fixes tried), how often another
 * node's fix flips a failed run (what structure missed); for silent runs, the share given a
 * located cause (a flipping fix upstream of the answer node) and where; the agreement table of
 * the structurally blamed role against the counterfactual cause (the role of the most upstream
 * node whose fix flips the run); and, on SIMULATED injected faults, how often removing the
 * injected fault flips a run where it was the only fault (100% when the rest of the team is right).
 */
import type { Graph } from '../workflow/index.ts';
import { runGraphOf } from '../design/index.ts';
import type { RunRecord } from '../results/index.ts';
import type { NodeEvent } from '../trace/events.ts';
import { parseWorkflow } from '../workflow/index.ts';
import { storedWorkflowOptions } from './storedWorkflow.ts';
import { ForkError, forkRun, type ForkDeps, type Intervention } from './fork.ts';
import { nodeOracle } from './oracle.ts';

/** Which node runs of a run are fixed: the structurally blamed roots (silent runs, which have none: every node), every node, or one role's nodes. */
export type InterveneOn = { kind: 'blamed' } | { kind: 'each-node' } | { kind: 'role'; role: string };
/** Where the corrected output comes from. */
export type CorrectWith = { kind: 'oracle' } | { kind: 'teacher'; model: string } | { kind: 'output'; outputs: string | Record<string, string> };

/** One fork of one run at one node run. `flipped` null: not tried (`why`). */
export interface CounterfactualTrial {
  nodeId: string;
  attempt: number;
  role: string | null;
  /** Whether structural credit blamed this node (a root failure). */
  blamed: boolean;
  /** The SIMULATED fault kind injected here, if any. */
  injected?: string;
  /** The node is the workflow's answer node (its oracle is the grader's expected answer). */
  answerNode: boolean;
  intervention?: Intervention['kind'];
  flipped: boolean | null;
  why?: string;
  forkRunId?: string;
  /**
   * SIMULATED faults in the fork (node runs carrying `fault`): a fault planned for a node run the
   * parent never reached (it failed above it) fires once the fork gets there, so a run with one
   * realised fault can hide a second one.
   */
  faultsAfter?: number;
  /** Root failures of the fork that no SIMULATED fault explains (the model's own, below the fixed node). */
  naturalAfter?: number;
}

/** The counterfactual verdict on one failed or silent run. */
export interface CounterfactualRun {
  runId: string;
  taskIndex: number;
  silent: boolean;
  /**
   * Structural root failures (infrastructure ones left out). `at`: the node run a fix of the blame
   * changes — the root itself, or for a wiring fault the design stage's role is blamed for, the
   * design node (the designer's act is its design, not the designed node).
   */
  roots: Array<{ nodeId: string; role: string | null; failureClass: string; at: string }>;
  /** SIMULATED faults in the run (node runs carrying `fault`). */
  injected: Array<{ nodeId: string; attempt: number; kind: string }>;
  trials: CounterfactualTrial[];
  /** The most upstream node run (by the run's event order) whose fix flips the run; undefined when none does. */
  cause?: { nodeId: string; role: string | null; answerNode: boolean };
}

export interface RateCell {
  tried: number;
  flipped: number;
  /** flipped / tried; null when none tried. */
  rate: number | null;
}

export interface CounterfactualReport {
  experimentId: string;
  intervene: string;
  with: string;
  /** Failed or silent runs examined. */
  runs: number;
  forks: number;
  untried: number;
  /** Per `role/failureClass` of the structural root: blamed fixes tried and flipped (causal precision), and failed runs some non-blamed fix flipped. */
  byRoleClass: Record<string, RateCell & { runs: number; otherFlipped: number }>;
  /** Silent runs: how many, how many got a located cause (a flipping fix upstream of the answer node), answer-node-only flips, and causes by role. */
  silent: { runs: number; located: number; fraction: number | null; answerOnly: number; byRole: Record<string, number> };
  /** rows: structurally blamed role (`(silent)` for none); columns: counterfactual cause role (`(none)` when no fix flipped, `(answer node)` when only the answer node's fix did). */
  agreement: Record<string, Record<string, number>>;
  /** Share of runs where structure and counterfactual name the same role (silent runs with no flip count as agreeing). */
  agreementRate: number | null;
  /**
   * SIMULATED faults: runs whose only fault is one injected node run (none left in the fork once it
   * is removed), and how often removing it flipped the run (by role); `latent`: runs with one
   * realised fault whose fork met a second, planned for a node run the parent never reached;
   * `natural`: runs whose fork, the injected fault removed, failed on its own further down (the
   * model's own root failure: the injected fault was not the only one).
   */
  injected: RateCell & { byRole: Record<string, RateCell>; latent: number; natural: number };
  verdicts: CounterfactualRun[];
}

export interface CounterfactualOptions {
  experimentId: string;
  intervene: InterveneOn;
  with: CorrectWith;
  /** Examine at most this many failed or silent runs (task order). */
  maxRuns?: number;
  /** Store every fork (linked to its parent) instead of discarding it. */
  save?: boolean;
  threads?: number;
  signal?: AbortSignal;
  /** After each examined run. */
  onRun?: (verdict: CounterfactualRun, done: number, total: number) => void;
}

const SILENT = '(silent)';
const NONE = '(none)';
const ANSWER = '(answer node)';

/**
 * Runs counterfactual blame over an experiment's failed and silent runs (see the module comment).
 * Errors: StoreError NOT_FOUND (no experiment); a fork's own errors are recorded on its trial
 * (`flipped: null`, `why`), never thrown, except the model port's (a live model that cannot load).
 */
export async function counterfactualBlame(opts: CounterfactualOptions, deps: ForkDeps): Promise<CounterfactualReport> {
  const { store } = deps;
  const exp = store.getExperiment(opts.experimentId);
  const parse = storedWorkflowOptions(exp.config, deps.tools); // a MASS step's checks and tools
  const base = parseWorkflow(exp.workflowYaml, parse).graph;
  const runs = store.listRuns(exp.id).filter((r) => r.status !== 'cancelled' && !r.correct).slice(0, opts.maxRuns ?? Infinity);
  const verdicts: CounterfactualRun[] = [];
  for (const run of runs) {
    if (opts.signal?.aborted) break;
    const events = store.getRunEvents(run.runId);
    const graph = runGraphOf(base, events, parse);
    const verdict = verdictShell(run, events, graph);
    for (const c of candidates(verdict, events, graph, opts.intervene)) {
      const node = graph.nodes.find((n) => n.id === c.nodeId)!;
      const trial: CounterfactualTrial = { ...c, role: node.role ?? null, answerNode: graph.answer.node === node.id, flipped: null };
      const iv = interventionFor(opts.with, trial, { dataset: exp.dataset, expected: run.expected ?? '', node, graph });
      if (!iv) {
        trial.why = opts.with.kind === 'oracle' ? 'no oracle for this node' : opts.with.kind === 'teacher' ? 'the node has no role' : 'no output given for this node';
      } else {
        trial.intervention = iv.kind;
        try {
          const out = await forkRun({ parentRunId: run.runId, nodeId: c.nodeId, attempt: c.attempt, intervention: iv, ...(opts.threads !== undefined && { threads: opts.threads }) }, deps, { save: opts.save ?? false, signal: opts.signal });
          trial.flipped = out.run.correct;
          trial.faultsAfter = out.events.filter((e) => e.fault).length;
          trial.naturalAfter = (out.run.credit?.roots ?? []).filter((r) => !r.simulated && r.failureClass !== 'infrastructure').length;
          if (opts.save) trial.forkRunId = out.run.runId;
        } catch (err) {
          if (!(err instanceof ForkError)) throw err;
          trial.why = `${err.code}: ${err.message}`;
        }
      }
      verdict.trials.push(trial);
    }
    const order = new Map(events.map((e) => [`${e.nodeId}#${e.attempt}`, e.seq]));
    const flips = verdict.trials.filter((t) => t.flipped).sort((a, b) => (order.get(`${a.nodeId}#${a.attempt}`) ?? 0) - (order.get(`${b.nodeId}#${b.attempt}`) ?? 0));
    if (flips[0]) verdict.cause = { nodeId: flips[0].nodeId, role: flips[0].role, answerNode: flips[0].answerNode };
    verdicts.push(verdict);
    opts.onRun?.(verdict, verdicts.length, runs.length);
  }
  return scoreCounterfactual(verdicts, { experimentId: exp.id, intervene: describeIntervene(opts.intervene), with: describeWith(opts.with) });
}

function verdictShell(run: RunRecord, events: readonly NodeEvent[], graph: Graph): CounterfactualRun {
  const roleOf = (id: string) => graph.nodes.find((n) => n.id === id)?.role ?? null;
  const designRole = graph.designNode ? graph.nodes.find((n) => n.id === graph.designNode)?.design?.role : undefined;
  const roots = (run.credit?.roots ?? []).filter((r) => r.failureClass !== 'infrastructure').map((r) => {
    const role = r.blamed ?? roleOf(r.nodeId);
    const at = r.failureClass === 'wiring' && designRole && role === designRole && r.nodeId !== graph.designNode ? graph.designNode! : r.nodeId;
    return { nodeId: r.nodeId as string, role, failureClass: r.failureClass, at: at as string };
  });
  const injected = events.filter((e) => e.fault).map((e) => ({ nodeId: e.nodeId as string, attempt: e.attempt, kind: e.fault! }));
  return { runId: run.runId, taskIndex: run.taskIndex, silent: Boolean(run.credit?.silent) || (roots.length === 0 && run.status === 'completed'), roots, injected, trials: [] };
}

/** The node runs to fork at: the chosen ones (each node's final attempt that ran), plus every injected node run (the ground truth). */
function candidates(v: CounterfactualRun, events: readonly NodeEvent[], graph: Graph, on: InterveneOn): Array<{ nodeId: string; attempt: number; blamed: boolean; injected?: string }> {
  const last = new Map<string, NodeEvent>();
  for (const e of events) if ((e.status === 'ok' || e.status === 'failed') && (last.get(e.nodeId)?.attempt ?? -1) < e.attempt) last.set(e.nodeId, e);
  const blamed = new Set(v.roots.map((r) => r.at));
  const roleOf = (id: string) => graph.nodes.find((n) => n.id === id)?.role;
  let chosen = [...last.values()];
  if (on.kind === 'blamed' && blamed.size) chosen = chosen.filter((e) => blamed.has(e.nodeId));
  if (on.kind === 'role') chosen = chosen.filter((e) => roleOf(e.nodeId) === on.role);
  const out = new Map<string, { nodeId: string; attempt: number; blamed: boolean; injected?: string }>();
  for (const e of chosen) out.set(`${e.nodeId}#${e.attempt}`, { nodeId: e.nodeId, attempt: e.attempt, blamed: blamed.has(e.nodeId) });
  for (const f of v.injected) out.set(`${f.nodeId}#${f.attempt}`, { nodeId: f.nodeId, attempt: f.attempt, blamed: blamed.has(f.nodeId), injected: f.kind });
  const seq = new Map(events.map((e) => [`${e.nodeId}#${e.attempt}`, e.seq]));
  return [...out.entries()].sort(([a], [b]) => (seq.get(a) ?? 0) - (seq.get(b) ?? 0)).map(([, c]) => c);
}

function interventionFor(w: CorrectWith, t: CounterfactualTrial, ctx: Parameters<typeof nodeOracle>[0]): Intervention | undefined {
  switch (w.kind) {
    case 'oracle': {
      const output = nodeOracle(ctx);
      if (output !== undefined) return { kind: 'output', output };
      return t.injected ? { kind: 'unfault' } : undefined;
    }
    case 'teacher':
      return t.role ? { kind: 'role-model', role: t.role, model: w.model } : undefined;
    case 'output': {
      const output = typeof w.outputs === 'string' ? w.outputs : w.outputs[t.nodeId];
      return output === undefined ? undefined : { kind: 'output', output };
    }
    default:
      return w satisfies never;
  }
}

const cell = (): RateCell => ({ tried: 0, flipped: 0, rate: null });
const rate = (c: RateCell) => Object.assign(c, { rate: c.tried ? c.flipped / c.tried : null });

/**
 * The report of counterfactual verdicts (pure; see CounterfactualReport for each figure).
 * A failed run with several roots counts once per root's role and class; a run's structural role
 * in the agreement table is its first root's (`(silent)` with none), its counterfactual role the
 * cause's (`(none)` when no fix flipped it).
 */
export function scoreCounterfactual(verdicts: readonly CounterfactualRun[], meta: { experimentId: string; intervene: string; with: string }): CounterfactualReport {
  const byRoleClass: CounterfactualReport['byRoleClass'] = {};
  const silent: CounterfactualReport['silent'] = { runs: 0, located: 0, fraction: null, answerOnly: 0, byRole: {} };
  const agreement: CounterfactualReport['agreement'] = {};
  const injected: CounterfactualReport['injected'] = { ...cell(), byRole: {}, latent: 0, natural: 0 };
  let agree = 0;
  let forks = 0;
  let untried = 0;
  for (const v of verdicts) {
    forks += v.trials.filter((t) => t.flipped !== null).length;
    untried += v.trials.filter((t) => t.flipped === null).length;
    for (const root of v.roots) {
      const k = `${root.role ?? '(ambiguous)'}/${root.failureClass}`;
      const c = (byRoleClass[k] ??= { ...cell(), runs: 0, otherFlipped: 0 });
      c.runs++;
      for (const t of v.trials.filter((t) => t.nodeId === root.at && t.flipped !== null)) {
        c.tried++;
        if (t.flipped) c.flipped++;
      }
      if (v.trials.some((t) => !t.blamed && t.flipped)) c.otherFlipped++;
    }
    if (v.silent) {
      silent.runs++;
      const upstream = v.trials.filter((t) => t.flipped && !t.answerNode);
      if (upstream.length) {
        silent.located++;
        const role = upstream[0]!.role ?? NONE;
        silent.byRole[role] = (silent.byRole[role] ?? 0) + 1;
      } else if (v.cause) silent.answerOnly++;
    }
    const row = v.roots[0]?.role ?? (v.roots.length ? '(ambiguous)' : SILENT);
    const col = !v.cause ? NONE : v.cause.answerNode ? ANSWER : v.cause.role ?? NONE;
    (agreement[row] ??= {})[col] = (agreement[row]![col] ?? 0) + 1;
    if (row === col || (row === SILENT && col === NONE)) agree++;
    const faults = new Set(v.injected.map((f) => `${f.nodeId}#${f.attempt}`));
    if (faults.size === 1) {
      const f = v.injected[0]!;
      const t = v.trials.find((t) => t.nodeId === f.nodeId && t.attempt === f.attempt && t.flipped !== null);
      if (t && (t.faultsAfter ?? 0) > 0) injected.latent++;
      else if (t && (t.naturalAfter ?? 0) > 0) injected.natural++;
      else if (t) {
        const r = (injected.byRole[t.role ?? NONE] ??= cell());
        injected.tried++;
        r.tried++;
        if (t.flipped) { injected.flipped++; r.flipped++; }
      }
    }
  }
  for (const c of Object.values(byRoleClass)) rate(c);
  for (const c of Object.values(injected.byRole)) rate(c);
  rate(injected);
  silent.fraction = silent.runs ? silent.located / silent.runs : null;
  return { ...meta, runs: verdicts.length, forks, untried, byRoleClass, silent, agreement, agreementRate: verdicts.length ? agree / verdicts.length : null, injected, verdicts: [...verdicts] };
}

export function describeIntervene(on: InterveneOn): string {
  return on.kind === 'role' ? `role:${on.role}` : on.kind;
}

export function describeWith(w: CorrectWith): string {
  return w.kind === 'teacher' ? `teacher=${w.model}` : w.kind === 'output' ? 'output' : 'oracle';
}

/** Parses `--intervene`. Errors: ForkError BAD_INTERVENTION (field `intervene`). */
export function parseIntervene(text: string): InterveneOn {
  if (text === 'blamed' || text === 'each-node') return { kind: text };
  const m = /^role:(.+)$/.exec(text);
  if (m) return { kind: 'role', role: m[1]! };
  throw new ForkError('BAD_INTERVENTION', 'intervene', `--intervene "${text}": expected blamed, each-node or role:<role>`);
}
