import { describe, expect, it } from 'vitest';
import type { LoopCurve, WeightVersionView } from '../../core/api/client.ts';
import { beforeAfter, chartSeries, coevolution, currentLoop, hyperText, learningRoles, lineageRows, rungRows, signed } from './learning.ts';

const point = (iteration: number, reward: number | null, kl: number | null, over: Partial<LoopCurve['points'][number]> = {}): LoopCurve['points'][number] => ({
  iteration, versionId: `wv-${iteration}`, experimentId: `e${iteration}`, reward, score: null, rungs: null, kl, loss: null, tokensPerSecond: null,
  seconds: { sampling: null, training: null, writeReload: null }, ...over,
});
const loop: LoopCurve = {
  loopId: 'tl-1',
  points: [
    point(1, 0.05, null, { rungs: { format: 0.5, validity: 1, completion: 1, correctness: 0, credit: 0 }, tokensPerSecond: 812.6, seconds: { sampling: 0.9, training: 0.4, writeReload: 0.05 } }),
    point(2, 0.7, 0.0123),
  ],
  before: { experimentId: 'b', score: 0.05, reward: 0.1, runs: 20, accuracy: 0.05, guard: { runs: 20, labelled: 20, bestConstant: { answer: 'x', accuracy: 0.5 }, distinctAnswers: 3, topAnswer: { answer: 'x', share: 0.4 } } },
  after: { experimentId: 'a', score: 0.65, reward: null, runs: 20, accuracy: 0.65, guard: { runs: 20, labelled: 20, bestConstant: { answer: 'x', accuracy: 0.5 }, distinctAnswers: 4, topAnswer: { answer: 'x', share: 0.3 } } },
  hyper: { lr: 0.001 },
};
const v = (id: string, role: string, parentId?: string, iteration?: number): WeightVersionView => ({
  id, role, basePath: '/b', path: `/v/${id}.gguf`, ...(parentId ? { parentId } : {}), ...(iteration !== undefined ? { iteration } : {}),
  hyper: { lr: 0.001, kl: 0.05, loopId: 'tl-1', maxGradNorm: null }, metrics: {}, createdAt: 0,
});

describe('learning view model', () => {
  it('lists every role with curves or versions and picks the newest loop', () => {
    expect(learningRoles({ roles: [{ role: 'solver', loops: [loop] }] }, [v('x', 'planner')])).toEqual(['planner', 'solver']);
    expect(learningRoles(undefined, undefined)).toEqual([]);
    const newer = { ...loop, loopId: 'tl-2' };
    expect(currentLoop({ role: 'solver', loops: [loop, newer] })?.loopId).toBe('tl-2');
    expect(currentLoop(undefined)).toBeUndefined();
  });

  it('builds reward and KL series with gaps, and the rung table', () => {
    expect(chartSeries(loop)).toEqual({ labels: ['1', '2'], reward: [0.05, 0.7], kl: [null, 0.0123] });
    expect(chartSeries(undefined)).toEqual({ labels: [], reward: [], kl: [] });
    const rows = rungRows(loop);
    expect(rows[0]).toEqual({ iteration: 1, versionId: 'wv-1', reward: '0.05', rungs: ['0.50', '1.00', '1.00', '0.00', '0.00'], kl: '–', tokensPerSecond: '813', seconds: '0.90 / 0.40 / 0.05' });
    expect(rows[1]).toMatchObject({ rungs: ['–', '–', '–', '–', '–'], kl: '0.0123', seconds: '– / – / –' });
  });

  it('gives the lineage with parents and depth, hyper-parameters without the loop id', () => {
    const rows = lineageRows([v('a', 'solver'), v('b', 'solver', 'a', 1), v('p', 'planner'), v('c', 'solver', 'b', 2)], 'solver');
    expect(rows.map((r) => [r.id, r.parent, r.iteration, r.depth])).toEqual([['a', '–', '–', 0], ['b', 'a', '1', 1], ['c', 'b', '2', 2]]);
    expect(rows[2]!.path).toBe('/v/c.gguf');
    expect(rows[0]!.hyper).toBe('lr 0.001 · kl 0.05');
    expect(hyperText({ group: 8, nested: { a: 1 } })).toBe('group 8 · nested {"a":1}');
  });

  it('compares held-out before and after', () => {
    const ba = beforeAfter(loop);
    expect(ba.deltaScore).toBeCloseTo(0.6);
    expect(ba.deltaReward).toBeNull();
    expect(ba.note).toBeNull();
    expect(beforeAfter({ ...loop, after: null }).note).toMatch(/when the loop finishes/);
    expect(beforeAfter({ ...loop, before: null, after: null }).note).toMatch(/no held-out/);
    expect(beforeAfter(undefined)).toMatchObject({ before: null, after: null, deltaScore: null, note: 'no train loop yet' });
    expect(signed(0.6)).toBe('+0.60');
    expect(signed(-0.25)).toBe('−0.25');
  });
});

describe('co-evolution of the roles of one train loop', () => {
  const at = (id: string, role: string, loopId: string, iteration: number, createdAt: number): WeightVersionView => ({ ...v(id, role, undefined, iteration), hyper: { loopId }, createdAt });
  it('puts every role of the newest loop on one axis, with gaps where a role has no point', () => {
    const designer: LoopCurve = { ...loop, loopId: 'tl-2', points: [point(1, 0.1, null), point(2, 0.4, null), point(3, 0.8, null)] };
    const executor: LoopCurve = { ...loop, loopId: 'tl-2', points: [point(1, 0.3, null), point(3, 0.9, null)] };
    const curves = { roles: [{ role: 'executor', loops: [loop, executor] }, { role: 'designer', loops: [designer] }] };
    const versions = [at('o', 'executor', 'tl-1', 1, 1), at('d3', 'designer', 'tl-2', 3, 9), at('e3', 'executor', 'tl-2', 3, 9)];
    expect(coevolution(curves, versions)).toEqual({
      loopId: 'tl-2',
      labels: ['1', '2', '3'],
      roles: [
        { role: 'designer', reward: [0.1, 0.4, 0.8] },
        { role: 'executor', reward: [0.3, null, 0.9] },
      ],
    });
    // An older loop written last wins: the newest version decides.
    expect(coevolution(curves, [...versions, at('late', 'executor', 'tl-1', 2, 10)])!.roles.map((r) => r.role)).toEqual(['executor']);
    expect(coevolution(curves, [])).toBeNull();
    expect(coevolution(undefined, versions)).toBeNull();
  });
});
