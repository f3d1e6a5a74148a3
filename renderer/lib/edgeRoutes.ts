/**
 * Edges that would be drawn through an unrelated node (pure). The layered layout (layout.ts)
 * puts a chain on one row, so an edge that skips a column (solve -> verify past calculate) runs
 * straight through the node between. Such an edge is bent instead: cytoscape's
 * `unbundled-bezier` with one control point at `d` from the midpoint, perpendicular to the
 * edge (cytoscape's findBezierPoints: control point = midpoint + d · (−n_y, n_x), n the unit
 * vector from source to target), which draws the quadratic Bézier B(t) = (1−t)²P0 + 2t(1−t)P1 + t²P2.
 */

/** A node's centre and half extent, in model coordinates. */
export interface RouteNode {
  id: string;
  x: number;
  y: number;
  halfW: number;
  halfH: number;
}

export interface RouteEdge {
  id: string;
  from: string;
  to: string;
}

/** Samples along each curve (excluding the ends, which lie inside the source and target). */
const SAMPLES = 24;
/** Detour distances tried, in model pixels: ±STEP, ±2·STEP, … ±MAX_STEPS·STEP. */
const STEP = 30;
const MAX_STEPS = 12;
/** Clearance kept around every node (model pixels). */
export const ROUTE_MARGIN = 6;

/** The point at `t` of the quadratic Bézier from `a` to `b` whose control point sits `d` off the midpoint. */
export function curvePoint(a: { x: number; y: number }, b: { x: number; y: number }, d: number, t: number): { x: number; y: number } {
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const l = Math.hypot(dx, dy) || 1;
  const cx = (a.x + b.x) / 2 + (-dy / l) * d;
  const cy = (a.y + b.y) / 2 + (dx / l) * d;
  const u = 1 - t;
  return { x: u * u * a.x + 2 * t * u * cx + t * t * b.x, y: u * u * a.y + 2 * t * u * cy + t * t * b.y };
}

/** How many sample points of the edge's curve fall inside a node other than its ends (with `margin`). */
export function curveHits(a: RouteNode, b: RouteNode, d: number, others: readonly RouteNode[], margin = ROUTE_MARGIN): number {
  let hits = 0;
  for (let i = 1; i < SAMPLES; i++) {
    const p = curvePoint(a, b, d, i / SAMPLES);
    for (const n of others) {
      if (n.id === a.id || n.id === b.id) continue;
      if (Math.abs(p.x - n.x) < n.halfW + margin && Math.abs(p.y - n.y) < n.halfH + margin) hits++;
    }
  }
  return hits;
}

/**
 * Per edge drawn through an unrelated node: the control-point distance that clears every node
 * (the smallest found, bending away from the nodes in the way first), or the one hitting fewest
 * when none clears. Edges whose straight line is clear are left out. Cost O(E_blocked · 24 · 24 · V)
 * at most; callers skip it for very large graphs.
 */
export function edgeDetours(nodes: readonly RouteNode[], edges: readonly RouteEdge[]): Map<string, number> {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const out = new Map<string, number>();
  for (const e of edges) {
    const a = byId.get(e.from);
    const b = byId.get(e.to);
    if (!a || !b || a === b) continue;
    // Only nodes within the edge's bounding box (grown by the widest detour) can be in the way.
    const reach = STEP * MAX_STEPS;
    const near = nodes.filter((n) => n !== a && n !== b && n.x + n.halfW > Math.min(a.x, b.x) && n.x - n.halfW < Math.max(a.x, b.x) && n.y + n.halfH > Math.min(a.y, b.y) - reach && n.y - n.halfH < Math.max(a.y, b.y) + reach);
    if (!near.length || curveHits(a, b, 0, near) === 0) continue;
    // Bend away from the blocking nodes: the side opposite their mean offset from the line.
    const dx = b.x - a.x;
    const dy = b.y - a.y;
    const l = Math.hypot(dx, dy) || 1;
    const blocking = near.filter((n) => curveHits(a, b, 0, [n]) > 0);
    const side = blocking.reduce((s, n) => s + ((n.x - a.x) * (-dy / l) + (n.y - a.y) * (dx / l)), 0);
    const first = side > 0 ? -1 : 1;
    let best = { d: 0, hits: Infinity };
    for (let k = 1; k <= MAX_STEPS && best.hits > 0; k++) {
      for (const sign of [first, -first]) {
        const d = sign * k * STEP;
        const hits = curveHits(a, b, d, near);
        if (hits < best.hits) best = { d, hits };
        if (hits === 0) break;
      }
    }
    out.set(e.id, best.d);
  }
  return out;
}
