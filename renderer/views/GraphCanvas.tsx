/**
 * One cytoscape graph. Elements arrive with positions (layered layout, `preset`), so nothing is
 * laid out here. Live node states are applied imperatively in one cy.batch per change, without
 * rebuilding the elements. The container reports, for tests and the benchmark, how many nodes it
 * drew and how long the draw took (`data-draw-ms`, from adding the elements to the first frame).
 */
import cytoscape, { type CollectionReturnValue, type Core, type ElementDefinition, type EventObject } from 'cytoscape';
import { memo, useEffect, useRef, useState } from 'react';
import { ALL_LIVE_CLASSES, drawOrder, FIRST_CHUNK, liveNodeLook, nextChunkSize, viewportToFit } from '../lib/elements.ts';
import { graphStyle, LABEL_ZOOM, LARGE_GRAPH, READABLE_ZOOM, restyle, type Theme } from '../lib/graphStyle.ts';
import type { LiveNode } from '../lib/liveRun.ts';

export interface GraphCanvasProps {
  elements: ElementDefinition[];
  theme: Theme;
  /** Accessible name of the graph region. */
  label: string;
  /** The selected node or edge id. */
  selected?: string | null;
  onSelectNode?(id: string | null): void;
  onSelectEdge?(id: string): void;
  /** Shift+click on a node while another is selected (the editor adds an edge). */
  onConnect?(from: string, to: string): void;
  /** Live states by node id (Run view). */
  live?: Record<string, LiveNode>;
  /** Milliseconds spent preparing the elements (model + layout), added to `data-total-ms`. */
  prepMs?: number;
  testId?: string;
}

