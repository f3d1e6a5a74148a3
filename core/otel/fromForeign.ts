/**
 * Another framework's trace as a Flowlab run, so structural credit (core/blame/credit) runs on it. The
 * mapping reads the GenAI semantic conventions and OpenInference, as the LangGraph (OpenInference
 * LangChain instrumentation) and OpenAI Agents SDK (GenAI `invoke_agent` / `execute_tool` /
 * `chat`) instrumentations write them:
 *
 * - **Nodes.** An agent span (`gen_ai.operation.name` invoke_agent or create_agent,
 *   `openinference.span.kind` AGENT, a `graph.node.id`, or the top span of a LangGraph node:
 *   `metadata.langgraph_node` differing from its parent's) is an agent node; a tool span
 *   (execute_tool, TOOL) a tool node. A node visited again (a ReAct loop) is a node of its own,
 *   `<name>#2`, so an early failure is not hidden by a later success. Other spans are see-through.
 *   The root span is the run; it is a node too when it is itself an agent or tool span.
 * - **Calls.** A model span (chat, text_completion, generate_content, LLM) is a model call of its
 *   nearest node ancestor (a node of its own when it has none).
 * - **Authorship.** An agent node's role is its agent name (`gen_ai.agent.name`, `agent.name`,
 *   the LangGraph node); it is wired by its nearest agent ancestor (the agent that invoked it), or
 *   `human` at the top. A tool executes arguments a model wrote: its author (wirer and runner) is
 *   the node whose model call ended last before the tool started (the FloWright rule: an
 *   execution fault goes to the role whose output the node ran), else its nearest agent ancestor.
 * - **Edges** (what feeds what): child -> parent (a parent reads what its child returns, so a
 *   parent that errors after its child did is the child's cascade); the previous sibling -> the
 *   next (the state flows from step to step: the latest sibling that ended before it started);
 *   and the tool's author -> the tool when the author is not its parent.
 * - **Failures.** Status ERROR or an `error.type` makes a node failed, of class execution,
 *   `AGENT_ERROR` or `TOOL_ERROR` (Flowlab's codes), the foreign error type and message kept in
 *   the event's message. The run failed when its root span (or a top-level node) did.
 */
import { asNodeId, asRoleName, asRunId, HUMAN, type RoleName } from '../ids.ts';
import type { ModelCallRecord, NodeEvent } from '../trace/index.ts';
import { GEN_AI, OI, OP } from './attributes.ts';
import type { TraceGraph, TraceGraphEdge } from './graph.ts';
import { messagesText, partsText, push, SpanAttrs, type ImportedRun } from './imported.ts';
import { msOf, type OtlpSpan } from './otlpJson.ts';

const MODEL_OPS = new Set(['chat', 'text_completion', 'generate_content']);
const AGENT_OPS = new Set(['invoke_agent', 'create_agent']);

type Kind = 'model' | 'tool' | 'agent' | 'other';

interface Node {
  span: OtlpSpan;
  a: SpanAttrs;
  id: string;
  kind: 'agent' | 'tool';
  role?: RoleName;
  /** Nearest node ancestor. */
  parent?: Node;
  calls: Array<{ a: SpanAttrs; end: bigint }>;
  wiredBy: RoleName;
  runBy?: RoleName;
  writer?: Node;
}

/** The LangGraph node a span belongs to (OpenInference writes LangChain's metadata as JSON text). */
function langgraphNode(a: SpanAttrs): string | undefined {
  const raw = a.raw(OI.metadata);
  let m: unknown = raw;
  if (typeof raw === 'string') {
    try {
      m = JSON.parse(raw);
    } catch {
      return undefined;
    }
  }
  const n = m && typeof m === 'object' ? (m as Record<string, unknown>)['langgraph_node'] : undefined;
  return typeof n === 'string' ? n : undefined;
}

function kindOf(a: SpanAttrs, parent: SpanAttrs | undefined): Kind {
  const op = a.raw(GEN_AI.operation);
  const oi = String(a.raw(OI.spanKind) ?? '').toUpperCase();
  if ((typeof op === 'string' && MODEL_OPS.has(op)) || oi === 'LLM') return 'model';
  if (op === OP.tool || oi === 'TOOL') return 'tool';
  if ((typeof op === 'string' && AGENT_OPS.has(op)) || oi === 'AGENT' || a.has(OI.nodeId)) return 'agent';
  const lg = langgraphNode(a);
  if (lg !== undefined && (!parent || langgraphNode(parent) !== lg)) return 'agent';
  return 'other';
}

const strip = (name: string, prefix: string) => (name.startsWith(`${prefix} `) ? name.slice(prefix.length + 1) : name);
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : v === undefined || v === null ? undefined : JSON.stringify(v));

