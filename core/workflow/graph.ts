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
}

/** The one internal graph every notation compiles to. Plain data. */
export interface Graph {
  name: string;
  description?: string;
  notation: 'graph' | 'steps' | 'agents' | 'states' | 'code';
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
