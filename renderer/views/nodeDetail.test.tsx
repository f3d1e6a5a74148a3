import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { createStore } from 'zustand/vanilla';
import { asNodeId, asRoleName, asRunId } from '../../core/ids.ts';
import type { NodeEvent } from '../../core/api/client.ts';
import { buildTraceModel } from '../lib/traceModel.ts';
import type { LabState } from '../state.ts';
import { LabContext } from '../useLab.ts';
import { NodeDetail } from './NodeDetail.tsx';

/** One solver node whose call is as given (a hand-written event, no model). */
function render(call: Partial<NodeEvent['calls'][number]>): string {
  const event: NodeEvent = {
    runId: asRunId('e/0'), nodeId: asNodeId('solve'), attempt: 1, seq: 0, kind: 'agent', role: asRoleName('solver'), wiredBy: 'human', runBy: asRoleName('solver'),
    status: 'ok', inputs: {}, output: { answer: 4 }, startedAt: 0, endedAt: 5,
    calls: [{ callIndex: 0, role: asRoleName('solver'), modelRef: 'm', model: 'm', prompt: 'Solve', params: { temperature: 0, maxTokens: 16 }, seed: 1, completion: '```json\n{"answer": 4}\n```', promptTokens: 1, completionTokens: 16, ms: 5, startedAt: 0, ...call }],
  } as NodeEvent;
  const model = buildTraceModel({ nodes: [{ id: 'solve', kind: 'agent', role: 'solver' }], edges: [] } as never, { credit: undefined, correct: true, status: 'completed' }, [event]);
  const store = createStore<LabState>(() => ({ traceNode: 'solve', traceAttempt: null, selectTraceNode: () => {} }) as unknown as LabState);
  return renderToStaticMarkup(<LabContext.Provider value={store}><NodeDetail model={model} /></LabContext.Provider>);
}

describe('the Trace view node panel: how an output was written', () => {
  it('marks a call cut at max_tokens and a repaired output, and shows the thinking apart', () => {
    const html = render({ stopReason: 'maxTokens', repair: 'fenced', thinking: 'add 2 and 2' });
    expect(html).toContain('data-testid="cut-marker"');
    expect(html).toMatch(/data-testid="repair-marker"[^>]*>repaired: JSON from a fenced block<\/span>/);
    expect(html).toMatch(/<pre class="value muted" data-testid="node-thinking">add 2 and 2<\/pre>/);
  });
  it('shows none of them for a call written as asked', () => {
    const html = render({ stopReason: 'eos' });
    expect(html).not.toContain('cut-marker');
    expect(html).not.toContain('repair-marker');
    expect(html).not.toContain('node-thinking');
  });
});
