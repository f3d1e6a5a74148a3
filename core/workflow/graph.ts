import type { NodeId, RoleName } from '../ids.ts';
import type { JsonSchema } from '../model/provider.ts';
import type { Condition } from './condition.ts';

/** A location inside the workflow document, e.g. `['nodes', 2, 'inputs', 'plan']`. */
export type DocPath = ReadonlyArray<string | number>;

export type RoleKind = 'generator' | 'planner' | 'executor' | 'verifier' | 'orchestrator' | 'answerer';
export type NodeKind = 'agent' | 'tool' | 'skill';
export type EdgeType = 'data' | 'control';
export type PortType = 'string' | 'number' | 'boolean' | 'object' | 'array' | 'any';

/** Per-role weights of the reward ladder (FloWright; docs/credit.md): h = wf·f + wv·v + we·e + wa·a + wc·c. */
export interface LadderWeights {
  format: number;
  validity: number;
  completion: number;
  correctness: number;
  credit: number;
}

export interface Role {
  name: RoleName;
  kind: RoleKind;
  /** Model reference: a key of `Graph.models`, or `default` (filled by `--model`). */
  model: string;
  /** System instructions for every node this role runs. */
  instructions: string;
  /** Most hint cards injected into this role's prompts; 0 (the default) sets no cap: the token budget decides (docs/hint-cards.md). */
  hintSlots: number;
  /** Ladder weights as written in the document (partial); defaults are applied by core/reward. */
  weights?: Partial<LadderWeights>;
}

export interface ModelRef {
  name: string;
  path?: string;
  contextSize?: number;
  threads?: number;
  gpu?: 'auto' | false;
}

/** Where an input port's value comes from. */
export type PortSource =
  | { kind: 'task'; field: string }
  | { kind: 'node'; node: NodeId; field?: string };

export interface InputPort {
  name: string;
  source: PortSource;
  type?: PortType;
  /** An optional port gets `null` when its source failed or was skipped, instead of cascading. */
  optional: boolean;
  /** True for ports fed by a loop back edge (absent on the first pass). */
  loop?: boolean;
  path: DocPath;
}

/** What a node must hand back: a JSON schema (also used as a decoding grammar) and named checks. */
export interface Contract {
  schema?: JsonSchema;
  checks: string[];
}

export interface GraphNode {
  id: NodeId;
  kind: NodeKind;
  /** The role that runs the node (agent and skill nodes; optional on tool nodes). */
  role?: RoleName;
  /** Who wired this node in (a role name, or `human`). */
  wiredBy: RoleName;
  /** Further wirers when authorship is shared (`wired_by: [a, b]`): blame becomes ambiguous. */
  sharedWiredBy?: RoleName[];
  tool?: string;
  skill?: string;
  /** Prompt template (`{{port}}`, `{{port.field}}`, `{{task.field}}`). */
  prompt?: string;
  inputs: InputPort[];
  contract?: Contract;
  maxTokens: number;
  temperature: number;
  stop?: string[];
  timeoutMs?: number;
  path: DocPath;
  /** Set on the design node (a workflow's `design:` stage, core/design): what its role may design. */
  design?: DesignStage;
  /**
   * Set on a designed node whose wiring the validator rejected (core/design): the engine records
   * it failed with this wiring fault instead of running it, so it is a root failure blamed on its
   * wirer (the designer) and the nodes it feeds cascade.
   */
  wiringFault?: { code: DesignWiringCode; message: string };
}

/** The notations a designer may write (the four of FloWright: step list, graph, state machine, code). */
export type DesignNotation = 'steps' | 'graph' | 'states' | 'code';

/** Node error codes a rejected designed node is recorded with (all of class `wiring`). */
export type DesignWiringCode = 'DANGLING_EDGE' | 'UNBOUNDED_CYCLE' | 'UNKNOWN_TOOL' | 'MISSING_PORT' | 'UNKNOWN_PORT' | 'PORT_TYPE_MISMATCH' | 'INVALID_CONFIG';

/**
 * A workflow's design stage (`design:` in the document; docs/designer.md): the designer role
 * writes the workflow for each task, in `notation`, from the catalogue, within the budget.
 */
export interface DesignStage {
  role: RoleName;
  notation: DesignNotation;
  catalogue: {
    tools: string[];
    skills: string[];
    roles: RoleName[];
    checks: string[];
    /** Task fields the design may read (`task.<field>`). */
    inputs: string[];
  };
  budget: { maxNodes: number; maxLoops: number; maxIterations: number };
  /** `fail`: an unusable design fails the run at the design node. */
  onInvalid: 'fail';
  /**
   * The document's own entities (roles, skills, models, limits, name) a design is compiled
   * with: a design is the node part of a workflow document in `notation`.
   */
  base: Record<string, unknown>;
}

export interface GraphEdge {
  from: NodeId;
  to: NodeId;
  type: EdgeType;
  /** Data edges: the input port on `to` that receives `from`'s output. */
  port?: string;
  condition?: Condition;
  /** Set on loop back edges: how many times the loop may re-enter `to`. */
  maxIterations?: number;
  path: DocPath;
}

export interface SkillDef {
  name: string;
  prompt: string;
  contract?: Contract;
}

export interface Limits {
  /** Most node runs per task run (loops included). Exceeding it is a wiring fault. */
  maxHops: number;
  /** Most nodes running at once. */
  concurrency: number;
  /** Default per-node timeout, ms. */
  nodeTimeoutMs: number;
  /**
   * Refuse repaired structured output (`limits.strict_output`): a reply that is not exactly JSON
   * valid under its schema fails even when a valid JSON value sits inside it. Default false.
   */
  strictOutput?: boolean;
}

/** The one internal graph every notation compiles to. Plain data. */
export interface Graph {
  name: string;
  description?: string;
  notation: 'graph' | 'steps' | 'agents' | 'states' | 'code';
  /** The design node's id, when the workflow has a design stage (its node carries `design`). */
  designNode?: NodeId;
  roles: Map<RoleName, Role>;
  models: Map<string, ModelRef>;
  skills: Map<string, SkillDef>;
  nodes: GraphNode[];
  edges: GraphEdge[];
  /** Explicit hop order, if the document gave one. */
  hops?: NodeId[];
  /** The node (and optional field) whose output is the run's answer. */
  answer: { node: NodeId; field?: string };
  limits: Limits;
}

export const DEFAULT_LIMITS: Limits = { maxHops: 64, concurrency: 4, nodeTimeoutMs: 60_000 };
export const DEFAULT_MAX_TOKENS = 128;

/**
 * The roles that run nodes of a workflow: the roles of its agent and skill nodes, plus, with a
 * design stage, the catalogue roles its designer may give the nodes it draws. In role order.
 */
export function rolesThatRun(graph: Pick<Graph, 'nodes' | 'roles'>): RoleName[] {
  const runs = new Set<RoleName>();
  for (const n of graph.nodes) {
    if (n.kind !== 'tool' && n.role) runs.add(n.role);
    for (const r of n.design?.catalogue.roles ?? []) runs.add(r);
  }
  return [...graph.roles.keys()].filter((r) => runs.has(r));
}
