/**
 * Scrolling arithmetic of a windowed (virtualised) list of fixed-height rows under a sticky
 * header; which rows to render is `visibleRows` (runsTable.ts). Pure, for the Trace view's node
 * list (TraceView.tsx).
 */

/**
 * The scroll position (px) that shows row `index` whole, moving as little as possible ("nearest",
 * as `scrollIntoView({ block: 'nearest' })` does): unchanged when the row is already in view; else
 * the row at the top of the rows' area (just under the header) when it lies above, at the bottom
 * when it lies below. Rows are `rowHeight` px high and start `headerHeight` px from the top of the
 * scrolled content; the box shows `viewHeight` px, the header sticky at its top. A box shorter
 * than header + row puts the row under the header. Never negative.
 */
export function revealScrollTop(scrollTop: number, viewHeight: number, headerHeight: number, rowHeight: number, index: number): number {
  const above = index * rowHeight; // scrollTop that puts the row right under the header
  const below = headerHeight + (index + 1) * rowHeight - viewHeight; // scrollTop that puts it at the bottom
  if (scrollTop > above || below > above) return Math.max(0, above);
  if (scrollTop < below) return Math.max(0, below);
  return scrollTop;
}
