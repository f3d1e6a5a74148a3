import { describe, expect, it } from 'vitest';
import { asNodeId } from '../core/ids.ts';
import { agentEvent, modelCall, runRecord } from '../test/fixtures.ts';
import { formatRun } from './commands/show.ts';

describe('flowlab show: how each output was written', () => {
  it('marks a node cut at max_tokens, a repaired output and thinking kept apart; a plain node has no mark', () => {
    const run = runRecord('exp', 0);
    const events = [
      agentEvent(run.runId, 'plan', 'planner', [{ ...modelCall(), stopReason: 'maxTokens', thinking: 'hm' }]),
      agentEvent(run.runId, 'solve', 'solver', [{ ...modelCall(), completion: '```json\n{"x":1}\n```', repair: 'fenced' }], { seq: 1 }),
      agentEvent(run.runId, 'check', 'checker', [modelCall()], { seq: 2 }),
    ];
    const text = formatRun(run, events, { nodes: ['plan', 'solve', 'check'].map((id) => ({ id: asNodeId(id) })), edges: [] });
    const line = (id: string) => text.split('\n').find((l) => l.includes(`${id}#1`))!;
    expect(line('plan')).toMatch(/✓ plan#1 \[agent planner\] ok \(cut at max_tokens\) .*\[CUT at max_tokens\]  \[thinking kept apart\]$/);
    expect(line('solve')).toMatch(/\[REPAIRED: JSON taken from a fenced block\]$/);
    expect(line('check')).not.toMatch(/CUT|REPAIRED|thinking/);
  });
});
