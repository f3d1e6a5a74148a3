import { describe, expect, it } from 'vitest';
import { traceHash, traceRoute } from './traceRoute.ts';

describe('a link to one run\'s trace (the workshop reveal could not open the runs\' traces)', () => {
  it('encodes the run id\'s slash and reads back the experiment and the run', () => {
    expect(traceHash('exp-20261204-1', 'exp-20261204-1/3')).toBe('#/trace/exp-20261204-1/exp-20261204-1%2F3');
    expect(traceRoute('#/trace/exp-20261204-1/exp-20261204-1%2F3')).toEqual({ experimentId: 'exp-20261204-1', runId: 'exp-20261204-1/3' });
    expect(traceRoute(traceHash('a b/c', 'a b/c/0'))).toEqual({ experimentId: 'a b/c', runId: 'a b/c/0' });
  });

  it('is null for other hashes and malformed ones', () => {
    for (const h of ['', '#/workshop', '#/workshop/presenter', '#/trace/', '#/trace/exp', '#/trace/exp/', '#/trace/a/b/c', '#/trace/%E0%A4%A/x']) expect(traceRoute(h)).toBeNull();
  });
});
