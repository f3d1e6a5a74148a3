import type { NodeId, RoleName } from '../ids.ts';
import { deriveSeed } from '../random.ts';
import { NodeFailure } from '../engine/failure.ts';
import type { RunnableTool, ToolSource } from '../engine/runNode.ts';
import type { GenerateRequest, GenerateResult, JsonSchema, ModelProvider } from '../model/provider.ts';
import { FlowlabError } from '../errors.ts';
import { ToolError } from '../tools/tool.ts';

/**
 * Fault kinds (docs/credit.md, "Fault injection (simulated) and blame evaluation"):
 * - `malformed`: output that does not parse (broken JSON); on a free-text node, an empty output;
 * - `contract`: output that parses but breaks the contract (a required field missing);
 * - `error`: the agent call throws;
 * - `timeout`: the node times out (reported at once as TIMEOUT instead of waiting the timeout);
 * - `wrong`: a well-formed output chosen to satisfy the contract (schema and named checks, via
 *   `accepts`) but wrong; structure cannot see it (downstream nodes may still fail on it);
 * - `dropped`: the model's real output with one field silently dropped (an optional field when
 *   there is one); structure sees it only if the contract requires the field.
 */
export const FAULT_KINDS = ['malformed', 'contract', 'error', 'timeout', 'wrong', 'dropped'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
/** Kinds a tool node can receive (tools have no format or contract of their own). */
export const TOOL_FAULT_KINDS: readonly FaultKind[] = ['error', 'timeout', 'wrong'];
/**
 * SIMULATED wiring faults put into a designer's design before it is compiled (core/faults/design.ts):
 * `dangling_edge`, `unknown_tool`, `missing_port`, `unbounded_loop`. They target the workflow's
 * design role only (`designer=dangling_edge@0.5`); execution kinds on the design node stay possible.
 */
export const DESIGN_FAULT_KINDS = ['dangling_edge', 'unknown_tool', 'missing_port', 'unbounded_loop'] as const;
export type DesignFaultKind = (typeof DESIGN_FAULT_KINDS)[number];

/** Whether a fault kind is a design (wiring) kind rather than an execution kind. */
export function isDesignFaultKind(kind: string): kind is DesignFaultKind {
  return (DESIGN_FAULT_KINDS as readonly string[]).includes(kind);
}

export interface FaultSpec {
  /** A role (all nodes it runs) or one node id; design kinds take a role (the design role). */
  role?: RoleName;
  node?: NodeId;
  kind: FaultKind | DesignFaultKind;
  /** Probability per node run, 0..1. */
  rate: number;
}

/** Ground truth of one injected fault. Always simulated. */
export interface InjectedFault {
  taskKey: string;
  nodeId: NodeId;
  attempt: number;
  role?: RoleName;
  kind: FaultKind;
  simulated: true;
}

/** A `--inject` spec (or the lab API's `inject` entry) that does not parse; the message quotes it. */
export class FaultSpecError extends FlowlabError<'BAD_FAULT_SPEC'> {
  override readonly name = 'FaultSpecError';
  constructor(message: string) {
    super('BAD_FAULT_SPEC', message);
  }
}

/**
 * Parses `role=kind@rate` (or `node:<id>=kind@rate`), e.g. `solver=contract@0.5` or
 * `designer=dangling_edge@0.3` (a design kind, DESIGN_FAULT_KINDS: role targets only).
 * Throws FaultSpecError naming the bad part.
 */
export function parseFaultSpec(text: string): FaultSpec {
  const m = /^(node:)?([A-Za-z_][\w-]*)=([a-z_]+)(?:@([0-9.]+))?$/.exec(text.trim());
  if (!m) throw new FaultSpecError(`bad --inject "${text}": expected role=kind@rate, e.g. solver=contract@0.5`);
  const kind = m[3] as FaultKind | DesignFaultKind;
  if (!FAULT_KINDS.includes(kind as FaultKind) && !isDesignFaultKind(kind)) {
    throw new FaultSpecError(`bad --inject "${text}": unknown kind "${m[3]}" (kinds: ${FAULT_KINDS.join(', ')}; for the design role also ${DESIGN_FAULT_KINDS.join(', ')})`);
  }
  if (m[1] && isDesignFaultKind(kind)) throw new FaultSpecError(`bad --inject "${text}": ${kind} is a design fault; it targets the design role (e.g. designer=${kind}@0.3), not a node`);
  const rate = m[4] === undefined ? 1 : Number(m[4]);
  if (!(rate >= 0 && rate <= 1)) throw new FaultSpecError(`bad --inject "${text}": rate must be between 0 and 1`);
  return m[1] ? { node: m[2] as NodeId, kind, rate } : { role: m[2] as RoleName, kind, rate };
}

const SIM = '(simulated fault)';

/**
 * Wraps a model provider and a tool source so that chosen roles or nodes receive faults at a
 * chosen rate, deterministically from a seed, and records the ground truth of every injection.
 * Everything it produces is labelled simulated: error messages say "(simulated fault)", and
 * `isInjected` lets the harness mark the node events. Faults happen only where a node runs.
 */
export class FaultInjector {
  private readonly log: InjectedFault[] = [];
  private readonly keys = new Map<string, FaultKind>();

  constructor(
    readonly specs: readonly FaultSpec[],
    readonly seed: number,
    /** The role running each node, for role-targeted tool faults. */
    private readonly roleOfNode: (node: NodeId) => RoleName | undefined = () => undefined,
    /**
     * Whether an output satisfies a node's contract (schema and named checks); `wrong` faults pick
     * the first candidate it accepts, so they stay invisible to structure. Default: accept all.
     */
    private readonly accepts: (node: NodeId, output: unknown) => boolean = () => true,
  ) {}

  /** Every fault injected so far. */
  injected(): readonly InjectedFault[] {
    return this.log;
  }

  /** The kind of fault injected into a node run, if any. */
  faultAt(taskKey: string, nodeId: string, attempt: number): FaultKind | undefined {
    return this.keys.get(`${taskKey}\u0000${nodeId}\u0000${attempt}`);
  }

  /**
   * The fault to inject into this node run, if any (one per node run; first matching spec wins).
   * Design kinds are skipped (DesignFaultInjector, core/faults/design.ts, puts them into designs);
   * each spec keeps its index in the full list, so adding design specs changes no execution fault.
   */
  private decide(taskKey: string, nodeId: NodeId, attempt: number, role: RoleName | undefined, allowed?: readonly FaultKind[]): FaultKind | undefined {
    for (const [i, spec] of this.specs.entries()) {
      const kind = spec.kind;
      if (isDesignFaultKind(kind)) continue;
      if (spec.node ? spec.node !== nodeId : spec.role !== role) continue;
      if (allowed && !allowed.includes(kind)) continue;
      const u = deriveSeed(this.seed, 'fault', i, taskKey, nodeId, attempt) / 0x80000000;
      if (u < spec.rate) {
        this.log.push({ taskKey, nodeId, attempt, role, kind, simulated: true });
        this.keys.set(`${taskKey}\u0000${nodeId}\u0000${attempt}`, kind);
        return kind;
      }
    }
    return undefined;
  }

  wrapProvider(inner: ModelProvider): ModelProvider {
    const self = this;
    return {
      name: `${inner.name} + fault injection (simulated)`,
      modelsLoaded: () => inner.modelsLoaded(),
      dispose: () => inner.dispose(),
      async generate(req: GenerateRequest): Promise<GenerateResult> {
        const kind = req.key.callIndex === 0 ? self.decide(req.key.taskKey, req.key.nodeId as NodeId, req.key.attempt, req.role) : undefined;
        if (!kind) return inner.generate(req);
        const fake = (text: string): GenerateResult => ({ text, tokens: { prompt: 0, completion: 0 }, ms: 0, seed: req.seed, model: 'fault injection (simulated)', stopReason: 'eos' });
        switch (kind) {
          case 'error':
            throw new NodeFailure('execution', 'AGENT_ERROR', `agent error ${SIM}`, true);
          case 'timeout':
            throw new NodeFailure('execution', 'TIMEOUT', `timed out ${SIM}`, true);
          case 'malformed':
            return fake(req.jsonSchema ? '{"' : '');
          case 'contract':
            return fake(req.jsonSchema ? JSON.stringify(dropRequired(req.jsonSchema, instanceOf(req.jsonSchema))) : '');
          case 'wrong': {
            if (!req.jsonSchema) return fake(`a wrong answer ${SIM}`);
            const candidates = WRONG_FILLS.map((fill) => instanceOf(req.jsonSchema!, fill));
            const valid = candidates.find((c) => self.accepts(req.key.nodeId as NodeId, c));
            return fake(JSON.stringify(valid ?? candidates[0]));
          }
          case 'dropped': {
            // The real output with one field silently removed (an optional one when there is one).
            const real = await inner.generate(req);
            let value: unknown;
            try {
              value = JSON.parse(real.text);
            } catch {
              return real; // not JSON: nothing to drop; the node fails (or not) on its own
            }
            return { ...real, text: JSON.stringify(req.jsonSchema ? dropOne(req.jsonSchema, value) : value) };
          }
          default:
            return kind satisfies never;
        }
      },
    };
  }

  /**
   * Wraps tools: a tool node receives `error`, `timeout` or `wrong` faults when its node id (or
   * the role running it) is targeted. The engine passes the node id, attempt and task key.
   */
  wrapTools(inner: ToolSource): ToolSource {
    const self = this;
    return {
      get(name: string): RunnableTool | undefined {
        const tool = inner.get(name);
        if (!tool) return undefined;
        return {
          ...tool,
          run(inputs, ctx) {
            const nodeId = (ctx.nodeId ?? name) as NodeId;
            const kind = self.decide(ctx.taskKey ?? '', nodeId, ctx.attempt ?? 1, self.roleOfNode(nodeId), TOOL_FAULT_KINDS);
            if (kind === 'error') throw new ToolError('BAD_INPUT', `tool error ${SIM}`);
            if (kind === 'timeout') throw new NodeFailure('execution', 'TIMEOUT', `timed out ${SIM}`, true);
            const out = tool.run(inputs, ctx);
            if (kind === 'wrong') return Promise.resolve(out).then((v) => perturb(v));
            return out;
          },
        };
      },
    };
  }
}

/** Fillers tried in turn for `wrong` outputs until one satisfies the contract. */
const WRONG_FILLS: ReadonlyArray<{ text: string; number: number }> = [
  { text: 'x', number: -7 },
  { text: '1 + 1', number: -7 },
  { text: '7', number: 7 },
  { text: 'none', number: 0 },
];

/**
 * A schema-valid instance: the last enum value, `fill.number` for numbers (respecting a minimum),
 * `fill.text` for strings (padded to minLength, cut to maxLength).
 */
export function instanceOf(schema: JsonSchema, fill: { text: string; number: number } = WRONG_FILLS[0]!): unknown {
  const s = schema as { type?: unknown; enum?: unknown[]; const?: unknown; properties?: Record<string, JsonSchema>; items?: JsonSchema; minItems?: number; minimum?: number; minLength?: number };
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[s.enum.length - 1];
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(s.properties ?? {})) out[k] = instanceOf(v, fill);
      return out;
    }
    case 'array':
      return Array.from({ length: s.minItems ?? 0 }, () => instanceOf(s.items ?? {}, fill));
    case 'number':
    case 'integer':
      return s.minimum !== undefined && s.minimum > fill.number ? s.minimum : fill.number;
    case 'boolean':
      return false;
    case 'null':
      return null;
    default: {
      const max = (s as { maxLength?: number }).maxLength ?? Infinity;
      return fill.text.padEnd(s.minLength ?? 0, ' ').slice(0, max);
    }
  }
}

function dropRequired(schema: JsonSchema, value: unknown): unknown {
  const req = (schema as { required?: string[] }).required ?? [];
  if (!value || typeof value !== 'object' || !req.length) return 'not the expected shape';
  const copy = { ...(value as Record<string, unknown>) };
  delete copy[req[0]!];
  return copy;
}

function dropOne(schema: JsonSchema, value: unknown): unknown {
  if (!value || typeof value !== 'object') return value;
  const req = new Set((schema as { required?: string[] }).required ?? []);
  const keys = Object.keys(value as object);
  const victim = keys.find((k) => !req.has(k)) ?? keys[0];
  const copy = { ...(value as Record<string, unknown>) };
  if (victim !== undefined) delete copy[victim];
  return copy;
}

function perturb(v: unknown): unknown {
  if (typeof v === 'number') return v + 1;
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, typeof x === 'number' ? x + 1 : x]));
  }
  return v;
}