export const GraphCanvas = memo(function GraphCanvas(props: GraphCanvasProps) {
  const { elements, theme, label, selected, live, prepMs = 0, testId = 'graph' } = props;
  const container = useRef<HTMLDivElement>(null);
  const cyRef = useRef<Core | null>(null);
  const callbacks = useRef(props);
  callbacks.current = props;
  const applied = useRef(new Map<string, string>());
  const large = elements.length > LARGE_GRAPH;
  const themeRef = useRef(theme);
  themeRef.current = theme;
  /** The theme of the stylesheet in use. */
  const styledTheme = useRef(theme);
  const labelsShown = useRef(!large);

  // Create once per mount (and per size class: big graphs use cheaper renderer settings).
  useEffect(() => {
    const el = container.current;
    if (!el) return;
    styledTheme.current = themeRef.current;
    const cy = cytoscape({
      container: el,
      elements: [],
      layout: { name: 'preset' },
      style: graphStyle(themeRef.current, large),
      minZoom: 0.02,
      maxZoom: 3,
      // The wheel zooms the graph (and not the page), a drag on the background pans it. The wheel
      // keeps cytoscape's default sensitivity: any other value logs a warning on every graph page.
      userZoomingEnabled: true,
      userPanningEnabled: true,
      boxSelectionEnabled: false,
      selectionType: 'single',
      autoungrabify: large,
      textureOnViewport: large,
      hideEdgesOnViewport: large,
      pixelRatio: large ? 1 : 'auto',
    });
    cy.on('tap', (evt: EventObject) => {
      const target = evt.target as { isNode?: () => boolean; isEdge?: () => boolean; id?: () => string };
      const cb = callbacks.current;
      if (target === cy) {
        cb.onSelectNode?.(null);
        return;
      }
      const id = target.id?.() ?? '';
      if (target.isNode?.()) {
        const shift = (evt.originalEvent as MouseEvent | undefined)?.shiftKey;
        if (shift && cb.selected && cb.selected !== id && cb.onConnect) cb.onConnect(cb.selected, id);
        else cb.onSelectNode?.(id);
      } else if (target.isEdge?.()) {
        cb.onSelectEdge?.(id);
      }
    });
    // Large graphs: labels only when zoomed in enough to read them.
    labelsShown.current = !large;
    if (large) {
      cy.on('zoom', () => {
        const want = cy.zoom() >= LABEL_ZOOM;
        if (want === labelsShown.current) return;
        labelsShown.current = want;
        restyle(cy, themeRef.current, true, want);
      });
    }
    cyRef.current = cy;
    // The viewport, for tests and assistive checks: zoom (labels are 12 px × zoom) and pan.
    let viewportFrame = 0;
    cy.on('viewport', () => {
      cancelAnimationFrame(viewportFrame);
      viewportFrame = requestAnimationFrame(() => {
        el.dataset.zoom = cy.zoom().toFixed(3);
        el.dataset.pan = `${cy.pan().x.toFixed(0)},${cy.pan().y.toFixed(0)}`;
      });
    });
    // A wheel over the graph never scrolls the page (cytoscape zooms on it; keep the page still even at the zoom limits).
    const stopWheel = (e: WheelEvent) => e.preventDefault();
    el.addEventListener('wheel', stopWheel, { passive: false });
    // Keep the canvas matched to its box (a side panel opening, the window resizing).
    let frame = 0;
    let size = `${el.clientWidth}x${el.clientHeight}`;
    const resize = new ResizeObserver(() => {
      const now = `${el.clientWidth}x${el.clientHeight}`;
      if (now === size) return;
      size = now;
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => {
        cy.resize();
        fitView(cy, callbacks.current.elements, callbacks.current.selected);
      });
    });
    resize.observe(el);
    return () => {
      resize.disconnect();
      el.removeEventListener('wheel', stopWheel);
      cancelAnimationFrame(viewportFrame);
      cancelAnimationFrame(frame);
      cy.destroy();
      cyRef.current = null;
    };
    // The theme is applied by its own effect; re-creating on theme change would lose the view.
  }, [large]);

  // Elements: replace all, fit, and time the first frame. A large graph is added in chunks, one
  // per frame (nodes first, then edges), each sized to take about CHUNK_FRAME_MS: cytoscape's first
  // frame styles and measures every new element, and 2,000 nodes with their edges in one frame
  // blocked the page for 0.4-0.9 s on a loaded 2-core machine. `complete` is set once every
  // element is in, so the selection and live states apply to all.
  const [complete, setComplete] = useState<readonly ElementDefinition[] | null>(null);
  useEffect(() => {
    const cy = cyRef.current;
    const el = container.current;
    if (!cy || !el) return;
    el.dataset.ready = 'false';
    const t0 = performance.now();
    applied.current.clear();
    const ordered = large ? drawOrder(elements) : elements;
    let at = large ? Math.min(FIRST_CHUNK, ordered.length) : ordered.length;
    let size = at;
    let started = t0;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const begin = () => {
      started = performance.now();
      cy.batch(() => {
        cy.elements().remove();
        cy.add(ordered.slice(0, at));
      });
      if (large) restyled(cy.elements());
      fitView(cy, elements, callbacks.current.selected);
      cy.one('render', onFrame);
      // Force a frame even when nothing is visible (an empty graph renders nothing otherwise).
      cy.forceRender();
    };
    const onFrame = () => {
      if (stopped) return;
      if (at < ordered.length) {
        size = nextChunkSize(size, performance.now() - started);
        // The next chunk in a task of its own, after this frame was drawn.
        timer = setTimeout(() => {
          if (stopped) return;
          started = performance.now();
          // Styled here (cytoscape's rendered style: style, label and edge geometry), so the
          // frame that follows only draws: styling a chunk in the frame doubled its length.
          restyled(cy.add(ordered.slice(at, (at += size))));
          cy.one('render', onFrame);
        }, 0);
        return;
      }
      const draw = performance.now() - t0;
      el.dataset.drawMs = draw.toFixed(1);
      el.dataset.totalMs = (draw + prepMs).toFixed(1);
      el.dataset.nodes = String(cy.nodes().length);
      el.dataset.ready = 'true';
      setComplete(elements);
    };
    // A large graph's first chunk waits for a task of its own: in the task that rendered the view
    // (the trace's arrival: its model, the list, this component's mount) it made one 0.2-0.3 s
    // block on a loaded 2-core machine.
    if (large) {
      cy.elements().remove();
      timer = setTimeout(() => {
        if (!stopped) begin();
      }, 0);
    } else begin();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [elements, prepMs, large]);

  // Theme changes restyle in place (the stylesheet given at creation already has the current theme).
  useEffect(() => {
    const cy = cyRef.current;
    if (!cy || styledTheme.current === theme) return;
    styledTheme.current = theme;
    restyle(cy, theme, large, labelsShown.current);
  }, [theme, large]);

  // Selection follows the store; a node chosen elsewhere (a list, a shortcut) is brought into view.
  useEffect(() => {
    const cy = cyRef.current;
    if (!cy) return;
    const target = selected ? cy.getElementById(selected) : null;
    cy.batch(() => {
      cy.elements(':selected').unselect();
      target?.select();
    });
    // What cytoscape has selected, for tests and assistive checks (the canvas itself is opaque).
    const el = container.current;
    if (el) el.dataset.selected = cy.$(':selected').map((e) => e.id()).join(' ');
    if (target?.nonempty() && target.isNode()) {
      const p = target.renderedPosition();
      const outside = p.x < 0 || p.y < 0 || p.x > cy.width() || p.y > cy.height();
      if (outside || (large && cy.zoom() < LABEL_ZOOM) || (!large && cy.zoom() < READABLE_ZOOM)) {
        cy.animate({ center: { eles: target }, zoom: Math.max(cy.zoom(), large ? 0.7 : READABLE_ZOOM) }, { duration: 250 });
      }
    }
  }, [selected, complete, large]);

  // Live states: only nodes whose look changed are touched.
  useEffect(() => {
    const cy = cyRef.current;
    if (!cy) return;
    const seen = applied.current;
    if (!live && seen.size === 0) return;
    cy.batch(() => {
      cy.nodes().forEach((n) => {
        const state = live?.[n.id()];
        const key = state ? `${state.state}:${state.attempt}:${state.simulated ? 1 : 0}` : '';
        if ((seen.get(n.id()) ?? '') === key) return;
        seen.set(n.id(), key);
        const look = liveNodeLook(String(n.data('base') ?? n.data('label')), state);
        n.removeClass(ALL_LIVE_CLASSES.join(' '));
        if (look.classes.length) n.addClass(look.classes.join(' '));
        n.data('label', look.label);
      });
    });
  }, [live, complete]);

  return <div ref={container} className="graph" data-testid={testId} role="img" aria-label={label} />;
});

