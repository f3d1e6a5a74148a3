import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CreditResult } from '../../core/blame/credit/types.ts';
import type { NodeEvent } from '../../core/trace/events.ts';
import { graphOf } from './graphEdits.ts';
import { blameText, buildTraceModel, listOrder } from './traceModel.ts';

const TEAM = graphOf(readFileSync(new URL('../../examples/gsm8k-team.yaml', import.meta.url), 'utf8'))!;

let seq = 0;
const ev = (nodeId: string, p: Partial<NodeEvent> = {}): NodeEvent => ({
  runId: 'r' as never, nodeId: nodeId as never, attempt: 1, seq: seq++, kind: 'agent', wiredBy: 'human' as never, inputs: {}, status: 'ok', calls: [], startedAt: 0, endedAt: 1, ...p,
});

const emptyCredit = (p: Partial<CreditResult> = {}): CreditResult => ({ roots: [], cascades: [], byRole: {}, ambiguous: [], infrastructure: [], silent: false, ...p });

describe('buildTraceModel', () => {
  it('marks the root failure with its blamed role, cascades below it, and unrun nodes skipped', () => {
    seq = 0;
    const events = [
      ev('plan', { role: 'planner' as never }),
      ev('solve', { role: 'solver' as never, status: 'failed', failureClass: 'execution', errorCode: 'CONTRACT_VIOLATION', simulated: true, fault: 'contract' }),
      ev('calculate', { kind: 'tool', status: 'cascade', failureClass: 'cascade', causes: ['solve' as never] }),
    ];
    const credit = emptyCredit({
      roots: [{ nodeId: 'solve' as never, failureClass: 'execution', blamed: 'solver' as never, simulated: true }],
      cascades: [{ nodeId: 'calculate' as never, status: 'cascade', roots: ['solve' as never] }],
      byRole: { solver: { rootFailures: ['solve' as never], authored: ['solve' as never, 'calculate' as never], credit: -0.5 } },
    });
    const m = buildTraceModel(TEAM, { credit, correct: false, status: 'failed' }, events);
    const by = Object.fromEntries(m.nodes.map((n) => [n.id, n]));
    expect(by.plan).toMatchObject({ state: 'ok', ran: true });
    expect(by.solve).toMatchObject({ state: 'root', blamed: 'solver', simulated: true, fault: 'contract' });
    expect(by.calculate).toMatchObject({ state: 'cascade', roots: ['solve'] });
    expect(by.verify).toMatchObject({ state: 'skipped', ran: false });
    expect(blameText(by.solve!)).toBe('blamed: solver');
    expect(m.blame).toEqual([{ role: 'solver', rootFailures: ['solve'], authored: 2, credit: -0.5 }]);
    expect(m.edges.some((e) => e.maxIterations === 2)).toBe(true);
    expect(listOrder(m.nodes).map((n) => n.id)).toEqual(['plan', 'solve', 'calculate', 'answer', 'verify']);
  });

  it('shows ambiguous candidates and harness faults', () => {
    seq = 0;
    const m = buildTraceModel(TEAM, {
      credit: emptyCredit({
        roots: [
          { nodeId: 'calculate' as never, failureClass: 'execution', blamed: null, candidates: ['solver' as never, 'human' as never] },
          { nodeId: 'plan' as never, failureClass: 'infrastructure', blamed: null },
        ],
        infrastructure: ['plan' as never],
      }),
      correct: false,
      status: 'failed',
    }, [ev('plan', { status: 'failed', failureClass: 'infrastructure' }), ev('calculate', { kind: 'tool', status: 'failed', failureClass: 'execution' })]);
    const by = Object.fromEntries(m.nodes.map((n) => [n.id, n]));
    expect(blameText(by.calculate!)).toBe('ambiguous: solver | human');
    expect(blameText(by.plan!)).toBe('harness fault (no role blamed)');
    expect(m.infrastructure).toEqual(['plan']);
  });

  it('marks the answer node of a silent run', () => {
    seq = 0;
    const events = ['plan', 'solve', 'calculate', 'verify', 'answer'].map((id) => ev(id));
    const m = buildTraceModel(TEAM, { credit: emptyCredit({ silent: true }), correct: false, status: 'completed' }, events);
    expect(m.silent).toBe(true);
    expect(m.nodes.find((n) => n.id === 'answer')!.state).toBe('silent');
    expect(m.nodes.filter((n) => n.state === 'ok')).toHaveLength(4);
  });

  it('groups attempts per node and draws nodes the workflow does not name', () => {
    seq = 0;
    const m = buildTraceModel(null, { credit: undefined, correct: false, status: 'failed' }, [
      ev('solve', { attempt: 1, status: 'ok' }),
      ev('solve', { attempt: 2, status: 'failed', failureClass: 'execution' }),
    ]);
    expect(m.nodes).toHaveLength(1);
    expect(m.nodes[0]).toMatchObject({ id: 'solve', state: 'root', attempts: 2, blamed: undefined });
    expect(blameText(m.nodes[0]!)).toBe('blame not computed');
    expect(m.attempts.get('solve')!.map((e) => e.attempt)).toEqual([1, 2]);
  });
});
