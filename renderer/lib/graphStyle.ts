/**
 * The cytoscape stylesheet of every graph in the lab (pure data, per theme). Node kinds differ
 * by colour AND shape; edge types by line style; trace and live states by border style, width
 * and a text marker in the label — never by colour alone.
 */
import type { Core, StylesheetJson } from 'cytoscape';
import type { NodeKind } from './workflowGraph.ts';

export type Theme = 'light' | 'dark';

export const KIND_SHAPE: Record<NodeKind, 'round-rectangle' | 'hexagon' | 'ellipse'> = {
  agent: 'round-rectangle',
  tool: 'hexagon',
  skill: 'ellipse',
};

interface Palette {
  text: string;
  edge: string;
  loop: string;
  kind: Record<NodeKind, string>;
  ok: string;
  bad: string;
  warn: string;
  muted: string;
  busy: string;
  silent: string;
  /** The designer's marks (outer ring of the nodes it wired). */
  designer: string;
  select: string;
  labelBg: string;
}

const PALETTE: Record<Theme, Palette> = {
  light: {
    text: '#1d1f23',
    edge: '#7a828c',
    loop: '#1f5fbf',
    kind: { agent: '#dce8fb', tool: '#fbeccd', skill: '#e9dcf7' },
    ok: '#1d7a3a',
    bad: '#b3261e',
    warn: '#a05a00',
    muted: '#7a828c',
    busy: '#1f5fbf',
    silent: '#6b3fa0',
    designer: '#0b6e6e',
    select: '#1f5fbf',
    labelBg: '#ffffff',
  },
  dark: {
    text: '#e4e6ea',
    edge: '#8d96a1',
    loop: '#7fb0ff',
    kind: { agent: '#22344f', tool: '#3d3220', skill: '#33264a' },
    ok: '#6fd08c',
    bad: '#ff8a80',
    warn: '#f2c26b',
    muted: '#8d96a1',
    busy: '#7fb0ff',
    silent: '#c9a4ff',
    designer: '#5fd4cf',
    select: '#7fb0ff',
    labelBg: '#16181c',
  },
};

/** Trace node states (lib/traceModel.ts TraceState) and live node states (lib/liveRun.ts LiveNodeState). */
type TraceStateKey = 'ok' | 'root' | 'cascade' | 'skipped' | 'silent';
type LiveStateKey = 'running' | 'ok' | 'failed' | 'cascade' | 'skipped';

/**
 * The border colour of a trace node in `state`: the one value both the graph's stylesheet and
 * the legend's swatches use, so the key always matches the drawing.
 */
export function traceStateColor(theme: Theme, state: TraceStateKey): string {
  const p = PALETTE[theme];
  return { ok: p.ok, root: p.bad, cascade: p.warn, skipped: p.muted, silent: p.silent }[state];
}

/** The border colour of a live node in `state` (graph and legend alike). */
export function liveStateColor(theme: Theme, state: LiveStateKey): string {
  const p = PALETTE[theme];
  return { running: p.busy, ok: p.ok, failed: p.bad, cascade: p.warn, skipped: p.muted }[state];
}

/**
 * The stylesheet for `theme`. `large`: a big graph, drawn cheaply: haystack edges (no arrows;
 * the layout runs left to right), and labels only once zoomed in far enough to read them
 * (`labels`; see LABEL_ZOOM), since measuring thousands of wrapped labels dominates the first frame.
 */