/**
 * Computes the rendered style of `eles` now (cytoscape's collection method
 * `recalculateRenderedStyle`, which its documentation and typings leave out): style, label and
 * edge geometry, else computed lazily in the next frame. A cytoscape without it draws as before.
 */
function restyled(eles: CollectionReturnValue): void {
  (eles as CollectionReturnValue & { recalculateRenderedStyle?(): void }).recalculateRenderedStyle?.();
}

/**
 * Fits the whole graph, without blowing small graphs up past 1.5×. The box comes from the preset
 * positions (viewportToFit), not cy.fit(): measuring 2,000 labels costs hundreds of ms. A graph
 * of labelled size (not a large one) is never fitted below READABLE_ZOOM: when it does not fit
 * at that zoom (a side panel took the room), it is shown at READABLE_ZOOM around the selected
 * node, else its start, and the rest is a drag or a wheel away.
 */
function fitView(cy: Core, elements: readonly ElementDefinition[], selected?: string | null): void {
  const large = elements.length > LARGE_GRAPH;
  const v = viewportToFit(elements, cy.width(), cy.height(), { padding: 24, maxZoom: 1.5, minZoom: large ? cy.minZoom() : READABLE_ZOOM });
  if (!v) return;
  cy.viewport(v);
  if (large || v.zoom > READABLE_ZOOM + 1e-9) return;
  const target = selected ? cy.getElementById(selected) : null;
  if (target?.nonempty() && target.isNode()) {
    cy.center(target);
    return;
  }
  // Nothing selected: the graph's left edge (where it starts) at the left of the canvas.
  const box = readableStart(elements);
  if (box) cy.pan({ x: 24 + (box.halfW - box.minX) * v.zoom, y: v.pan.y });
}

/** The leftmost node position and the node half width, from the preset positions. */
function readableStart(elements: readonly ElementDefinition[]): { minX: number; halfW: number } | null {
  let minX = Infinity;
  for (const e of elements) if (e.position && e.position.x < minX) minX = e.position.x;
  return minX === Infinity ? null : { minX, halfW: 70 };
}
