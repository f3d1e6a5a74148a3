/**
 * SIMULATED wiring faults put into a designer's design before it is compiled, with their ground
 * truth (docs/credit.md, "Fault injection (simulated) and blame evaluation"). Each kind is a pure
 * function on the parsed design document (steps notation `{steps: [...]}`, graph notation
 * `{nodes: [...], edges?: [...]}`) that returns a tampered copy and the designed node that becomes
 * the root failure; the design stage (core/design/run.ts, DesignFaultHook) then compiles the
 * tampered copy, so the validator, the engine and credit see an ordinary wiring fault:
 * - `dangling_edge`: an input source of a node rewritten to a node id the design does not have
 *   (the next unused design id, e.g. `c` in a two-step design) -> DANGLING_EDGE at that node;
 * - `unknown_tool`: a tool step's tool renamed to a name outside the catalogue (`weather_v2`)
 *   -> UNKNOWN_TOOL at that step;
 * - `missing_port`: a required input port of a tool step removed -> MISSING_PORT at that step;
 * - `unbounded_loop`: a required input of an earlier node rewritten to read a later node that
 *   depends on it, closing a cycle without `max_iterations` -> UNBOUNDED_CYCLE at the earlier node
 *   (chosen so that no node before it reaches the cycle: depth-first search in document order,
 *   Cormen et al. §22.3, then closes the cycle on exactly that node's input).
 * What the faulted node feeds cascades. A kind that has no place in a design (no tool step, a
 * single step, the `states` or `code` notation) injects nothing: it is counted not applicable.
 * FloWright, "structure-aware credit": a wiring fault is a root failure of the role that wired it.
 */
import type { DesignFaultHook } from '../design/run.ts';
import type { DesignFaultMark, DesignRecord } from '../design/record.ts';
import { deriveSeed } from '../random.ts';
import type { NodeEvent } from '../trace/events.ts';
import { designIds } from '../workflow/compile/designStage.ts';
import type { ToolLookup } from '../workflow/compile/types.ts';
import type { DesignNotation, DesignStage } from '../workflow/graph.ts';
import { isDesignFaultKind, type DesignFaultKind, type FaultSpec } from './inject.ts';

export interface DesignFaultContext {
  notation: DesignNotation;
  stage: DesignStage;
  /** The tool registry (ports of tool steps: which are required). */
  tools: ToolLookup;
  /** Uniform in [0, 1): which of the places the kind applies to gets the fault. */
  pick: number;
}

/** A tampered design and its ground truth. */
export interface TamperedDesign {
  document: unknown;
  fault: DesignFaultMark;
}

type Raw = Record<string, unknown>;
interface DesignView {
  copy: Raw;
  nodes: Raw[];
  ids: string[];
  /** Forward (non-loop) edges `from -> to` between designed nodes, from inputs, depends_on and edges. */
  edges: Array<{ from: string; to: string }>;
  /** `id\0port` of ports a declared edge feeds (a rewrite there would not stand alone). */
  edgeFed: Set<string>;
  stage: DesignStage;
  tools: ToolLookup;
}
interface Place {
  nodeId: string;
  apply: () => void;
}

const LIST_KEY: Partial<Record<DesignNotation, 'steps' | 'nodes'>> = { steps: 'steps', graph: 'nodes' };
const isObject = (v: unknown): v is Raw => !!v && typeof v === 'object' && !Array.isArray(v);
const sourceOf = (v: unknown): string | undefined => (typeof v === 'string' ? v : isObject(v) && typeof v.from === 'string' ? v.from : undefined);
const isOptional = (v: unknown) => isObject(v) && v.optional === true;
const inputsOf = (n: Raw): Raw => (isObject(n.inputs) ? n.inputs : {});
const withSource = (v: unknown, from: string) => (isObject(v) ? { ...v, from } : from);

/**
 * Puts one SIMULATED wiring fault of `kind` into a copy of `document` (never changes it) at the
 * place `ctx.pick` chooses among the places the kind applies to. Returns the tampered copy and
 * the ground truth `{kind, nodeId, simulated: true}`, or undefined when the kind cannot apply to
 * this design (or the design is not a steps/graph document with unique string ids). Pure.
 */
