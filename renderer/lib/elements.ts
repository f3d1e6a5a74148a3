/**
 * Cytoscape element definitions (plain data) for the editor, live-run and trace graphs, with
 * positions from the layered layout so cytoscape's `preset` layout only places them.
 */
import type { ElementDefinition } from 'cytoscape';
import { edgeDetours, type RouteNode } from './edgeRoutes.ts';
import { layeredLayout } from './layout.ts';
import type { LiveNode, LiveNodeState } from './liveRun.ts';
import { authorBadges, blameText, STATE_MARKER, type TraceModel } from './traceModel.ts';
import type { DocGraph } from './workflowGraph.ts';

export const LIVE_MARKER: Record<LiveNodeState, string> = { running: '●', ok: '✓', failed: '✗', cascade: '↓', skipped: '–' };

const LIVE_CLASSES = ['live-running', 'live-ok', 'live-failed', 'live-cascade', 'live-skipped'] as const;

/** Label of a workflow node: `id` over its role (or its tool). */
export function nodeLabel(n: { id: string; role?: string; tool?: string; skill?: string; kind: string }): string {
  const second = n.role ?? (n.tool ? `tool ${n.tool}` : n.skill ? `skill ${n.skill}` : `(${n.kind}, no role)`);
  return `${n.id}\n${second}`;
}

/** The editor's (and Run view's) graph, with error markers on nodes and edges that have issues. */
export function workflowElements(graph: DocGraph, issues?: { nodes: Set<string>; edges: Set<string> }): ElementDefinition[] {
  const layout = layeredLayout(
    graph.nodes.map((n) => n.id),
    graph.edges.map((e) => ({ from: e.from, to: e.to, loop: e.maxIterations !== undefined })),
  );
  const out: ElementDefinition[] = [];
  for (const n of graph.nodes) {
    const bad = issues?.nodes.has(n.id);
    out.push({
      group: 'nodes',
      data: { id: n.id, label: `${bad ? '⚠ ' : ''}${nodeLabel(n)}`, base: nodeLabel(n), kind: n.kind },
      classes: `kind-${n.kind}${bad ? ' has-issue' : ''}`,
      position: { ...(layout.positions.get(n.id) ?? { x: 0, y: 0 }) },
    });
  }
  const detours = detoursOf(out, graph.edges);
  for (const e of graph.edges) {
    const d = detours.get(e.id);
    out.push({
      group: 'edges',
      data: { id: e.id, source: e.from, target: e.to, label: e.maxIterations !== undefined ? `↺ max ${e.maxIterations}` : '', ...(d !== undefined ? { cpd: d } : {}) },
      classes: `type-${e.type}${e.maxIterations !== undefined ? ' loop' : ''}${issues?.edges.has(e.id) ? ' has-issue' : ''}${d !== undefined ? ' detour' : ''}`,
    });
  }
  return out;
}

/** Graphs up to this many nodes get edges bent around unrelated nodes (edgeRoutes.ts); bigger ones are drawn straight, cheaply. */
export const DETOUR_MAX_NODES = 400;

/**
 * The bend of each forward edge that a straight line would draw through another node, from the
 * node elements already built (their positions and drawn sizes: graphStyle.ts's 120×50 box,
 * 128 for a tool, 72 high for a root failure, 170×92 (108) with authors).
 */
function detoursOf(nodes: readonly ElementDefinition[], edges: ReadonlyArray<{ id: string; from: string; to: string; maxIterations?: number }>): Map<string, number> {
  if (nodes.length > DETOUR_MAX_NODES) return new Map();
  const route: RouteNode[] = nodes.map((n) => {
    const cls = String(n.classes ?? '');
    const authored = cls.includes('with-author');
    const root = cls.includes('st-root');
    return {
      id: String(n.data.id),
      x: n.position?.x ?? 0,
      y: n.position?.y ?? 0,
      halfW: authored ? 85 : cls.includes('kind-tool') ? 64 : 60,
      halfH: authored ? (root ? 54 : 46) : root ? 36 : 25,
    };
  });
  return edgeDetours(route, edges.filter((e) => e.maxIterations === undefined));
}

/** The live label and classes of a node in the Run view. */
export function liveNodeLook(base: string, live: LiveNode | undefined): { label: string; classes: string[] } {
  if (!live) return { label: base, classes: [] };
  const sim = live.simulated ? '\nSIMULATED' : '';
  return { label: `${LIVE_MARKER[live.state]} ${base}${sim}`, classes: [`live-${live.state}`, ...(live.simulated ? ['simulated'] : [])] };
}

/** Every class liveNodeLook may add (removed before applying new ones). */
export const ALL_LIVE_CLASSES: readonly string[] = [...LIVE_CLASSES, 'simulated'];

/**
 * The trace graph of one run. In a designed run every node also carries its author marks in its
 * label (authorBadges) and a class: `design-node` (the designer's design node, its own shape),
 * `wired-designer` (drawn and wired by the designer: an outer dashed ring) or `wired-human`;
 * such nodes are taller, so their rows are spaced wider.
 */