export function graphStyle(theme: Theme, large = false, labels = !large): StylesheetJson {
  const p = PALETTE[theme];
  // Without labels, the text properties are left out entirely: fewer properties to apply per element.
  const nodeText = labels
    ? { label: 'data(label)', 'text-wrap': 'wrap', 'text-max-width': '112px', 'text-valign': 'center', 'text-halign': 'center', 'font-size': 12, color: p.text, 'min-zoomed-font-size': large ? 7 : 0 }
    : {};
  const edgeText = labels
    ? { 'font-size': 10, color: p.text, 'text-background-color': p.labelBg, 'text-background-opacity': 0.85, 'text-background-padding': '2px', 'min-zoomed-font-size': large ? 7 : 0 }
    : {};
  return [
    {
      selector: 'node',
      style: { ...nodeText, width: 120, height: 50, 'border-width': 1, 'border-color': p.edge, 'border-style': 'solid' },
    },
    ...(['agent', 'tool', 'skill'] as const).map((k) => ({
      selector: `node.kind-${k}`,
      style: { shape: KIND_SHAPE[k], 'background-color': p.kind[k] },
    })),
    { selector: 'node.kind-tool', style: { width: 128 } },
    // Editor: validation problems.
    { selector: 'node.has-issue', style: { 'border-color': p.bad, 'border-width': 4, 'border-style': 'double' } },
    // Trace states: border style + width + label marker (see traceModel.ts STATE_MARKER).
    { selector: 'node.st-ok', style: { 'border-color': traceStateColor(theme, 'ok'), 'border-width': 2, 'border-style': 'solid' } },
    { selector: 'node.st-root', style: { 'border-color': traceStateColor(theme, 'root'), 'border-width': 7, 'border-style': 'double', height: 72, ...(labels ? { 'font-weight': 'bold' } : {}) } },
    { selector: 'node.st-cascade', style: { 'border-color': traceStateColor(theme, 'cascade'), 'border-width': 3, 'border-style': 'dashed' } },
    { selector: 'node.st-skipped', style: { 'border-color': traceStateColor(theme, 'skipped'), 'border-width': 2, 'border-style': 'dotted', opacity: 0.6 } },
    { selector: 'node.st-silent', style: { 'border-color': traceStateColor(theme, 'silent'), 'border-width': 5, 'border-style': 'solid' } },
    { selector: 'node.simulated', style: { 'underlay-color': p.warn, 'underlay-opacity': 0.25, 'underlay-padding': 6 } },
    // Authors in a designed run: label lines (authorBadges) plus shape and an outer ring; the border stays the state's.
    { selector: 'node.with-author', style: { width: 170, height: 92, ...(labels ? { 'text-max-width': '160px' } : {}) } },
    { selector: 'node.with-author.st-root', style: { height: 108 } },
    { selector: 'node.wired-designer', style: { 'outline-width': 3, 'outline-style': 'dashed', 'outline-color': p.designer, 'outline-offset': 4 } },
    { selector: 'node.design-node', style: { shape: 'cut-rectangle', 'outline-width': 4, 'outline-style': 'double', 'outline-color': p.designer, 'outline-offset': 4 } },
    // Live run states.
    { selector: 'node.live-running', style: { 'border-color': liveStateColor(theme, 'running'), 'border-width': 4, 'border-style': 'solid', 'underlay-color': p.busy, 'underlay-opacity': 0.2, 'underlay-padding': 8 } },
    { selector: 'node.live-ok', style: { 'border-color': liveStateColor(theme, 'ok'), 'border-width': 3, 'border-style': 'solid' } },
    { selector: 'node.live-failed', style: { 'border-color': liveStateColor(theme, 'failed'), 'border-width': 7, 'border-style': 'double' } },
    { selector: 'node.live-cascade', style: { 'border-color': liveStateColor(theme, 'cascade'), 'border-width': 3, 'border-style': 'dashed' } },
    { selector: 'node.live-skipped', style: { 'border-color': liveStateColor(theme, 'skipped'), 'border-width': 2, 'border-style': 'dotted', opacity: 0.6 } },
    { selector: 'node:selected', style: { 'overlay-color': p.select, 'overlay-opacity': 0.18, 'overlay-padding': 6 } },
    {
      selector: 'edge',
      style: {
        ...edgeText,
        width: 1.5,
        'line-color': p.edge,
        'curve-style': large ? 'haystack' : 'bezier',
        ...(large ? {} : { 'target-arrow-color': p.edge, 'target-arrow-shape': 'triangle', 'arrow-scale': 0.9 }),
      },
    },
    // An edge bent around a node it would otherwise cross (lib/edgeRoutes.ts gives the distance).
    ...(large ? [] : [{ selector: 'edge.detour', style: { 'curve-style': 'unbundled-bezier', 'control-point-distances': 'data(cpd)', 'control-point-weights': 0.5 } }]),
    { selector: 'edge.type-control', style: { 'line-style': 'dashed', 'line-dash-pattern': [6, 4] } },
    {
      selector: 'edge.loop',
      style: large
        ? { 'line-color': p.loop, width: 2, ...(labels ? { label: 'data(label)' } : {}) }
        : { 'line-color': p.loop, 'target-arrow-color': p.loop, width: 2, label: 'data(label)', 'curve-style': 'unbundled-bezier', 'control-point-distances': [-70], 'control-point-weights': [0.5] },
    },
    { selector: 'edge.has-issue', style: { 'line-color': p.bad, 'target-arrow-color': p.bad, width: 3 } },
    { selector: 'edge:selected', style: { 'line-color': p.select, 'target-arrow-color': p.select, width: 3 } },
  ] as StylesheetJson;
}

/** Graphs with more elements (nodes + edges) than this use the cheap rendering settings. */
export const LARGE_GRAPH = 600;
/**
 * The smallest zoom a labelled graph is fitted to: node labels are 12 px at zoom 1, so they stay
 * at least 10 px (readable) however narrow a side panel leaves the canvas.
 */
export const READABLE_ZOOM = 10 / 12;
/** In a large graph, labels appear from this zoom on (a 132 px node is then about 60 px wide). */
export const LABEL_ZOOM = 0.45;

/** Replaces a live graph's stylesheet (theme change, labels toggled by zoom). */
export function restyle(cy: Core, theme: Theme, large: boolean, labels: boolean): void {
  cy.style(graphStyle(theme, large, labels));
}
