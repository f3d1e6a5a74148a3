/** Keys to the graphs: node kinds (colour and shape), edge types (line style), states (marker and border), and authors in a designed run (label, shape and ring). */
import { LIVE_MARKER } from '../lib/elements.ts';
import { liveStateColor, traceStateColor, type Theme } from '../lib/graphStyle.ts';
import { STATE_MARKER, STATE_TEXT, type TraceState } from '../lib/traceModel.ts';

export function KindLegend({ editor = false }: { editor?: boolean }) {
  return (
    <ul className="legend" aria-label="Graph key">
      <li><span className="swatch kind-agent shape-agent" aria-hidden="true" /> agent (rounded box)</li>
      <li><span className="swatch kind-tool shape-tool" aria-hidden="true" /> tool (hexagon)</li>
      <li><span className="swatch kind-skill shape-skill" aria-hidden="true" /> skill (ellipse)</li>
      <li><span className="line line-data" aria-hidden="true" /> data</li>
      <li><span className="line line-control" aria-hidden="true" /> control (dashed)</li>
      <li><span className="line line-loop" aria-hidden="true" /> ↺ loop, max iterations</li>
      {editor && <li><span className="swatch issue" aria-hidden="true">⚠</span> has a validation issue</li>}
    </ul>
  );
}

const TRACE_BORDER: Record<TraceState, string> = { ok: 'thin solid', root: 'thick double', cascade: 'dashed', skipped: 'dotted, faded', silent: 'thick solid' };

/** The trace states' key; each swatch's border colour is the graph's own (graphStyle.ts traceStateColor). */
export function StateLegend({ theme }: { theme: Theme }) {
  return (
    <ul className="legend" aria-label="Node states">
      {(Object.keys(STATE_MARKER) as TraceState[]).map((s) => (
        <li key={s}>
          <span className={`swatch state st-${s}`} style={{ borderColor: traceStateColor(theme, s) }} aria-hidden="true" data-testid={`legend-state-${s}`}>{STATE_MARKER[s]}</span> {STATE_TEXT[s]} <span className="muted">({TRACE_BORDER[s]} border)</span>
        </li>
      ))}
      <li><span className="tag sim">SIMULATED</span> injected fault</li>
    </ul>
  );
}

/** The live states' key, coloured like the graph (graphStyle.ts liveStateColor). */
export function LiveLegend({ theme }: { theme: Theme }) {
  return (
    <ul className="legend" aria-label="Live node states">
      {(Object.keys(LIVE_MARKER) as Array<keyof typeof LIVE_MARKER>).map((s) => (
        <li key={s}>
          <span className={`swatch live live-${s}`} style={{ borderColor: liveStateColor(theme, s) }} aria-hidden="true">{LIVE_MARKER[s]}</span> {s}
        </li>
      ))}
    </ul>
  );
}

/** Authors in a designed run: each told by a label line, and by shape or an outer ring (the border stays the state's). */
export function AuthorLegend({ designer }: { designer: string }) {
  return (
    <ul className="legend" aria-label="Authors" data-testid="author-legend">
      <li><span className="swatch author design-node" aria-hidden="true">✎</span> design node: {designer} writes the design (cut-corner box, double ring)</li>
      <li><span className="swatch author wired-designer" aria-hidden="true">✎</span> ✎ wired by {designer} (dashed outer ring)</li>
      <li><span className="swatch author wired-human" aria-hidden="true" /> wired by hand (no ring)</li>
      <li><span className="swatch author" aria-hidden="true">▶</span> ▶ run by the role that ran it</li>
    </ul>
  );
}
