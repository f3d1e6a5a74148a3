/**
 * A layered left-to-right layout in O(V + E) (plus a sort per layer), for cytoscape's `preset`
 * layout: force-directed layouts are far too slow for a 2,000-node trace. Steps:
 *  1. drop loop edges (`loop: true`) and any other back edge found by an iterative DFS, so the
 *     rest is acyclic;
 *  2. longest-path layering: a node's column is one more than its deepest predecessor's;
 *  3. within a column, order by the mean row of the predecessors (one barycentre sweep), ties
 *     by input order;
 *  4. columns `dx` apart, rows `dy` apart, each column centred on y = 0.
 */

export interface LayoutEdge {
  from: string;
  to: string;
  /** A bounded-loop back edge: never used for layering. */
  loop?: boolean;
}

export interface LayoutOptions {
  /** Distance between columns (default 165). */
  dx?: number;
  /** Distance between rows (default 80). */
  dy?: number;
}

export interface Layout {
  positions: Map<string, { x: number; y: number }>;
  /** Column of each node (0-based). */
  layer: Map<string, number>;
  /** Number of columns. */
  layers: number;
}

/** Lays out `ids` left to right by dependency. Edges naming unknown ids are ignored. */
export function layeredLayout(ids: readonly string[], edges: readonly LayoutEdge[], options: LayoutOptions = {}): Layout {
  const dx = options.dx ?? 165;
  const dy = options.dy ?? 80;
  const n = ids.length;
  const index = new Map<string, number>();
  ids.forEach((id, i) => index.set(id, i));

  // Adjacency in CSR form (forward edges only).
  const froms: number[] = [];
  const tos: number[] = [];
  for (const e of edges) {
    if (e.loop) continue;
    const a = index.get(e.from);
    const b = index.get(e.to);
    if (a === undefined || b === undefined || a === b) continue;
    froms.push(a);
    tos.push(b);
  }
  const outStart = new Int32Array(n + 1);
  for (const a of froms) outStart[a + 1]!++;
  for (let i = 0; i < n; i++) outStart[i + 1]! += outStart[i]!;
  const outAdj = new Int32Array(froms.length);
  const outEdge = new Int32Array(froms.length);
  const fill = outStart.slice(0, n);
  froms.forEach((a, k) => {
    const slot = fill[a]!++;
    outAdj[slot] = tos[k]!;
    outEdge[slot] = k;
  });

  // 1. Back edges by iterative DFS (0 white, 1 on stack, 2 done).
  const back = new Uint8Array(froms.length);
  const color = new Uint8Array(n);
  const cursor = new Int32Array(n);
  const stack = new Int32Array(n);
  for (let s = 0; s < n; s++) {
    if (color[s]) continue;
    let top = 0;
    stack[0] = s;
    color[s] = 1;
    cursor[s] = outStart[s]!;
    while (top >= 0) {
      const v = stack[top]!;
      if (cursor[v]! < outStart[v + 1]!) {
        const slot = cursor[v]!++;
        const w = outAdj[slot]!;
        if (color[w] === 1) back[outEdge[slot]!] = 1;
        else if (color[w] === 0) {
          color[w] = 1;
          cursor[w] = outStart[w]!;
          stack[++top] = w;
        }
      } else {
        color[v] = 2;
        top--;
      }
    }
  }

  // 2. Longest-path layering over the acyclic rest (Kahn's order).
  const indeg = new Int32Array(n);
  for (let k = 0; k < froms.length; k++) if (!back[k]) indeg[tos[k]!]!++;
  const layerOf = new Int32Array(n);
  const order: number[] = [];
  for (let i = 0; i < n; i++) if (indeg[i] === 0) order.push(i);
  for (let head = 0; head < order.length; head++) {
    const v = order[head]!;
    for (let slot = outStart[v]!; slot < outStart[v + 1]!; slot++) {
      if (back[outEdge[slot]!]) continue;
      const w = outAdj[slot]!;
      if (layerOf[v]! + 1 > layerOf[w]!) layerOf[w] = layerOf[v]! + 1;
      if (--indeg[w]! === 0) order.push(w);
    }
  }

  // 3. Rows: columns filled in topological order, then one barycentre sweep.
  let layers = 0;
  for (let i = 0; i < n; i++) layers = Math.max(layers, layerOf[i]! + 1);
  const columns: number[][] = Array.from({ length: layers }, () => []);
  for (const v of order) columns[layerOf[v]!]!.push(v);
  const row = new Float64Array(n);
  for (const col of columns) col.forEach((v, r) => (row[v] = r));
  const predSum = new Float64Array(n);
  const predCount = new Int32Array(n);
  for (let c = 0; c < layers; c++) {
    const col = columns[c]!;
    if (c > 0) {
      // Every predecessor sits in a column to the left, already placed.
      const key = (v: number) => (predCount[v] ? predSum[v]! / predCount[v]! : row[v]!);
      col.sort((a, b) => key(a) - key(b) || a - b);
      col.forEach((v, r) => (row[v] = r));
    }
    for (const v of col) {
      for (let slot = outStart[v]!; slot < outStart[v + 1]!; slot++) {
        if (back[outEdge[slot]!]) continue;
        const w = outAdj[slot]!;
        predSum[w]! += row[v]!;
        predCount[w]!++;
      }
    }
  }

  // 4. Coordinates.
  const positions = new Map<string, { x: number; y: number }>();
  const layer = new Map<string, number>();
  for (let c = 0; c < layers; c++) {
    const col = columns[c]!;
    const offset = ((col.length - 1) * dy) / 2;
    col.forEach((v, r) => {
      positions.set(ids[v]!, { x: c * dx, y: r * dy - offset });
      layer.set(ids[v]!, c);
    });
  }
  return { positions, layer, layers };
}
