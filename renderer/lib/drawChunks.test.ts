/** How a large graph is added to cytoscape frame by frame (renderer/views/GraphCanvas.tsx): drawOrder and nextChunkSize. */
import type { ElementDefinition } from 'cytoscape';
import { describe, expect, it } from 'vitest';
import { drawOrder, MAX_CHUNK, nextChunkSize } from './elements.ts';

const node = (id: string): ElementDefinition => ({ group: 'nodes', data: { id } });
const edge = (id: string, source: string, target: string): ElementDefinition => ({ group: 'edges', data: { id, source, target } });

describe('drawOrder', () => {
  it('puts every node before any edge and keeps each group in order (an edge without `group` counts by its source)', () => {
    const els = [node('a'), edge('a-b', 'a', 'b'), node('b'), node('c'), { data: { id: 'b-c', source: 'b', target: 'c' } }];
    expect(drawOrder(els).map((e) => e.data.id)).toEqual(['a', 'b', 'c', 'a-b', 'b-c']);
  });

  it('any prefix of 2,000 nodes and 1,999 edges has both ends of each of its edges', () => {
    const els: ElementDefinition[] = [];
    for (let i = 0; i < 2000; i++) {
      els.push(node(`n${i}`));
      if (i > 0) els.push(edge(`e${i}`, `n${i - 1}`, `n${i}`));
    }
    const ordered = drawOrder(els);
    expect(ordered).toHaveLength(3999);
    const seen = new Set<string>();
    for (const e of ordered) {
      if (e.data.source !== undefined) expect(seen.has(e.data.source) && seen.has(e.data.target!)).toBe(true);
      else seen.add(e.data.id!);
    }
  });
});

describe('nextChunkSize', () => {
  it('scales the chunk to the frame budget: 300 in 150 ms -> 200 at 100 ms', () => {
    expect(nextChunkSize(300, 150, 100)).toBe(200);
  });
  it('at most doubles (200 in 10 ms -> 400) and never drops under 100 (300 in 900 ms -> 100)', () => {
    expect(nextChunkSize(200, 10, 100)).toBe(400);
    expect(nextChunkSize(300, 900, 100)).toBe(100);
  });
  it('never passes MAX_CHUNK (500): 300 in 10 ms -> 500, 400 in 50 ms -> 500, not 600 or 800', () => {
    expect(MAX_CHUNK).toBe(500);
    expect(nextChunkSize(300, 10, 100)).toBe(500);
    expect(nextChunkSize(400, 50, 100)).toBe(500);
  });
  it('a frame that took no time counts as 1 ms', () => {
    expect(nextChunkSize(150, 0, 100)).toBe(300);
  });
});