export function injectDesignFault(kind: DesignFaultKind, document: unknown, ctx: DesignFaultContext): TamperedDesign | undefined {
  const key = LIST_KEY[ctx.notation];
  if (!key || !isObject(document) || !Array.isArray(document[key])) return undefined;
  const copy = JSON.parse(JSON.stringify(document)) as Raw;
  const nodes = copy[key] as unknown[];
  if (!nodes.every((n) => isObject(n) && typeof n.id === 'string' && n.id)) return undefined;
  const raw = nodes as Raw[];
  const ids = raw.map((n) => n.id as string);
  if (new Set(ids).size !== ids.length) return undefined;
  const view: DesignView = { copy, nodes: raw, ids, edges: edgesOf(copy, raw, ids), edgeFed: edgeFedPorts(copy), stage: ctx.stage, tools: ctx.tools };
  const places = PLACES[kind](view);
  if (!places.length) return undefined;
  const place = places[Math.min(places.length - 1, Math.floor(ctx.pick * places.length))]!;
  place.apply();
  return { document: copy, fault: { kind, nodeId: place.nodeId, simulated: true } };
}

const PLACES: Record<DesignFaultKind, (v: DesignView) => Place[]> = {
  dangling_edge(v) {
    const ghost = [...designIds(v.ids.length + 1), 'ghost'].find((id) => !v.ids.includes(id))!;
    return portsOf(v).map(({ node, port }) => ({ nodeId: node.id as string, apply: () => void (inputsOf(node)[port] = withSource(inputsOf(node)[port], ghost)) }));
  },
  unknown_tool(v) {
    return v.nodes.filter((n) => typeof n.tool === 'string').map((node) => ({
      nodeId: node.id as string,
      apply: () => {
        let name = `${node.tool as string}_v2`;
        while (v.stage.catalogue.tools.includes(name) || v.tools.get(name)) name += '_';
        node.tool = name;
      },
    }));
  },
  missing_port(v) {
    const out: Place[] = [];
    for (const node of v.nodes) {
      const shape = typeof node.tool === 'string' && v.stage.catalogue.tools.includes(node.tool) ? v.tools.get(node.tool) : undefined;
      if (!shape) continue;
      for (const port of Object.keys(inputsOf(node))) {
        const def = shape.inputs[port];
        if (def && !def.optional && !v.edgeFed.has(`${node.id as string}\u0000${port}`)) out.push({ nodeId: node.id as string, apply: () => void delete inputsOf(node)[port] });
      }
    }
    return out;
  },
  unbounded_loop(v) {
    if (cyclic(v.ids, v.edges)) return [];
    const out: Place[] = [];
    v.ids.forEach((early, i) => {
      for (const { node, port } of portsOf(v).filter((p) => p.node.id === early && !isOptional(inputsOf(p.node)[p.port]))) {
        for (const late of v.ids.slice(i + 1)) {
          if (!reach(early, v.edges).has(late)) continue;
          // The tampered edges: this port's edge (one per port) now comes from `late`.
          const old = sourceOf(inputsOf(node)[port])!.split('.')[0]!;
          const edges = [...v.edges];
          const at = edges.findIndex((e) => e.from === old && e.to === early);
          if (at >= 0) edges.splice(at, 1);
          edges.push({ from: late, to: early });
          // No node before `early` may reach the cycle, so the search closes it on `early`'s input.
          if (v.ids.slice(0, i).some((k) => reach(k, edges).has(early))) continue;
          out.push({ nodeId: early, apply: () => void (inputsOf(node)[port] = withSource(inputsOf(node)[port], late)) });
        }
      }
    });
    return out;
  },
};

/** Every input port of every node whose source is a string (or `{from}`), not fed by a declared edge. */
function portsOf(v: DesignView): Array<{ node: Raw; port: string }> {
  return v.nodes.flatMap((node) => Object.keys(inputsOf(node)).filter((port) => sourceOf(inputsOf(node)[port]) !== undefined && !v.edgeFed.has(`${node.id as string}\u0000${port}`)).map((port) => ({ node, port })));
}

function edgesOf(doc: Raw, nodes: Raw[], ids: string[]): Array<{ from: string; to: string }> {
  const known = new Set(ids);
  const out: Array<{ from: string; to: string }> = [];
  for (const n of nodes) {
    for (const v of Object.values(inputsOf(n))) {
      const head = sourceOf(v)?.split('.')[0];
      if (head && known.has(head)) out.push({ from: head, to: n.id as string });
    }
    if (Array.isArray(n.depends_on)) for (const d of n.depends_on) if (typeof d === 'string' && known.has(d)) out.push({ from: d, to: n.id as string });
  }
  if (Array.isArray(doc.edges)) {
    for (const e of doc.edges) if (isObject(e) && !e.max_iterations && known.has(e.from as string) && known.has(e.to as string)) out.push({ from: e.from as string, to: e.to as string });
  }
  return out;
}