/** The run of one foreign trace (see the module comment). Never throws on odd attributes: it reads what it can. */
export function foreignRun(spans: readonly OtlpSpan[], file: string): ImportedRun {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const attrsOf = new Map(spans.map((s) => [s.spanId, new SpanAttrs(s, file)]));
  const kids = new Map<string, OtlpSpan[]>();
  const tops: OtlpSpan[] = [];
  for (const s of spans) {
    if (s.parentSpanId && byId.has(s.parentSpanId)) push(kids, s.parentSpanId, s);
    else tops.push(s);
  }
  const byStart = (x: OtlpSpan, y: OtlpSpan) => cmp(x.startNs, y.startNs);
  tops.sort(byStart);
  const kindCache = new Map<string, Kind>();
  const kind = (s: OtlpSpan): Kind => {
    let k = kindCache.get(s.spanId);
    if (!k) kindCache.set(s.spanId, (k = kindOf(attrsOf.get(s.spanId)!, s.parentSpanId ? attrsOf.get(s.parentSpanId) : undefined)));
    return k;
  };
  // The run span: the one root, unless it is itself a node (then it is both).
  const runSpan = tops.length === 1 ? tops[0] : undefined;

  const nodes: Node[] = [];
  const seen = new Map<string, number>();
  const newNode = (s: OtlpSpan, k: 'agent' | 'tool', parent: Node | undefined): Node => {
    const a = attrsOf.get(s.spanId)!;
    const agentName = text(a.raw(GEN_AI.agentName)) ?? text(a.raw(OI.agentName)) ?? langgraphNode(a) ?? text(a.raw(OI.nodeName));
    const toolName = text(a.raw(GEN_AI.toolName)) ?? text(a.raw(OI.toolName)) ?? strip(s.name, OP.tool);
    const base = text(a.raw(OI.nodeId)) ?? (k === 'tool' ? toolName : (agentName ?? strip(strip(s.name, OP.agent), 'chat')));
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    const node: Node = { span: s, a, id: n === 1 ? base : `${base}#${n}`, kind: k, parent, calls: [], wiredBy: HUMAN };
    if (k === 'agent') node.role = asRoleName(agentName ?? base);
    nodes.push(node);
    return node;
  };
  // Depth-first, children by start time, with an explicit stack (no recursion on trace depth).
  const stack: Array<{ s: OtlpSpan; owner: Node | undefined }> = [...tops].reverse().map((s) => ({ s, owner: undefined }));
  while (stack.length) {
    const { s, owner } = stack.pop()!;
    const k = kind(s);
    let here = owner;
    if (k === 'agent' || k === 'tool') here = newNode(s, k, owner);
    else if (k === 'model') {
      if (!owner) here = newNode(s, 'agent', undefined);
      here!.calls.push({ a: attrsOf.get(s.spanId)!, end: s.endNs });
    }
    const children = (kids.get(s.spanId) ?? []).sort(byStart);
    for (let i = children.length - 1; i >= 0; i--) stack.push({ s: children[i]!, owner: here });
  }

  // Authorship: agents are wired by the agent above them; a tool's author is the last model call's node before it.
  const calls = nodes.flatMap((n) => n.calls.map((c) => ({ node: n, end: c.end }))).sort((x, y) => cmp(x.end, y.end));
  const agentAbove = (n: Node): Node | undefined => {
    for (let p = n.parent; p; p = p.parent) if (p.kind === 'agent') return p;
    return undefined;
  };
  for (const n of nodes) {
    if (n.kind === 'agent') {
      n.runBy = n.role;
      n.wiredBy = agentAbove(n)?.role ?? HUMAN;
      continue;
    }
    const writer = calls[lastAtOrBefore(calls, (c) => c.end, n.span.startNs)];
    const author = writer?.node ?? agentAbove(n);
    n.writer = writer?.node;
    if (author?.role) {
      n.role = author.role;
      n.runBy = author.role;
      n.wiredBy = author.role;
    } else n.wiredBy = agentAbove(n)?.role ?? HUMAN;
  }

  // Edges.
  const edges: TraceGraphEdge[] = [];
  const keys = new Set<string>();
  const edge = (from: Node, to: Node) => {
    const key = `${from.id}\u0000${to.id}`;
    if (from !== to && !keys.has(key)) {
      keys.add(key);
      edges.push({ from: asNodeId(from.id), to: asNodeId(to.id) });
    }
  };
  const siblings = new Map<Node | undefined, Node[]>();
  for (const n of nodes) push(siblings, n.parent, n);
  for (const list of siblings.values()) list.sort((x, y) => cmp(x.span.endNs, y.span.endNs));
  for (const n of nodes) {
    if (n.parent) edge(n, n.parent);
    const list = siblings.get(n.parent)!;
    let i = lastAtOrBefore(list, (m) => m.span.endNs, n.span.startNs);
    while (i >= 0 && list[i] === n) i--; // a zero-length span ends where it starts: not its own predecessor
    if (i >= 0) edge(list[i]!, n);
    if (n.writer && n.writer !== n.parent) edge(n.writer, n);
  }

  // Events, in order of completion.
  const order = [...nodes].sort((x, y) => cmp(x.span.endNs, y.span.endNs) || byStart(x.span, y.span));
  let content = false;
  const events: NodeEvent[] = order.map((n, seq) => {
    const failed = n.span.status.code === 2 || n.a.has(GEN_AI.errorType);
    const inputs = n.a.raw(OI.inputValue) ?? n.a.raw(GEN_AI.toolArguments);
    const output = n.a.raw(OI.outputValue) ?? n.a.raw(GEN_AI.toolResult);
    if (inputs !== undefined || output !== undefined) content = true;
    return {
      runId: asRunId(''),
      nodeId: asNodeId(n.id),
      attempt: 1,
      seq,
      kind: n.kind,
      ...(n.role ? { role: n.role } : {}),
      wiredBy: n.wiredBy,
      ...(n.runBy ? { runBy: n.runBy } : {}),
      inputs: inputs === undefined ? {} : { input: parsed(inputs) },
      ...(output !== undefined ? { output: parsed(output) } : {}),
      status: failed ? 'failed' : 'ok',
      ...(failed ? { failureClass: 'execution' as const, errorCode: n.kind === 'tool' ? ('TOOL_ERROR' as const) : ('AGENT_ERROR' as const), message: errorText(n.span, n.a) } : {}),
      calls: n.calls.map((c, i) => modelCall(c.a, i, n.role ?? asRoleName(n.id))),
      startedAt: n.a.startMs,
      endedAt: n.a.endMs,
    };
  });
  if (events.some((e) => e.calls.some((c) => c.prompt || c.completion))) content = true;

  const graph: TraceGraph = {
    nodes: nodes.map((n) => ({ id: asNodeId(n.id), kind: n.kind, ...(n.role ? { role: n.role } : {}), ...(n.kind === 'tool' ? { tool: text(n.a.raw(GEN_AI.toolName)) ?? text(n.a.raw(OI.toolName)) ?? strip(n.span.name, OP.tool) } : {}), wiredBy: [n.wiredBy], ...(n.runBy ? { runBy: n.runBy } : {}) })),
    edges,
  };
  const ra = runSpan ? attrsOf.get(runSpan.spanId)! : undefined;
  const topNodes = nodes.filter((n) => !n.parent);
  const runFailed = runSpan ? runSpan.status.code === 2 || ra!.has(GEN_AI.errorType) : topNodes.some((n) => n.span.status.code === 2);
  const sum = (f: (c: ModelCallRecord) => number) => events.reduce((s, e) => s + e.calls.reduce((t, c) => t + f(c), 0), 0);
  const start = spans.reduce((m, s) => (s.startNs < m ? s.startNs : m), spans[0]!.startNs);
  const end = spans.reduce((m, s) => (s.endNs > m ? s.endNs : m), spans[0]!.endNs);
  const answer = ra ? text(ra.raw(OI.outputValue)) : undefined;
  const input = ra?.raw(OI.inputValue);
  const first = spans[0]!;
  return {
    producer: 'foreign',
    traceId: first.traceId,
    spans: spans.length,
    content,
    workflowName: text(ra?.raw(GEN_AI.workflowName)) ?? runSpan?.name ?? text(first.resource[GEN_AI.serviceName]) ?? 'imported trace',
    task: { taskId: text(ra?.raw(OI.sessionId)) ?? text(ra?.raw('gen_ai.conversation.id')) ?? first.traceId, input: input === undefined ? {} : parsed(input) },
    run: {
      status: runFailed ? 'failed' : 'completed',
      score: 0,
      correct: false,
      graded: false,
      seed: 0,
      promptTokens: sum((c) => c.promptTokens),
      completionTokens: sum((c) => c.completionTokens),
      startedAt: msOf(start),
      endedAt: msOf(end),
      ...(answer !== undefined ? { answer } : {}),
    },
    events,
    graph,
  };
}

