import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type SqliteStore } from '../store/index.ts';
import { importedGraphOf, importRuns, OtelError, readOtlpTraces } from './index.ts';

const read = (name: string) => readFileSync(new URL(`./testdata/${name}`, import.meta.url), 'utf8');
const opened: SqliteStore[] = [];
afterEach(() => {
  while (opened.length) opened.pop()!.close();
});
function imported(name: string) {
  const store = openStore(':memory:');
  opened.push(store);
  const res = importRuns(store, readOtlpTraces(read(name), name), { file: name });
  const config = store.getExperiment(res.experimentId).config;
  return { store, res, graph: (i: number) => importedGraphOf(config, res.runs[i]!.runId)! };
}
const edges = (g: { edges: Array<{ from: string; to: string }> }) => g.edges.map((e) => `${e.from}->${e.to}`);

describe('import of foreign OTLP/JSON traces', () => {
  it('LangGraph (OpenInference): graph nodes become nodes, the tool call is authored by the agent that wrote it, the failing tool is the root and the tools node its cascade', () => {
    const { store, res, graph } = imported('langgraph.otlp.json');
    expect(res.runs).toHaveLength(2);
    const run = res.runs[0]!;
    expect(run).toMatchObject({ taskId: 't-42', status: 'failed', correct: false, promptTokens: 52, completionTokens: 18, failures: { execution: 2 } });
    expect(graph(0).nodes).toEqual([
      { id: 'agent', kind: 'agent', role: 'agent', wiredBy: ['human'], runBy: 'agent' },
      { id: 'tools', kind: 'agent', role: 'tools', wiredBy: ['human'], runBy: 'tools' },
      { id: 'divide', kind: 'tool', role: 'agent', tool: 'divide', wiredBy: ['agent'], runBy: 'agent' },
    ]);
    expect(edges(graph(0))).toEqual(['agent->tools', 'divide->tools', 'agent->divide']);
    const events = store.getRunEvents(run.runId);
    expect(events.map((e) => `${e.seq}:${e.nodeId}:${e.status}${e.errorCode ? ':' + e.errorCode : ''}`)).toEqual(['0:agent:ok', '1:divide:failed:TOOL_ERROR', '2:tools:failed:AGENT_ERROR']);
    expect(events[1]!.message).toBe('ZeroDivisionError: division by zero');
    expect(events[1]!.inputs).toEqual({ input: { a: 12, b: 0 } });
    expect(events[0]!.calls).toEqual([
      expect.objectContaining({ model: 'gpt-4o-mini', system: 'You are a calculator agent. Use the tools.', prompt: 'What is 12 / 0?', params: { temperature: 0, maxTokens: 256 }, promptTokens: 52, completionTokens: 18, ms: 380 }),
    ]);
    expect(run.credit).toEqual({
      roots: [{ nodeId: 'divide', failureClass: 'execution', errorCode: 'TOOL_ERROR', blamed: 'agent' }],
      cascades: [{ nodeId: 'tools', status: 'failed', roots: ['divide'] }],
      byRole: {
        human: { rootFailures: [], authored: ['agent', 'tools'], credit: 0 },
        agent: { rootFailures: ['divide'], authored: ['agent', 'divide'], credit: -0.5 },
        tools: { rootFailures: [], authored: ['tools'], credit: 0 },
      },
      ambiguous: [],
      infrastructure: [],
      silent: false,
    });
    // The ReAct loop's second visit of the agent is a node of its own, fed by the tools step.
    expect(graph(1).nodes.map((n) => n.id)).toEqual(['agent', 'tools', 'divide', 'agent#2']);
    expect(edges(graph(1))).toEqual(['agent->tools', 'divide->tools', 'agent->divide', 'tools->agent#2']);
    expect(res.runs[1]).toMatchObject({ status: 'completed', answer: '12 / 4 = 3', credit: { roots: [], cascades: [], silent: false } });
    expect(store.getExperiment(res.experimentId)).toMatchObject({ kind: 'import', workflowName: 'LangGraph', dataset: 'otlp', split: 'import', status: 'completed', workflowYaml: '' });
  });

  it('OpenAI Agents SDK (GenAI invoke_agent / chat / execute_tool): the handoff chain and the failing tool are blamed on the agent that called it; an agent failing alone is its own root', () => {
    const { store, res, graph } = imported('openai-agents.otlp.json');
    expect(res.runs.map((r) => r.taskId)).toEqual(['conv-991', '0af7651916cd43dd8448eb211c80319c']);
    expect(graph(0).nodes.map((n) => `${n.id}[${n.kind}] by ${n.wiredBy.join('+')}/${n.runBy}`)).toEqual(['Triage[agent] by human/Triage', 'Billing[agent] by human/Billing', 'lookup_invoice[tool] by Billing/Billing']);
    expect(edges(graph(0))).toEqual(['Triage->Billing', 'lookup_invoice->Billing']);
    const [a, b] = res.runs;
    expect(a!.credit!.roots).toEqual([{ nodeId: 'lookup_invoice', failureClass: 'execution', errorCode: 'TOOL_ERROR', blamed: 'Billing' }]);
    expect(a!.credit!.cascades).toEqual([{ nodeId: 'Billing', status: 'failed', roots: ['lookup_invoice'] }]);
    expect(a!.credit!.byRole['Billing']).toEqual({ rootFailures: ['lookup_invoice'], authored: ['Billing', 'lookup_invoice'], credit: -0.5 });
    expect(a!.credit!.byRole['Triage']).toEqual({ rootFailures: [], authored: ['Triage'], credit: 0 });
    const events = store.getRunEvents(a!.runId);
    expect(events.find((e) => e.nodeId === 'lookup_invoice')!.message).toBe('ValueError: invoice 991 not found');
    expect(events.find((e) => e.nodeId === 'Triage')!.calls[0]).toMatchObject({ model: 'gpt-4o-mini-2024-07-18', modelRef: 'gpt-4o-mini', prompt: 'I was charged twice for invoice 991.', completion: '', stopReason: 'other', params: { temperature: 0.3, maxTokens: 512 }, promptTokens: 81, completionTokens: 12 });
    expect(b!.credit!.roots).toEqual([{ nodeId: 'Researcher', failureClass: 'execution', errorCode: 'AGENT_ERROR', blamed: 'Researcher' }]);
    expect(store.getRunEvents(b!.runId)[0]!.message).toBe('OutputGuardrailTripwireTriggered: guardrail no_pii tripped');
    expect(store.getExperiment(res.experimentId).workflowName).toBe('imported traces'); // two workflows in one file
  });

  it('reads JSON lines of requests (the collector file exporter) and proto field names', () => {
    const lines = [read('langgraph.otlp.json'), read('openai-agents.otlp.json').replace('"resourceSpans"', '"resource_spans"')].map((t) => JSON.stringify(JSON.parse(t))).join('\n');
    expect(readOtlpTraces(lines).map((r) => r.task.taskId)).toEqual(['t-42', 't-43', 'conv-991', '0af7651916cd43dd8448eb211c80319c']);
  });

  it('bad files fail with a code and the place', () => {
    const err = (text: string) => {
      try {
        readOtlpTraces(text, 'x.json');
      } catch (e) {
        return e as OtelError;
      }
      throw new Error('no error');
    };
    expect(err('{"resourceSpans": []}\nnot json')).toMatchObject({ code: 'BAD_JSON', location: { file: 'x.json', line: 2 } });
    expect(err('{"resourceSpans": []}')).toMatchObject({ code: 'NO_SPANS' });
    const bad = JSON.parse(read('langgraph.otlp.json'));
    bad.resourceSpans[0].scopeSpans[0].spans[3].spanId = 'xyz';
    const e = err(JSON.stringify(bad));
    expect(e).toBeInstanceOf(OtelError);
    expect(e.code).toBe('BAD_OTLP');
    expect(e.message).toBe('x.json: resourceSpans[0].scopeSpans[0].spans[3].spanId: "xyz" is not an 8-byte id (16 hex digits)');
  });
});
