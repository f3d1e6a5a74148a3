import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { seedDesignedExperiment } from '../api/designedRun.fixture.ts';
import { creditGraphOf } from '../blame/credit/index.ts';
import { runGraphOf } from '../design/index.ts';
import { openStore, type SqliteStore } from '../store/index.ts';
import type { NodeEvent } from '../trace/index.ts';
import { defaultTools } from '../tools/index.ts';
import { parseWorkflow } from '../workflow/index.ts';
import { creditGraphOfTrace, importedGraphOf, importRuns, otlpJsonOf, readOtlpTraces, runSpans, storedRuns, traceIdOf, nodeSpanIdOf, runSpanIdOf, FL } from './index.ts';
import { seedTeamExperiment, TEAM_TASKS } from './otel.fixture.ts';
import { canonicalJson, decodeProto } from './otlpProto.fixture.ts';

const tools = defaultTools();
let source: SqliteStore;
let team: string;
let designed: string;
const opened: SqliteStore[] = [];
const fresh = () => {
  const s = openStore(':memory:');
  opened.push(s);
  return s;
};
afterEach(() => {
  while (opened.length) opened.pop()!.close();
});

beforeAll(async () => {
  source = openStore(':memory:');
  team = await seedTeamExperiment(source);
  designed = await seedDesignedExperiment(source);
});

/** What structure and credit read of an event, in seq order. */
const shape = (events: readonly NodeEvent[]) =>
  events.map((e) => ({ nodeId: e.nodeId, attempt: e.attempt, seq: e.seq, kind: e.kind, role: e.role, wiredBy: e.wiredBy, runBy: e.runBy, status: e.status, failureClass: e.failureClass, errorCode: e.errorCode, causes: e.causes, simulated: e.simulated, fault: e.fault, calls: e.calls.length }));

/** The credit graph of a stored run as the engine scored it (its workflow, with a design spliced in). */
function originalCreditGraph(expId: string, events: readonly NodeEvent[]) {
  const exp = source.getExperiment(expId);
  const g = creditGraphOf(runGraphOf(parseWorkflow(exp.workflowYaml, { tools }).graph, events, { tools }));
  return { nodes: g.nodes.map((n) => ({ id: n.id, wiredBy: n.wiredBy, ...(n.runBy ? { runBy: n.runBy } : {}), ...(n.argumentFrom ? { argumentFrom: n.argumentFrom } : {}) })), edges: g.edges.map((e) => ({ from: e.from, to: e.to, ...(e.optional ? { optional: true } : {}) })) };
}

function roundTrip(expId: string, withContent: boolean) {
  const { experiment, runs } = storedRuns(source, expId, tools);
  const text = otlpJsonOf(runSpans(experiment, runs, { withContent }));
  const target = fresh();
  const imported = importRuns(target, readOtlpTraces(text, 'export.json'), { file: 'export.json' });
  return { runs, text, target, imported };
}

