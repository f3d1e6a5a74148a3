/**
 * Reading back a trace Flowlab's exporter wrote (toSpans.ts): the run span's `flowlab.run.*` and
 * `flowlab.graph`, each node span's `flowlab.node.*`, each chat span's `flowlab.call.*` and GenAI
 * attributes give back the run, its node events and model calls as stored, field for field (with
 * `withContent`; without it, inputs, outputs, prompts and completions come back empty).
 */
import { asNodeId, asRoleName, asRunId, type NodeId } from '../ids.ts';
import type { SamplingParams } from '../model/provider.ts';
import type { RunRecord } from '../results/index.ts';
import { isNodeErrorCode, type ModelCallRecord, type NodeEvent } from '../trace/index.ts';
import { FL, GEN_AI } from './attributes.ts';
import { OtelError } from './errors.ts';
import type { TraceGraph } from './graph.ts';
import { messagesText, partsText, push, SpanAttrs, type ImportedRun } from './imported.ts';
import type { OtlpSpan } from './otlpJson.ts';

const RUN_STATUS = ['completed', 'failed', 'cancelled'] as const;
const KINDS = ['agent', 'tool', 'skill'] as const;
const STATUS = ['ok', 'failed', 'cascade', 'skipped'] as const;
const CLASSES = ['wiring', 'execution', 'cascade', 'infrastructure'] as const;

/** Whether a trace's spans were written by Flowlab's exporter: a root span carrying `flowlab.run.id` and `flowlab.graph`. */
export function isFlowlabTrace(spans: readonly OtlpSpan[]): boolean {
  return spans.some((s) => !s.parentSpanId && s.attributes[FL.runId] !== undefined && s.attributes[FL.graph] !== undefined);
}

/** The run of one Flowlab trace. Errors: OtelError `BAD_FLOWLAB_SPAN` naming the span and attribute. */
export function flowlabRun(spans: readonly OtlpSpan[], file: string): ImportedRun {
  const rootSpan = spans.find((s) => !s.parentSpanId && s.attributes[FL.runId] !== undefined)!;
  const root = new SpanAttrs(rootSpan, file);
  const graph = readGraph(root);
  const nodeSpans = spans.filter((s) => s.parentSpanId === rootSpan.spanId && s.attributes[FL.nodeId] !== undefined);
  const callsOf = new Map<string, OtlpSpan[]>();
  for (const s of spans) if (s.parentSpanId && s.attributes[FL.callIndex] !== undefined) push(callsOf, s.parentSpanId, s);
  const content = root.has(FL.answer) || root.has(FL.taskInput) || nodeSpans.some((s) => s.attributes[FL.inputs] !== undefined);

  const events = nodeSpans.map((s) => nodeEvent(new SpanAttrs(s, file), (callsOf.get(s.spanId) ?? []).map((c) => new SpanAttrs(c, file)))).sort((a, b) => a.seq - b.seq);
  const ladder = root.json(FL.ladder) as RunRecord['ladder'];
  const taskInput = root.json(FL.taskInput);
  const run: ImportedRun['run'] = {
    status: root.oneOf(FL.runStatus, RUN_STATUS, true),
    score: root.needNum(FL.score),
    correct: root.needBool(FL.correct),
    graded: true,
    seed: root.needNum(FL.runSeed),
    promptTokens: root.needNum(FL.runPromptTokens),
    completionTokens: root.needNum(FL.runCompletionTokens),
    startedAt: root.startMs,
    endedAt: root.endMs,
    ...(root.has(FL.answer) ? { answer: root.str(FL.answer) } : {}),
    ...(root.has(FL.expected) ? { expected: root.str(FL.expected) } : {}),
    ...(ladder ? { ladder } : {}),
    ...(root.bool(FL.runSimulated) ? { simulated: true } : {}),
  };
  return {
    producer: 'flowlab',
    traceId: rootSpan.traceId,
    spans: spans.length,
    content,
    sourceRunId: root.needStr(FL.runId),
    sourceExperimentId: root.str(FL.experimentId),
    workflowName: root.str(GEN_AI.workflowName) ?? rootSpan.name,
    ...(root.has(FL.workflowYaml) ? { workflowYaml: root.str(FL.workflowYaml) } : {}),
    dataset: root.str(FL.dataset),
    split: root.str(FL.split),
    experimentSeed: root.num(FL.experimentSeed),
    task: { taskId: root.str(FL.taskId) ?? rootSpan.traceId, input: taskInput ?? {}, ...(root.has(FL.expected) ? { expected: root.str(FL.expected) } : {}) },
    run,
    events,
    graph,
  };
}

