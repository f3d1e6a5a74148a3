/**
 * Flowlab runs as OpenTelemetry spans, built with the official SDK (@opentelemetry/sdk-trace-base:
 * a tracer with deterministic ids and the trace's own timestamps) and written as OTLP/JSON by the
 * official transformer (@opentelemetry/otlp-transformer `JsonTraceSerializer`).
 *
 * One trace per run (GenAI semantic conventions, "gen-ai-agent-spans" and "gen-ai-spans"):
 *   invoke_workflow <workflow>        the run (OpenInference CHAIN)
 *   ├─ invoke_agent <role>            each agent or skill node run (AGENT)
 *   │  └─ chat <model>                each model call of it (LLM, span kind CLIENT)
 *   └─ execute_tool <tool>            each tool node run (TOOL)
 * Node spans are children of the run span; the data-flow graph travels as `flowlab.graph` on the
 * run span and, for Phoenix's agent graph, as `graph.node.parent_id` (a node's first upstream node).
 * Failed and cascaded nodes get status ERROR and `error.type` = their error code.
 * Attribute keys and what counts as content: attributes.ts.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type AttributeValue, type HrTime } from '@opentelemetry/api';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, BasicTracerProvider, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { RunRecord } from '../results/index.ts';
import type { ModelCallRecord, NodeEvent } from '../trace/index.ts';
import { FL, FLOWLAB_SCOPE, GEN_AI, LANGFUSE_OBSERVATION_TYPE, OI, OP } from './attributes.ts';
import type { TraceGraph } from './graph.ts';
import { callSpanIdOf, nodeSpanIdOf, runSpanIdOf, traceIdOf } from './ids.ts';

/** The experiment a run belongs to, as its root span describes it. */
export interface OtelExperiment {
  id: string;
  kind: string;
  workflowName: string;
  workflowHash: string;
  /** Written only with `withContent`. */
  workflowYaml?: string;
  dataset: string;
  split: string;
  seed: number;
}

/** One stored run to export: its record, its events (with their calls), the graph it ran. */
export interface OtelRun {
  run: RunRecord;
  events: readonly NodeEvent[];
  graph: TraceGraph;
  /** The task's input (written only with `withContent`). */
  taskInput?: unknown;
  /**
   * Set when the run is a fork (core/experiments/fork.ts): its root span carries a span link to the
   * parent run's span of the node run it was forked at (trace and span ids of ids.ts, so the link
   * resolves in any backend holding the parent's export), with the intervention as link attributes.
   */
  forkOf?: { parentRunId: string; nodeId: string; attempt: number; intervention: string };
  /**
   * Evaluation results to put on node run spans as OpenTelemetry GenAI `gen_ai.evaluation.result`
   * events (semantic conventions, gen-ai-events: `gen_ai.evaluation.name`,
   * `gen_ai.evaluation.score.value`, `gen_ai.evaluation.score.label`, `gen_ai.evaluation.explanation`),
   * e.g. counterfactual blame's verdict on each node run it forked at.
   */
  evaluations?: ReadonlyArray<{ nodeId: string; attempt: number; name: string; score: number; label: string; explanation?: string }>;
  /**
   * A person's annotations (core/store/annotations.ts, `flowlab annotate`): each a
   * `gen_ai.evaluation.result` event named `annotation` (score as `gen_ai.evaluation.score.value`,
   * tags joined by ", " as `.score.label`, the note as `.explanation` (only with `withContent`: a
   * person's note may quote a prompt), with `flowlab.annotation.id`,
   * `.tags` and `.author`), timed at its creation, on the run's root span or, with a node, on the
   * span of that node's last attempt.
   */
  annotations?: ReadonlyArray<{ id: string; nodeId?: string; score?: number; tags: readonly string[]; note: string; author: string; createdAt: number }>;
}

