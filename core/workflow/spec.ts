import { MAX_CONTEXT_SIZE, MAX_THREADS_REQUEST } from '../limits.ts';
import * as z from 'zod';

/**
 * The workflow document (YAML or JSON), validated with zod. The notations compile to one Graph
 * (docs/workflow-spec.md):
 *  - graph:   `nodes` (+ optional `edges`)
 *  - steps:   `steps` with `depends_on` (FloWright's step list)
 *  - agents:  `agents` + `flows` with `source`, `target`, `type`, `condition`, `max_iterations`
 *  - states:  `states` + `transitions`, `start`, `terminal` (a state machine)
 *  - code:    `code`, a restricted JavaScript text parsed by acorn, never evaluated
 * Field names are snake_case, as people write YAML. `scripts/write-schema.ts` emits the JSON Schema
 * for editors to `schema/workflow.schema.json`.
 */
const Id = z.string().regex(/^[A-Za-z_][\w-]*$/, 'must start with a letter or _ and use only letters, digits, _ and -');

export const PortTypeSpec = z.enum(['string', 'number', 'boolean', 'object', 'array', 'any']);

export const WeightsSpec = z
  .object({
    format: z.number(),
    validity: z.number(),
    completion: z.number(),
    correctness: z.number(),
    credit: z.number(),
  })
  .partial()
  .strict()
  .describe('Reward-ladder weights for this role: h = format·f + validity·v + completion·e + correctness·a + credit·c');

export const RoleSpec = z
  .object({
    kind: z.enum(['generator', 'planner', 'executor', 'verifier', 'orchestrator', 'answerer']),
    model: z.string().min(1).optional().describe('A key of `models`, or `default` (set by --model)'),
    instructions: z.string().optional().describe("The role's system instructions"),
    hint_slots: z.number().int().min(0).max(32).optional().describe('Hint cards that may be injected into this role'),
    weights: WeightsSpec.optional(),
  })
  .strict();

export const ModelSpec = z
  .object({
    path: z.string().min(1).optional().describe('GGUF file (relative paths resolve against the workflow file), or an endpoint reference openai:<base-url>#<model>[&key=ENV]... (docs/models.md)'),
    context_size: z.number().int().positive().max(MAX_CONTEXT_SIZE).optional(),
    threads: z.number().int().positive().max(MAX_THREADS_REQUEST).optional(),
    gpu: z.union([z.literal('auto'), z.literal(false)]).optional(),
  })
  .strict();

export const InputSpec = z.union([
  z.string().min(1).describe('`task.<field>`, `<node>` or `<node>.<field>`'),
  z
    .object({
      from: z.string().min(1),
      type: PortTypeSpec.optional(),
      optional: z.boolean().optional(),
    })
    .strict(),
]);

export const ContractSpec = z
  .object({
    schema: z.record(z.string(), z.unknown()).optional().describe('JSON Schema of the output; also the decoding grammar'),
    checks: z.array(z.string().min(1)).optional().describe('Named checks the output must pass'),
  })
  .strict();

const nodeFields = {
  id: Id,
  kind: z.enum(['agent', 'tool', 'skill']).optional(),
  role: z.string().min(1).optional(),
  wired_by: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional().describe('Who wired this node: a role, human, or several (shared authorship)'),
  tool: z.string().min(1).optional(),
  skill: z.string().min(1).optional(),
  prompt: z.string().optional(),
  inputs: z.record(z.string(), InputSpec).optional(),
  output: ContractSpec.optional(),
  max_tokens: z.number().int().positive().max(32768).optional(),
  temperature: z.number().min(0).max(5).optional(),
  stop: z.array(z.string()).optional(),
  timeout_ms: z.number().int().positive().optional(),
};

export const NodeSpec = z.object(nodeFields).strict();
/** A dependency written out: where a step's input (or loop feedback) comes from, with an edge's options. */
export const DependsOnSpec = z
  .object({
    from: z.string().min(1),
    port: z.string().min(1).optional(),
    condition: z.string().min(1).optional(),
    max_iterations: z.number().int().min(1).max(100).optional(),
  })
  .strict();
export const StepSpec = z.object({ ...nodeFields, depends_on: z.array(z.union([z.string().min(1), DependsOnSpec])).optional() }).strict();
export const AgentSpec = z.object({ ...nodeFields, id: Id.optional(), name: Id.optional() }).strict();