function readGraph(root: SpanAttrs): TraceGraph {
  const g = root.json(FL.graph) as TraceGraph | undefined;
  const ok =
    g && Array.isArray(g.nodes) && Array.isArray(g.edges) &&
    g.nodes.every((n) => typeof n?.id === 'string' && (KINDS as readonly string[]).includes(n.kind) && Array.isArray(n.wiredBy)) &&
    g.edges.every((e) => typeof e?.from === 'string' && typeof e?.to === 'string');
  if (!ok) throw new OtelError('BAD_FLOWLAB_SPAN', `${root.file}: span "${root.span.name}" (${root.span.path}): attribute ${FL.graph} is not a graph ({nodes: [{id, kind, wiredBy}], edges: [{from, to}]})`, { file: root.file, path: root.span.path });
  return g;
}

function nodeEvent(a: SpanAttrs, calls: SpanAttrs[]): NodeEvent {
  const errorCode = a.str(FL.errorCode);
  if (errorCode !== undefined && !isNodeErrorCode(errorCode)) throw new OtelError('BAD_FLOWLAB_SPAN', `${a.file}: span "${a.span.name}" (${a.span.path}): attribute ${FL.errorCode} "${errorCode}" is not a node error code`, { file: a.file, path: a.span.path });
  const role = a.str(FL.role);
  const runBy = a.str(FL.runBy);
  const causes = a.strs(FL.causes);
  const simulated = a.bool(FL.simulated);
  const failureClass = a.oneOf(FL.failureClass, CLASSES);
  return {
    runId: asRunId(''),
    nodeId: asNodeId(a.needStr(FL.nodeId)),
    attempt: a.needNum(FL.attempt),
    seq: a.needNum(FL.seq),
    kind: a.oneOf(FL.kind, KINDS, true),
    ...(role !== undefined ? { role: asRoleName(role) } : {}),
    wiredBy: asRoleName(a.needStr(FL.wiredBy)),
    ...(runBy !== undefined ? { runBy: asRoleName(runBy) } : {}),
    inputs: (a.json(FL.inputs) as Record<string, unknown> | undefined) ?? {},
    ...(a.has(FL.output) ? { output: a.json(FL.output) } : {}),
    status: a.oneOf(FL.status, STATUS, true),
    ...(failureClass ? { failureClass } : {}),
    ...(errorCode !== undefined ? { errorCode } : {}),
    ...(a.has(FL.message) ? { message: a.str(FL.message) } : {}),
    ...(causes ? { causes: causes.map(asNodeId) as NodeId[] } : {}),
    calls: calls.map(modelCall).sort((x, y) => x.callIndex - y.callIndex),
    startedAt: a.startMs,
    endedAt: a.endMs,
    ...(simulated !== undefined ? { simulated } : {}),
    ...(a.has(FL.fault) ? { fault: a.str(FL.fault) } : {}),
  };
}

function modelCall(a: SpanAttrs): ModelCallRecord {
  const system = a.has(GEN_AI.systemInstructions) ? partsText(a.json(GEN_AI.systemInstructions)).join('\n') : undefined;
  const jsonSchema = a.json(FL.jsonSchema) as ModelCallRecord['jsonSchema'];
  const promptTokenIds = a.nums(FL.promptTokenIds);
  const completionTokenIds = a.nums(FL.completionTokenIds);
  return {
    callIndex: a.needNum(FL.callIndex),
    role: asRoleName(a.needStr(FL.callRole)),
    modelRef: a.needStr(FL.modelRef),
    model: a.needStr(GEN_AI.requestModel),
    ...(system !== undefined ? { system } : {}),
    prompt: messagesText(a.json(GEN_AI.inputMessages), (r) => r === 'user') ?? '',
    params: a.json(FL.params) as SamplingParams,
    seed: a.needNum(FL.callSeed),
    ...(jsonSchema !== undefined ? { jsonSchema } : {}),
    completion: messagesText(a.json(GEN_AI.outputMessages), (r) => r === 'assistant') ?? '',
    promptTokens: a.needNum(GEN_AI.inputTokens),
    completionTokens: a.needNum(GEN_AI.outputTokens),
    ms: a.needNum(FL.callMs),
    startedAt: a.startMs,
    ...(a.has(FL.stopReason) ? { stopReason: a.str(FL.stopReason) as ModelCallRecord['stopReason'] } : {}),
    ...(a.has(FL.callError) ? { error: a.str(FL.callError) } : {}),
    ...(promptTokenIds ? { promptTokenIds } : {}),
    ...(completionTokenIds ? { completionTokenIds } : {}),
  };
}