describe('OTLP/JSON round trip of stored runs', () => {
  it('the fixtures have what the round trip must carry: root failures of three classes, cascades, a loop, a SIMULATED mark, a failed call', () => {
    const runs = source.listRuns(team);
    expect(runs).toHaveLength(TEAM_TASKS);
    expect(runs.map((r) => r.credit!.roots.map((x) => `${x.nodeId}:${x.failureClass}:${x.blamed ?? '-'}`))).toEqual([[], ['plan:execution:planner'], ['calculate:execution:solver'], [], ['answer:infrastructure:-']]);
    expect(runs[1]!.credit!.cascades.map((c) => c.nodeId)).toEqual(['solve', 'calculate', 'verify', 'answer']);
    expect(Math.max(...source.getRunEvents(runs[3]!.runId).map((e) => e.attempt))).toBe(2);
    expect(source.getRunEvents(runs[3]!.runId).find((e) => e.nodeId === 'plan')).toMatchObject({ simulated: true, fault: 'wrong' });
    expect(source.getRunEvents(runs[4]!.runId).find((e) => e.nodeId === 'answer')!.calls[0]!.error).toMatch(/^GENERATION_FAILED: /);
    const d = source.listRuns(designed);
    expect(d[0]!.credit!.roots).toEqual([expect.objectContaining({ nodeId: 'b', failureClass: 'wiring', blamed: 'designer' })]);
  });

  for (const [name, which] of [['the team runs (failures, cascades, a loop)', () => team], ['the designed runs (a design spliced in)', () => designed]] as const) {
    it(`${name}: the same nodes, edges, statuses and credit per role, without content`, () => {
      const { runs, target, imported } = roundTrip(which(), false);
      expect(imported.runs).toHaveLength(runs.length);
      for (const [i, orig] of runs.entries()) {
        const back = imported.runs[i]!;
        const events = target.getRunEvents(back.runId);
        expect(creditGraphOfTrace(importedGraphOf(target.getExperiment(imported.experimentId).config, back.runId)!)).toEqual(originalCreditGraph(which(), orig.events));
        expect(shape(events)).toEqual(shape(orig.events));
        expect(back.credit).toEqual(orig.run.credit);
        expect(back.credit!.byRole).toEqual(orig.run.credit!.byRole);
        expect({ status: back.status, correct: back.correct, score: back.score, failures: back.failures, seed: back.seed }).toEqual({ status: orig.run.status, correct: orig.run.correct, score: orig.run.score, failures: orig.run.failures, seed: orig.run.seed });
        // No content left the machine.
        expect(events.every((e) => Object.keys(e.inputs).length === 0 && e.output === undefined && e.calls.every((c) => c.prompt === '' && c.completion === ''))).toBe(true);
      }
    });

    it(`${name}: with content, every event and call comes back field for field`, () => {
      const { runs, target, imported } = roundTrip(which(), true);
      for (const [i, orig] of runs.entries()) {
        const back = imported.runs[i]!;
        const events = target.getRunEvents(back.runId).map((e) => ({ ...e, runId: orig.run.runId }));
        expect(events).toEqual(orig.events);
        const { runId: _a, experimentId: _b, ...rest } = target.getRun(back.runId);
        const { runId: _c, experimentId: _d, ...want } = orig.run;
        expect(rest).toEqual(want);
      }
      // The imported experiment carries the workflow text, so it compiles as the original did.
      expect(target.getExperiment(imported.experimentId)).toMatchObject({ kind: 'import', workflowYaml: source.getExperiment(which()).workflowYaml, status: 'completed' });
      expect(target.listTasks(imported.experimentId)).toEqual(source.listTasks(which()));
    });
  }

  it('an id that is neither an experiment nor a run is NOT_FOUND naming both (it said "no run")', () => {
    expect(() => storedRuns(source, 'nosuch', tools)).toThrow(/: no experiment or run nosuch$/);
    expect(() => storedRuns(source, 'nosuch', tools)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
  });

  it('exports are reproducible: ids from run id + node id + attempt, times from the trace', () => {
    const { experiment, runs } = storedRuns(source, team, tools);
    const a = otlpJsonOf(runSpans(experiment, runs));
    expect(otlpJsonOf(runSpans(experiment, runs))).toBe(a);
    const doc = JSON.parse(a) as { resourceSpans: Array<{ scopeSpans: Array<{ scope: { name: string }; spans: Array<Record<string, unknown>> }> }> };
    const spans = doc.resourceSpans[0]!.scopeSpans[0]!.spans;
    const run = runs[3]!;
    const solve2 = run.events.find((e) => e.nodeId === 'solve' && e.attempt === 2)!;
    const span = spans.find((s) => s['spanId'] === nodeSpanIdOf(run.run.runId, 'solve', 2))!;
    expect(span).toMatchObject({ traceId: traceIdOf(run.run.runId), parentSpanId: runSpanIdOf(run.run.runId), name: 'invoke_agent solver', startTimeUnixNano: `${BigInt(solve2.startedAt) * 1_000_000n}`, endTimeUnixNano: `${BigInt(solve2.endedAt) * 1_000_000n}` });
    expect(doc.resourceSpans[0]!.scopeSpans[0]!.scope.name).toBe('flowlab');
    // One trace per run; run span, node span per event, chat span per call.
    const want = runs.reduce((n, r) => n + 1 + r.events.length + r.events.reduce((m, e) => m + e.calls.length, 0), 0);
    expect(spans).toHaveLength(want);
    expect(new Set(spans.map((s) => s['traceId'])).size).toBe(TEAM_TASKS);
  });

  it('spans carry the GenAI and OpenInference attributes Phoenix and Langfuse read', () => {
    const { experiment, runs } = storedRuns(source, team, tools);
    const doc = JSON.parse(otlpJsonOf(runSpans(experiment, runs.slice(2, 3), { withContent: true })));
    const spans = doc.resourceSpans[0].scopeSpans[0].spans as Array<{ name: string; kind: number; status: { code: number; message?: string }; attributes: Array<{ key: string; value: Record<string, unknown> }> }>;
    const attrs = (name: string) => Object.fromEntries(spans.find((s) => s.name === name)!.attributes.map((a) => [a.key, Object.values(a.value)[0]]));
    expect(spans.map((s) => s.name)).toEqual(['invoke_workflow gsm8k-team', 'invoke_agent planner', 'chat scripted (simulated)', 'invoke_agent solver', 'chat scripted (simulated)', 'execute_tool calculator', 'invoke_agent verifier', 'invoke_agent answerer']);
    expect(attrs('invoke_workflow gsm8k-team')).toMatchObject({ 'gen_ai.operation.name': 'invoke_workflow', 'gen_ai.workflow.name': 'gsm8k-team', 'openinference.span.kind': 'CHAIN', 'session.id': team, 'error.type': 'TOOL_ERROR', [FL.runStatus]: 'failed' });
    expect(attrs('invoke_agent solver')).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'solver', 'openinference.span.kind': 'AGENT', 'graph.node.id': 'solve', 'graph.node.parent_id': 'plan', [FL.wiredBy]: 'human', [FL.runBy]: 'solver', [FL.status]: 'ok' });
    const tool = spans.find((s) => s.name === 'execute_tool calculator')!;
    expect(tool.status.code).toBe(2);
    expect(attrs('execute_tool calculator')).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'calculator', 'openinference.span.kind': 'TOOL', 'error.type': 'TOOL_ERROR', [FL.failureClass]: 'execution', 'gen_ai.tool.call.arguments': '{"expression":"1/0"}' });
    const chat = spans.filter((s) => s.name.startsWith('chat '))[1]!;
    expect(chat.kind).toBe(3); // SPAN_KIND_CLIENT
    const c = Object.fromEntries(chat.attributes.map((a) => [a.key, Object.values(a.value)[0]]));
    expect(c).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'llama.cpp', 'gen_ai.request.model': 'scripted (simulated)', 'gen_ai.request.max_tokens': 48, 'gen_ai.request.temperature': 0, 'gen_ai.output.type': 'json', 'openinference.span.kind': 'LLM', 'llm.input_messages.0.message.role': 'system' });
    expect(c['gen_ai.response.finish_reasons']).toEqual({ values: [{ stringValue: 'stop' }] });
    expect(c['gen_ai.usage.input_tokens']).toBe(c['llm.token_count.prompt']);
    expect(c['llm.token_count.total']).toBe(Number(c['gen_ai.usage.input_tokens']) + Number(c['gen_ai.usage.output_tokens']));
    expect(JSON.parse(String(c['gen_ai.output.messages']))).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: '{"expression":"1/0"}' }], finish_reason: 'stop' }]);
  });
});