/** The span event of one annotation (see `OtelRun.annotations`). */
function annotationEvent(a: NonNullable<OtelRun['annotations']>[number], content: boolean): Attributes {
  return attrs({
    'gen_ai.evaluation.name': 'annotation',
    'gen_ai.evaluation.score.value': a.score,
    'gen_ai.evaluation.score.label': a.tags.length ? a.tags.join(', ') : undefined,
    'gen_ai.evaluation.explanation': content ? a.note || undefined : undefined,
    'flowlab.annotation.id': a.id,
    'flowlab.annotation.tags': [...a.tags],
    'flowlab.annotation.author': a.author,
  });
}

export interface SpanOptions {
  /** Write message contents, node inputs and outputs, answers and the workflow text (default false). */
  withContent?: boolean;
  /** `gen_ai.provider.name` of the model calls (default `llama.cpp`: Flowlab runs GGUF models through node-llama-cpp). */
  provider?: string;
}

/** gen_ai.response.finish_reasons for Flowlab's stop reasons (core/model/provider.ts `stopReason`). */
const FINISH: Record<string, string> = { eos: 'stop', stop: 'stop', maxTokens: 'length', abort: 'error', other: 'other' };

/** Epoch milliseconds (fractions allowed) as an OpenTelemetry HrTime `[seconds, nanoseconds]`. */
export function hrTimeOf(ms: number): HrTime {
  const sec = Math.floor(ms / 1000);
  const ns = Math.min(999_999_999, Math.max(0, Math.round((ms - sec * 1000) * 1e6)));
  return [sec, ns];
}

/** Attributes without the undefined entries. */
function attrs(entries: Record<string, AttributeValue | undefined>): Attributes {
  const out: Attributes = {};
  for (const [k, v] of Object.entries(entries)) if (v !== undefined) out[k] = v;
  return out;
}

const json = (v: unknown): string => JSON.stringify(v) ?? 'null';

/**
 * The spans of `runs`, in the order run span, then each node run by `seq` followed by its model
 * calls. Ids are deterministic (ids.ts), times are the trace's own (epoch ms as HrTime), so the
 * same runs give the same spans. Pure apart from building SDK objects; never throws for a run
 * the store returned.
 */