const edgeTail = {
  type: z.enum(['data', 'control']).optional(),
  port: z.string().min(1).optional(),
  condition: z.string().min(1).optional(),
  max_iterations: z.number().int().min(1).max(100).optional(),
};
export const EdgeSpec = z.object({ from: z.string().min(1), to: z.string().min(1), ...edgeTail }).strict();
export const FlowSpec = z.object({ source: z.string().min(1), target: z.string().min(1), ...edgeTail }).strict();

/** A state machine's state: a node, written like one. */
export const StateSpec = z.object(nodeFields).strict();
export const TransitionSpec = z
  .object({
    from: z.string().min(1),
    to: z.string().min(1),
    port: z.string().min(1).optional().describe("The target's port for the source's output (default: the port reading from the source, else the source's id)"),
    condition: z.string().min(1).optional(),
    max_iterations: z.number().int().min(1).max(100).optional().describe('A loop (back) transition: how many times it may re-enter its target'),
  })
  .strict();

export const SkillSpec = z.object({ prompt: z.string().min(1), output: ContractSpec.optional() }).strict();

const names = z.array(z.string().min(1));
export const DesignSpec = z
  .object({
    role: z.string().min(1).describe('The role that writes the design (kind generator)'),
    id: Id.optional().describe('The design node\'s id (default `design`)'),
    notation: z.enum(['steps', 'graph', 'states', 'code']).optional().describe('What the designer writes (default steps)'),
    prompt: z.string().min(1).describe('The designer\'s prompt: {{task.<field>}} and {{catalogue}} (the rendered catalogue)'),
    max_tokens: z.number().int().positive().max(32768).optional(),
    temperature: z.number().min(0).max(5).optional(),
    catalogue: z
      .object({
        tools: names.optional().describe('Tools the designer may wire'),
        skills: names.optional().describe('Skills (from `skills`) it may wire'),
        roles: names.optional().describe('Roles it may give the nodes it draws'),
        checks: names.optional().describe('Named checks it may attach'),
        inputs: names.optional().describe('Task fields it may read (task.<field>)'),
      })
      .strict(),
    budget: z
      .object({
        max_nodes: z.number().int().min(1).max(64).optional(),
        max_loops: z.number().int().min(0).max(16).optional(),
        max_iterations: z.number().int().min(1).max(100).optional(),
      })
      .strict()
      .optional(),
    on_invalid: z.enum(['fail']).optional().describe('What an unusable design does: fail the run at the design node'),
  })
  .strict()
  .describe('A design stage: a designer role writes and wires the workflow for each task (docs/designer.md)');

export const WorkflowSpec = z
  .object({
    $schema: z.string().optional(),
    name: z.string().min(1),
    description: z.string().optional(),
    version: z.union([z.string(), z.number()]).optional(),
    wired_by: z.string().min(1).optional().describe('Default author of the wiring (default: human)'),
    models: z.record(z.string(), ModelSpec).optional(),
    roles: z.record(z.string(), RoleSpec),
    skills: z.record(z.string(), SkillSpec).optional(),
    nodes: z.array(NodeSpec).optional(),
    edges: z.array(EdgeSpec).optional(),
    steps: z.array(StepSpec).optional(),
    agents: z.array(AgentSpec).optional(),
    design: DesignSpec.optional(),
    flows: z.array(FlowSpec).optional(),
    states: z.array(StateSpec).optional(),
    transitions: z.array(TransitionSpec).optional(),
    start: z.string().min(1).optional().describe('The start state (states notation)'),
    terminal: z.array(z.string().min(1)).optional().describe('The terminal states (states notation)'),
    code: z.string().min(1).optional().describe('A code block: restricted JavaScript, parsed and never evaluated (docs/workflow-spec.md)'),
    hops: z.array(z.string().min(1)).optional().describe('Explicit order in which nodes run'),
    answer: z.string().min(1).optional().describe('`<node>` or `<node>.<field>`: the run\'s answer; default: the only sink'),
    limits: z
      .object({
        max_hops: z.number().int().positive().max(100000).optional(),
        concurrency: z.number().int().positive().max(64).optional(),
        node_timeout_ms: z.number().int().positive().optional(),
        strict_output: z
          .boolean()
          .optional()
          .describe('true: an output must be exactly JSON valid under its schema; JSON found inside prose or a fenced block is not repaired (default false: repaired and recorded, docs/models.md)'),
      })
      .strict()
      .optional(),
  })
  .strict();

export type WorkflowDoc = z.infer<typeof WorkflowSpec>;
export type NodeDoc = z.infer<typeof NodeSpec>;

/** The JSON Schema (draft 2020-12) of the workflow document, for editors. */
export function workflowJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(WorkflowSpec, { target: 'draft-2020-12', io: 'input' }) as Record<string, unknown>;
}