const cmp = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);

/** The index of the last item of `sorted` (ascending by `key`) whose key is at most `t`; -1 when none. Binary search. */
function lastAtOrBefore<T>(sorted: readonly T[], key: (x: T) => bigint, t: bigint): number {
  let lo = 0;
  let hi = sorted.length; // first index with key > t
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (key(sorted[mid]!) <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/** JSON text parsed when it is JSON, else the value as is. */
function parsed(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
}

/** `<error.type>: <message>` from the span's status, error.type and exception event. */
function errorText(s: OtlpSpan, a: SpanAttrs): string {
  const ex = s.events.find((e) => e.name === 'exception')?.attributes;
  const type = text(a.raw(GEN_AI.errorType)) ?? text(ex?.['exception.type']);
  const msg = s.status.message ?? text(ex?.['exception.message']);
  return [type, msg].filter(Boolean).join(': ') || 'error (no message in the trace)';
}

const FINISH_BACK: Record<string, ModelCallRecord['stopReason']> = { stop: 'stop', length: 'maxTokens', max_tokens: 'maxTokens' };

/** A model span as a model call (GenAI keys first, OpenInference next). */
function modelCall(a: SpanAttrs, callIndex: number, role: RoleName): ModelCallRecord {
  const num = (...keys: string[]) => {
    for (const k of keys) {
      const v = a.raw(k);
      if (typeof v === 'number') return v;
    }
    return undefined;
  };
  const inv = (() => {
    try {
      const v = a.raw(OI.invocationParameters);
      return typeof v === 'string' ? (JSON.parse(v) as Record<string, unknown>) : {};
    } catch {
      return {};
    }
  })();
  const invNum = (k: string) => (typeof inv[k] === 'number' ? (inv[k] as number) : undefined);
  const oiMessages = (prefix: string, keep: (role: string) => boolean) => {
    const out: string[] = [];
    for (let i = 0; a.has(`${prefix}.${i}.message.role`) || a.has(`${prefix}.${i}.message.content`); i++) {
      const role = text(a.raw(`${prefix}.${i}.message.role`)) ?? '';
      const c = text(a.raw(`${prefix}.${i}.message.content`));
      if (keep(role) && c !== undefined) out.push(c);
    }
    return out.length ? out.join('\n') : undefined;
  };
  const json = (k: string) => parsed(a.raw(k));
  const system = a.has(GEN_AI.systemInstructions) ? partsText(json(GEN_AI.systemInstructions)).join('\n') : (messagesText(json(GEN_AI.inputMessages), (r) => r === 'system') ?? oiMessages(OI.inputMessages, (r) => r === 'system'));
  const prompt = messagesText(json(GEN_AI.inputMessages), (r) => r !== 'system') ?? oiMessages(OI.inputMessages, (r) => r !== 'system') ?? text(a.raw(OI.inputValue)) ?? text(a.raw('gen_ai.prompt')) ?? '';
  const completion = messagesText(json(GEN_AI.outputMessages), () => true) ?? oiMessages(OI.outputMessages, () => true) ?? text(a.raw(OI.outputValue)) ?? text(a.raw('gen_ai.completion')) ?? '';
  const model = text(a.raw(GEN_AI.responseModel)) ?? text(a.raw(GEN_AI.requestModel)) ?? text(a.raw(OI.modelName)) ?? strip(a.span.name, OP.chat);
  const finish = a.raw(GEN_AI.finishReasons);
  const reason = Array.isArray(finish) && typeof finish[0] === 'string' ? finish[0] : undefined;
  const stop = a.raw(GEN_AI.stopSequences);
  const failed = a.span.status.code === 2 || a.has(GEN_AI.errorType);
  return {
    callIndex,
    role,
    modelRef: text(a.raw(GEN_AI.requestModel)) ?? model,
    model,
    ...(system ? { system } : {}),
    prompt,
    params: {
      temperature: num(GEN_AI.temperature) ?? invNum('temperature') ?? 0,
      maxTokens: num(GEN_AI.maxTokens) ?? invNum('max_tokens') ?? invNum('maxTokens') ?? 0,
      ...((num(GEN_AI.topP) ?? invNum('top_p')) !== undefined ? { topP: num(GEN_AI.topP) ?? invNum('top_p') } : {}),
      ...((num(GEN_AI.topK) ?? invNum('top_k')) !== undefined ? { topK: num(GEN_AI.topK) ?? invNum('top_k') } : {}),
      ...(Array.isArray(stop) && stop.every((x) => typeof x === 'string') ? { stop: stop as string[] } : {}),
    },
    seed: num(GEN_AI.seed) ?? invNum('seed') ?? 0,
    completion,
    promptTokens: num(GEN_AI.inputTokens, OI.promptTokens, 'gen_ai.usage.prompt_tokens') ?? 0,
    completionTokens: num(GEN_AI.outputTokens, OI.completionTokens, 'gen_ai.usage.completion_tokens') ?? 0,
    ms: a.endMs - a.startMs,
    startedAt: a.startMs,
    ...(reason ? { stopReason: FINISH_BACK[reason] ?? 'other' } : {}),
    ...(failed ? { error: errorText(a.span, a) } : {}),
  };
}