function edgeFedPorts(doc: Raw): Set<string> {
  const out = new Set<string>();
  if (Array.isArray(doc.edges)) for (const e of doc.edges) if (isObject(e) && (e.type ?? 'data') === 'data') out.add(`${String(e.to)}\u0000${String(e.port ?? e.from)}`);
  return out;
}

/** Nodes reachable from `from` along `edges` (`from` itself included). */
function reach(from: string, edges: ReadonlyArray<{ from: string; to: string }>): Set<string> {
  const seen = new Set([from]);
  const queue = [from];
  while (queue.length) {
    const x = queue.pop()!;
    for (const e of edges) if (e.from === x && !seen.has(e.to)) { seen.add(e.to); queue.push(e.to); }
  }
  return seen;
}

function cyclic(ids: string[], edges: ReadonlyArray<{ from: string; to: string }>): boolean {
  return ids.some((id) => edges.some((e) => e.from === id && reach(e.to, edges).has(id)));
}

/** What the injector did to one design: kinds drawn that had no place in it, and the fault put in. */
export interface DesignFaultDecision {
  notApplicable: DesignFaultKind[];
  tampered?: TamperedDesign;
}

/**
 * The design-fault side of a blame evaluation: the design kinds of `specs` (role = the design
 * role), each drawn at its rate, deterministically in (seed, spec index, task key, attempt) like
 * FaultInjector, so a resumed or replayed evaluation tampers exactly the same designs. Specs are
 * tried in order; the first drawn kind that applies is put in (one fault per design); a drawn
 * kind with no place in the design is recorded not applicable and the next spec is tried.
 * `hook` is the DesignFaultHook the design stage calls (core/design/run.ts).
 */
export class DesignFaultInjector {
  constructor(
    readonly specs: readonly FaultSpec[],
    readonly seed: number,
    private readonly tools: ToolLookup,
  ) {}

  /** Whether any spec is a design kind. */
  get active(): boolean {
    return this.specs.some((s) => isDesignFaultKind(s.kind));
  }

  decide(ctx: { taskKey: string; attempt: number; notation: DesignNotation; document: unknown; stage: DesignStage }): DesignFaultDecision {
    const notApplicable: DesignFaultKind[] = [];
    for (const [i, spec] of this.specs.entries()) {
      const kind = spec.kind;
      if (!isDesignFaultKind(kind) || spec.node || spec.role !== ctx.stage.role) continue;
      if (!(deriveSeed(this.seed, 'design-fault', i, ctx.taskKey, ctx.attempt) / 0x80000000 < spec.rate)) continue;
      const pick = deriveSeed(this.seed, 'design-fault-place', i, ctx.taskKey, ctx.attempt) / 0x80000000;
      const tampered = injectDesignFault(kind, ctx.document, { notation: ctx.notation, stage: ctx.stage, tools: this.tools, pick });
      if (tampered) return { notApplicable, tampered };
      notApplicable.push(kind);
    }
    return { notApplicable };
  }

  readonly hook: DesignFaultHook = (ctx) => this.decide(ctx).tampered;

  /**
   * The kinds drawn but not applicable for one stored run, recomputed from its design record (the
   * design node's final event output): the designer's own document (the record's `document`, or
   * the parsed `text` when a fault replaced it) through `decide` again. [] when the design node
   * wrote no document (it failed before the hook ran).
   */
  notApplicableIn(events: readonly NodeEvent[], designNode: string, stage: DesignStage, taskKey: string): DesignFaultKind[] {
    let ev: NodeEvent | undefined;
    for (const e of events) if (e.nodeId === designNode && (!ev || e.attempt >= ev.attempt)) ev = e;
    const record = ev?.output as DesignRecord | undefined;
    if (!ev || !record || typeof record !== 'object' || record.document === undefined) return [];
    let document: unknown = record.document;
    if (record.fault) {
      try {
        document = record.notation === 'code' ? record.text : JSON.parse(record.text);
      } catch {
        return [];
      }
    }
    return this.decide({ taskKey, attempt: ev.attempt, notation: record.notation, document, stage }).notApplicable;
  }
}