export function runSpans(experiment: OtelExperiment, runs: readonly OtelRun[], opts: SpanOptions = {}): ReadableSpan[] {
  const out: ReadableSpan[] = [];
  const order = new Map<string, number>(); // span id -> start order (ids are unique across runs: run id is in each)
  const collect: SpanProcessor = { onStart() {}, onEnd: (s) => void out.push(s), forceFlush: async () => {}, shutdown: async () => {} };
  let next = { traceId: '', spanId: '' };
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [GEN_AI.serviceName]: 'flowlab' }),
    sampler: new AlwaysOnSampler(),
    idGenerator: { generateTraceId: () => next.traceId, generateSpanId: () => next.spanId },
    // Explicit limits: a run's attributes (the graph, contents) are never cut, whatever OTEL_* says.
    spanLimits: { attributeCountLimit: 1 << 20, attributeValueLengthLimit: Infinity, linkCountLimit: 1 << 20, eventCountLimit: 1 << 20 },
    spanProcessors: [collect],
  });
  const tracer = provider.getTracer(FLOWLAB_SCOPE.name, FLOWLAB_SCOPE.version);
  const content = opts.withContent === true;
  const llm = opts.provider ?? 'llama.cpp';

  for (const { run, events, graph, taskInput, forkOf, evaluations, annotations } of runs) {
    const traceId = traceIdOf(run.runId);
    next = { traceId, spanId: runSpanIdOf(run.runId) };
    const firstRoot = run.credit?.roots[0]?.errorCode;
    const root = tracer.startSpan(`${OP.workflow} ${experiment.workflowName}`, {
      kind: SpanKind.INTERNAL,
      startTime: hrTimeOf(run.startedAt),
      ...(forkOf && {
        links: [{
          context: { traceId: traceIdOf(forkOf.parentRunId), spanId: nodeSpanIdOf(forkOf.parentRunId, forkOf.nodeId, forkOf.attempt), traceFlags: 1 },
          attributes: { [FL.forkParentRunId]: forkOf.parentRunId, [FL.forkNodeId]: forkOf.nodeId, [FL.forkAttempt]: forkOf.attempt, [FL.forkIntervention]: forkOf.intervention },
        }],
      }),
      attributes: attrs({
        [GEN_AI.operation]: OP.workflow,
        [GEN_AI.workflowName]: experiment.workflowName,
        [OI.spanKind]: 'CHAIN',
        [OI.sessionId]: experiment.id,
        [LANGFUSE_OBSERVATION_TYPE]: 'chain',
        [GEN_AI.errorType]: run.status === 'failed' ? (firstRoot ?? '_OTHER') : undefined,
        [FL.experimentId]: experiment.id,
        [FL.experimentKind]: experiment.kind,
        [FL.dataset]: experiment.dataset,
        [FL.split]: experiment.split,
        [FL.experimentSeed]: experiment.seed,
        [FL.workflowHash]: experiment.workflowHash,
        [FL.graph]: json(graph),
        [FL.runId]: run.runId,
        [FL.taskIndex]: run.taskIndex,
        [FL.taskId]: run.taskId,
        [FL.runStatus]: run.status,
        [FL.score]: run.score,
        [FL.correct]: run.correct,
        [FL.runSeed]: run.seed,
        [FL.runPromptTokens]: run.promptTokens,
        [FL.runCompletionTokens]: run.completionTokens,
        [FL.runSimulated]: run.simulated,
        [FL.ladder]: run.ladder ? json(run.ladder) : undefined,
        ...(content
          ? {
              [FL.workflowYaml]: experiment.workflowYaml,
              [FL.answer]: run.answer,
              [FL.expected]: run.expected,
              [FL.taskInput]: taskInput === undefined ? undefined : json(taskInput),
              [OI.inputValue]: taskInput === undefined ? undefined : json(taskInput),
              [OI.inputMime]: taskInput === undefined ? undefined : 'application/json',
              [OI.outputValue]: run.answer,
            }
          : {}),
      }),
    }, ROOT_CONTEXT);
    if (run.status === 'failed') root.setStatus({ code: SpanStatusCode.ERROR, message: `run failed (${Object.entries(run.failures).map(([k, n]) => `${n} ${k}`).join(', ') || 'no answer'})` });
    for (const a of annotations ?? []) if (a.nodeId === undefined) root.addEvent('gen_ai.evaluation.result', annotationEvent(a, content), hrTimeOf(a.createdAt));
    const lastAttempt = new Map<string, number>();
    for (const e of events) lastAttempt.set(e.nodeId, Math.max(lastAttempt.get(e.nodeId) ?? 0, e.attempt));
    order.set(root.spanContext().spanId, order.size);
    const rootCtx = trace.setSpan(ROOT_CONTEXT, root);
    const byId = new Map(graph.nodes.map((n) => [n.id as string, n]));
    const parentOf = new Map<string, string>();
    for (const e of graph.edges) if (!e.loop && !parentOf.has(e.to)) parentOf.set(e.to, e.from);

    for (const e of [...events].sort((a, b) => a.seq - b.seq)) {
      const node = byId.get(e.nodeId);
      const isTool = e.kind === 'tool';
      const tool = node?.tool ?? e.nodeId;
      const bad = e.status === 'failed' || e.status === 'cascade';
      next = { traceId, spanId: nodeSpanIdOf(run.runId, e.nodeId, e.attempt) };
      const inputs = content ? json(e.inputs) : undefined;
      const output = content && e.output !== undefined ? json(e.output) : undefined;
      const span = tracer.startSpan(isTool ? `${OP.tool} ${tool}` : `${OP.agent} ${e.role ?? e.nodeId}`, {
        kind: SpanKind.INTERNAL,
        startTime: hrTimeOf(e.startedAt),
        attributes: attrs({
          [GEN_AI.operation]: isTool ? OP.tool : OP.agent,
          [GEN_AI.provider]: isTool ? undefined : llm,
          [GEN_AI.agentName]: isTool ? undefined : e.role,
          [GEN_AI.toolName]: isTool ? tool : undefined,
          [GEN_AI.toolType]: isTool ? 'function' : undefined,
          [GEN_AI.errorType]: bad ? (e.errorCode ?? '_OTHER') : undefined,
          [OI.spanKind]: isTool ? 'TOOL' : 'AGENT',
          [isTool ? OI.toolName : OI.agentName]: isTool ? tool : e.role,
          [OI.nodeId]: e.nodeId,
          [OI.nodeName]: e.nodeId,
          [OI.parentNodeId]: parentOf.get(e.nodeId),
          [LANGFUSE_OBSERVATION_TYPE]: isTool ? 'tool' : 'agent',
          [FL.nodeId]: e.nodeId,
          [FL.attempt]: e.attempt,
          [FL.seq]: e.seq,
          [FL.kind]: e.kind,
          [FL.role]: e.role,
          [FL.wiredBy]: e.wiredBy,
          [FL.runBy]: e.runBy,
          [FL.status]: e.status,
          [FL.failureClass]: e.failureClass,
          [FL.errorCode]: e.errorCode,
          [FL.message]: e.message,
          [FL.causes]: e.causes ? [...e.causes] : undefined,
          [FL.simulated]: e.simulated,
          [FL.fault]: e.fault,
          [FL.tool]: node?.tool,
          [FL.skill]: node?.skill,
          [FL.inputs]: inputs,
          [FL.output]: output,
          [OI.inputValue]: inputs,
          [OI.inputMime]: inputs && 'application/json',
          [OI.outputValue]: output,
          [OI.outputMime]: output && 'application/json',
          [GEN_AI.toolArguments]: isTool ? inputs : undefined,
          [GEN_AI.toolResult]: isTool ? output : undefined,
        }),
      }, rootCtx);
      if (bad) span.setStatus({ code: SpanStatusCode.ERROR, message: e.message ?? e.errorCode ?? e.status });
      for (const ev of evaluations ?? []) {
        if (ev.nodeId !== e.nodeId || ev.attempt !== e.attempt) continue;
        span.addEvent('gen_ai.evaluation.result', attrs({
          'gen_ai.evaluation.name': ev.name, 'gen_ai.evaluation.score.value': ev.score, 'gen_ai.evaluation.score.label': ev.label, 'gen_ai.evaluation.explanation': ev.explanation,
        }), hrTimeOf(e.endedAt));
      }
      if (lastAttempt.get(e.nodeId) === e.attempt) {
        for (const a of annotations ?? []) if (a.nodeId === e.nodeId) span.addEvent('gen_ai.evaluation.result', annotationEvent(a, content), hrTimeOf(a.createdAt));
      }
      order.set(span.spanContext().spanId, order.size);
      const nodeCtx = trace.setSpan(ROOT_CONTEXT, span);
      for (const c of e.calls) {
        next = { traceId, spanId: callSpanIdOf(run.runId, e.nodeId, e.attempt, c.callIndex) };
        const call = tracer.startSpan(`${OP.chat} ${c.model}`, { kind: SpanKind.CLIENT, startTime: hrTimeOf(c.startedAt), attributes: callAttributes(c, llm, content) }, nodeCtx);
        if (c.error) call.setStatus({ code: SpanStatusCode.ERROR, message: c.error });
        order.set(call.spanContext().spanId, order.size);
        call.end(hrTimeOf(c.startedAt + c.ms));
      }
      span.end(hrTimeOf(e.endedAt));
    }
    root.end(hrTimeOf(run.endedAt));
  }
  // In the order they were started (run, node, its calls, next node...), not the order they ended.
  return out.sort((a, b) => order.get(a.spanContext().spanId)! - order.get(b.spanContext().spanId)!);
}

