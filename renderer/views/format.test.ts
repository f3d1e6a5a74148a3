import { describe, expect, it } from 'vitest';
import type { NodeStatus } from '../../core/trace/index.ts';
import { bytes, eventError, eventTokens, experimentStatusLabel, failureClassLabel, nodeStatusLabel, paramCount, percent, showValue } from './format.ts';

describe('view formatting', () => {
  it('labels every node status with a distinct symbol and word, not colour alone', () => {
    const all: NodeStatus[] = ['ok', 'failed', 'cascade', 'skipped'];
    const labels = all.map(nodeStatusLabel);
    expect(labels.map((l) => l.text)).toEqual(all);
    expect(new Set(labels.map((l) => l.symbol)).size).toBe(all.length);
    expect(experimentStatusLabel('interrupted')).toMatchObject({ symbol: '⚠', text: 'interrupted' });
  });

  it('formats rates, tokens and errors', () => {
    expect([percent(0.5), percent(null), percent(1)]).toEqual(['50.0%', '–', '100.0%']);
    const calls = [{ promptTokens: 10, completionTokens: 3 }, { promptTokens: 5, completionTokens: 2 }];
    expect(eventTokens({ calls } as never)).toEqual({ prompt: 15, completion: 5 });
    expect(eventError({ errorCode: 'TIMEOUT', message: 'took 60 s' })).toBe('TIMEOUT: took 60 s');
    expect(eventError({})).toBe('');
    expect(failureClassLabel('wiring')).toBe('wiring (graph)');
    expect(failureClassLabel(undefined)).toBe('');
  });

  it('formats sizes, parameter counts and values', () => {
    expect([bytes(512), bytes(3.5 * 1024 * 1024), bytes(-1)]).toEqual(['512 B', '3.5 MiB', '–']);
    expect([paramCount(260_000), paramCount(1_540_000_000), paramCount(7e9), paramCount(undefined)]).toEqual(['260K', '1.5B', '7B', '–']);
    expect(showValue({ a: 1 })).toBe('{\n  "a": 1\n}');
    expect(showValue('x'.repeat(30), 10)).toBe('xxxxxxxxxx\n… (20 more characters)');
  });
});