describe('reading Flowlab traces back', () => {
  it('a span whose Flowlab attribute is garbled fails naming the span and the attribute', () => {
    const { experiment, runs } = storedRuns(source, team, tools);
    const doc = JSON.parse(otlpJsonOf(runSpans(experiment, runs.slice(1, 2))));
    const span = doc.resourceSpans[0].scopeSpans[0].spans[1];
    span.attributes.find((a: { key: string }) => a.key === FL.status).value = { stringValue: 'broken' };
    expect(() => readOtlpTraces(JSON.stringify(doc), 'x.json')).toThrow(
      expect.objectContaining({ code: 'BAD_FLOWLAB_SPAN', message: `x.json: span "invoke_agent planner" (resourceSpans[0].scopeSpans[0].spans[1], span id ${span.spanId}): attribute flowlab.node.status must be one of ok, failed, cascade, skipped, got "broken"` }),
    );
  });

  it('an imported experiment exports again to the same spans (its graphs are kept)', () => {
    const { experiment, runs } = storedRuns(source, team, tools);
    const text = otlpJsonOf(runSpans(experiment, runs));
    const target = fresh();
    const { experimentId } = importRuns(target, readOtlpTraces(text));
    const again = storedRuns(target, experimentId, tools);
    expect(again.runs.map((r) => r.graph)).toEqual(runs.map((r) => r.graph));
    expect(again.runs.map((r) => r.run.credit)).toEqual(runs.map((r) => r.run.credit));
  });
});

describe('the export against the OTLP protobuf definitions', () => {
  it('every field of the JSON is a field of its proto message with the JSON mapping type, and it equals the official protobuf encoding field for field', () => {
    const { experiment, runs } = storedRuns(source, team, tools);
    const spans = runSpans(experiment, runs, { withContent: true });
    const json = JSON.parse(otlpJsonOf(spans));
    const canonical = canonicalJson(json);
    const proto = decodeProto(ProtobufTraceSerializer.serializeRequest(spans)!);
    expect(canonical).toEqual(proto);
    // The mapping's own rules, asserted directly on the text: hex ids, decimal-string nanos, enum numbers.
    const s = json.resourceSpans[0].scopeSpans[0].spans[1];
    expect(s.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(s.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(typeof s.startTimeUnixNano).toBe('string');
    expect(typeof s.kind).toBe('number');
    expect(typeof s.status.code).toBe('number');
  });

  it('the checker rejects what the mapping forbids (so the check above can fail)', () => {
    const { experiment, runs } = storedRuns(source, team, tools);
    const json = JSON.parse(otlpJsonOf(runSpans(experiment, runs.slice(0, 1))));
    const span = json.resourceSpans[0].scopeSpans[0].spans[0];
    expect(() => canonicalJson({ resourceSpans: [{ scopeSpans: [{ spans: [{ ...span, traceId: Buffer.from(span.traceId, 'hex').toString('base64') }] }] }] })).toThrow(/traceId: expected 32 lowercase hex digits/);
    expect(() => canonicalJson({ resourceSpans: [{ scopeSpans: [{ spans: [{ ...span, startTimeUnixNano: 1.5 }] }] }] })).toThrow(/startTimeUnixNano: expected a fixed64 as a decimal string/);
    expect(() => canonicalJson({ resourceSpans: [{ scopeSpans: [{ spans: [{ ...span, kind: 'SPAN_KIND_INTERNAL' }] }] }] })).toThrow(/kind: expected an enum number/);
    expect(() => canonicalJson({ resourceSpans: [{ scopeSpans: [{ spans: [{ ...span, start_time: '1' }] }] }] })).toThrow(/start_time: not a field of Span/);
  });
});