/** The attributes of a `chat` span. */
function callAttributes(c: ModelCallRecord, provider: string, content: boolean): Attributes {
  const p = c.params;
  const code = c.error ? (/^([A-Z][A-Z0-9_]+):/.exec(c.error)?.[1] ?? '_OTHER') : undefined;
  const finish = c.stopReason ? (FINISH[c.stopReason] ?? c.stopReason) : undefined;
  const messages: Record<string, AttributeValue | undefined> = {};
  if (content) {
    let i = 0;
    if (c.system !== undefined) {
      messages[`${OI.inputMessages}.${i}.message.role`] = 'system';
      messages[`${OI.inputMessages}.${i++}.message.content`] = c.system;
    }
    messages[`${OI.inputMessages}.${i}.message.role`] = 'user';
    messages[`${OI.inputMessages}.${i}.message.content`] = c.prompt;
    messages[`${OI.outputMessages}.0.message.role`] = 'assistant';
    messages[`${OI.outputMessages}.0.message.content`] = c.completion;
  }
  return attrs({
    [GEN_AI.operation]: OP.chat,
    [GEN_AI.provider]: provider,
    [GEN_AI.requestModel]: c.model,
    [GEN_AI.responseModel]: c.model,
    [GEN_AI.temperature]: p.temperature,
    [GEN_AI.topP]: p.topP,
    [GEN_AI.topK]: p.topK,
    [GEN_AI.maxTokens]: p.maxTokens,
    [GEN_AI.seed]: c.seed,
    [GEN_AI.stopSequences]: p.stop?.length ? [...p.stop] : undefined,
    [GEN_AI.finishReasons]: finish ? [finish] : undefined,
    [GEN_AI.inputTokens]: c.promptTokens,
    [GEN_AI.outputTokens]: c.completionTokens,
    [GEN_AI.outputType]: c.jsonSchema ? 'json' : 'text',
    [GEN_AI.errorType]: code,
    [OI.spanKind]: 'LLM',
    [OI.modelName]: c.model,
    [OI.llmProvider]: provider,
    [OI.invocationParameters]: json({ ...p, seed: c.seed }),
    [OI.promptTokens]: c.promptTokens,
    [OI.completionTokens]: c.completionTokens,
    [OI.totalTokens]: c.promptTokens + c.completionTokens,
    [LANGFUSE_OBSERVATION_TYPE]: 'generation',
    [FL.callIndex]: c.callIndex,
    [FL.callRole]: c.role,
    [FL.modelRef]: c.modelRef,
    [FL.callMs]: c.ms,
    [FL.params]: json(p),
    [FL.callSeed]: c.seed,
    [FL.stopReason]: c.stopReason,
    [FL.callError]: c.error,
    ...(content
      ? {
          [GEN_AI.systemInstructions]: c.system === undefined ? undefined : json([{ type: 'text', content: c.system }]),
          [GEN_AI.inputMessages]: json([{ role: 'user', parts: [{ type: 'text', content: c.prompt }] }]),
          [GEN_AI.outputMessages]: json([{ role: 'assistant', parts: [{ type: 'text', content: c.completion }], ...(finish ? { finish_reason: finish } : {}) }]),
          [OI.inputValue]: c.prompt,
          [OI.outputValue]: c.completion,
          [FL.jsonSchema]: c.jsonSchema === undefined ? undefined : json(c.jsonSchema),
          [FL.promptTokenIds]: c.promptTokenIds ? [...c.promptTokenIds] : undefined,
          [FL.completionTokenIds]: c.completionTokenIds ? [...c.completionTokenIds] : undefined,
          ...messages,
        }
      : {}),
  });
}

/**
 * The spans as one OTLP/JSON `ExportTraceServiceRequest` (the official transformer's JSON
 * encoding: hex ids, int64 nanoseconds as decimal strings, enums as numbers).
 */
export function otlpJsonOf(spans: readonly ReadableSpan[]): string {
  return new TextDecoder().decode(JsonTraceSerializer.serializeRequest([...spans]));
}