export function traceElements(model: TraceModel): ElementDefinition[] {
  const designed = !!model.design;
  const layout = layeredLayout(
    model.nodes.map((n) => n.id),
    model.edges.map((e) => ({ from: e.from, to: e.to, loop: e.maxIterations !== undefined })),
    designed ? { dx: 200, dy: 125 } : {},
  );
  const out: ElementDefinition[] = [];
  for (const n of model.nodes) {
    const badges = authorBadges(n, model.design);
    const what = n.tool ? `tool ${n.tool}` : n.skill ? `skill ${n.skill}` : n.kind;
    const lines = [`${STATE_MARKER[n.state]} ${n.id}`, designed ? what : (n.role ?? n.kind), ...badges.map((b) => b.text)];
    const blame = blameText(n);
    if (blame) lines.push(`⚑ ${blame}`);
    if (n.simulated) lines.push(`SIMULATED${n.fault ? ` ${n.fault}` : ''}`);
    const author = badges[0]?.kind === 'design' ? ' design-node' : badges[0]?.kind === 'wired' ? ' wired-designer' : badges[0]?.kind === 'human' ? ' wired-human' : '';
    out.push({
      group: 'nodes',
      data: { id: n.id, label: lines.join('\n'), ...(designed ? AUTHORED_HALF : {}) },
      classes: `kind-${n.kind} st-${n.state}${n.simulated ? ' simulated' : ''}${designed ? ' with-author' : ''}${author}`,
      position: { ...(layout.positions.get(n.id) ?? { x: 0, y: 0 }) },
    });
  }
  const detours = detoursOf(out, model.edges);
  for (const e of model.edges) {
    const d = detours.get(e.id);
    out.push({
      group: 'edges',
      data: { id: e.id, source: e.from, target: e.to, label: e.maxIterations !== undefined ? `↺ max ${e.maxIterations}` : '', ...(d !== undefined ? { cpd: d } : {}) },
      classes: `type-${e.type}${e.maxIterations !== undefined ? ' loop' : ''}${d !== undefined ? ' detour' : ''}`,
    });
  }
  return out;
}

/** Half the drawn size of a node, generous enough for the widest shape and thickest border. */
const HALF_W = 70;
const HALF_H = 38;
/** Half the size of a designed run's node (graphStyle: `with-author`, 170×108 at most, with its outer ring): in its data, read by viewportToFit. */
const AUTHORED_HALF = { halfW: 95, halfH: 62 } as const;

/**
 * The zoom and pan that fit every positioned node into a `width`×`height` canvas, computed from
 * the preset positions in O(n) (no label measuring); a node may give its own half size
 * (`data.halfW`, `data.halfH`) when drawn larger than the default. Null when nothing is positioned.
 */
export function viewportToFit(
  elements: readonly ElementDefinition[],
  width: number,
  height: number,
  opts: { padding?: number; maxZoom?: number; minZoom?: number } = {},
): { zoom: number; pan: { x: number; y: number } } | null {
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  let halfW = HALF_W;
  let halfH = HALF_H;
  for (const e of elements) {
    const p = e.position;
    if (!p) continue;
    const d = e.data as { halfW?: number; halfH?: number };
    if (d.halfW !== undefined && d.halfW > halfW) halfW = d.halfW;
    if (d.halfH !== undefined && d.halfH > halfH) halfH = d.halfH;
    if (p.x < minX) minX = p.x;
    if (p.x > maxX) maxX = p.x;
    if (p.y < minY) minY = p.y;
    if (p.y > maxY) maxY = p.y;
  }
  if (minX === Infinity || width <= 0 || height <= 0) return null;
  const pad = opts.padding ?? 24;
  const bw = maxX - minX + 2 * halfW;
  const bh = maxY - minY + 2 * halfH;
  let zoom = Math.min((width - 2 * pad) / bw, (height - 2 * pad) / bh);
  zoom = Math.max(opts.minZoom ?? 0, Math.min(opts.maxZoom ?? Infinity, zoom));
  const cx = (minX + maxX) / 2;
  const cy = (minY + maxY) / 2;
  return { zoom, pan: { x: width / 2 - zoom * cx, y: height / 2 - zoom * cy } };
}

/**
 * Elements of a large graph added in its first frame; later frames size their chunk by
 * {@link nextChunkSize} (at most doubling each frame). The first frame also pays cytoscape's
 * one-time costs (the stylesheet's first use, the canvases), so it starts small.
 */
export const FIRST_CHUNK = 150;

/** What one frame of a growing large graph may take (ms): the long-task line is 50 ms, the budget 200 ms. */
export const CHUNK_FRAME_MS = 100;

/**
 * `elements` with every node before any edge (an edge needs both ends in the graph when it is
 * added); order within nodes and within edges is kept.
 */
export function drawOrder(elements: readonly ElementDefinition[]): ElementDefinition[] {
  const isEdge = (e: ElementDefinition) => e.group === 'edges' || e.data.source !== undefined;
  return [...elements.filter((e) => !isEdge(e)), ...elements.filter(isEdge)];
}

/**
 * The next chunk's size from the last one's: `size` elements took `spentMs` (adding them and
 * drawing the frame), so scale to `targetMs`, at most doubling, at most MAX_CHUNK and at least 100 elements. A fast
 * machine ends in a few frames, a loaded one in more, shorter ones.
 */
export function nextChunkSize(size: number, spentMs: number, targetMs = CHUNK_FRAME_MS): number {
  const scaled = Math.round((size * targetMs) / Math.max(spentMs, 1));
  return Math.max(100, Math.min(2 * size, MAX_CHUNK, scaled));
}

/**
 * The most elements one chunk adds: a frame also draws every element already in and makes a
 * texture for each new one, so a chunk sized in a quiet moment (doubling) made frames of 150-200 ms
 * of CPU.
 */
export const MAX_CHUNK = 500;
