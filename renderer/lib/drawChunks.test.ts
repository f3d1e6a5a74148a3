/** chunksOf: how a large graph is added to cytoscape frame by frame (renderer/views/GraphCanvas.tsx). */
import type { ElementDefinition } from 'cytoscape';
import { describe, expect, it } from 'vitest';
import { chunksOf } from './elements.ts';

const node = (id: string): ElementDefinition => ({ group: 'nodes', data: { id } });
const edge = (id: string, source: string, target: string): ElementDefinition => ({ group: 'edges', data: { id, source, target } });

describe('chunksOf', () => {
  it('puts every node before any edge, keeps each group in order, and cuts at the size', () => {
    const els = [node('a'), edge('a-b', 'a', 'b'), node('b'), node('c'), { data: { id: 'b-c', source: 'b', target: 'c' } }];
    const chunks = chunksOf(els, 2);
    expect(chunks.map((c) => c.map((e) => e.data.id))).toEqual([['a', 'b'], ['c', 'a-b'], ['b-c']]);
  });

  it('2,000 nodes and 1,999 edges in chunks of 400: 10 chunks, no edge before both its ends', () => {
    const els: ElementDefinition[] = [];
    for (let i = 0; i < 2000; i++) {
      els.push(node(`n${i}`));
      if (i > 0) els.push(edge(`e${i}`, `n${i - 1}`, `n${i}`));
    }
    const chunks = chunksOf(els, 400);
    expect(chunks).toHaveLength(Math.ceil(3999 / 400));
    expect(chunks.every((c) => c.length <= 400)).toBe(true);
    const seen = new Set<string>();
    for (const e of chunks.flat()) {
      if (e.data.source !== undefined) expect(seen.has(e.data.source) && seen.has(e.data.target!)).toBe(true);
      else seen.add(e.data.id!);
    }
    expect(seen.size).toBe(2000);
  });

  it('an empty graph is one empty chunk (one frame is still drawn)', () => {
    expect(chunksOf([], 400)).toEqual([[]]);
  });
});
