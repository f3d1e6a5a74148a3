/**
 * The ready queue of a run: which nodes may start next, in the order a scan of the start order
 * would meet them, without rescanning. A scheduling pass walks the start order (`hops`, else
 * document order) once from its first place; a node that becomes ready ahead of the walk is met
 * in the same pass, one that becomes ready behind it waits for the next pass (which starts from
 * the first place again). The queue reproduces exactly that walk with two binary min-heaps of
 * places: `pass` (places ahead of the cursor) and `next` (places at or behind it), so taking the
 * next node costs O(log n) instead of O(n) per step.
 *
 * Entries are lazy: a place stays queued after its node stops being ready (it started, finished,
 * or a loop made a predecessor pending again), and `takeReady` drops it when met. A node is
 * queued again every time it becomes ready; duplicate places are harmless, the second is dropped.
 *
 * Binary heap: Williams, "Algorithm 232: Heapsort", CACM 7(6), 1964 (sift-up / sift-down).
 */
import type { NodeId } from '../ids.ts';

export interface ReadyQueue {
  /** The start order: explicit `hops`, else document order. */
  order: readonly NodeId[];
  /** The places (indices into `order`) of each node; a node absent from `order` has none and never starts. */
  places: ReadonlyMap<NodeId, readonly number[]>;
  /** Min-heap of places the current pass has still to meet (each > cursor). */
  pass: number[];
  /** Min-heap of places queued at or behind the cursor: the next pass's. */
  next: number[];
  /** The place the current pass last met; -1 before its first. */
  cursor: number;
}

/** An empty queue over the start order `order`. */
export function newReadyQueue(order: readonly NodeId[]): ReadyQueue {
  const places = new Map<NodeId, number[]>();
  order.forEach((id, i) => {
    const at = places.get(id);
    if (at) at.push(i);
    else places.set(id, [i]);
  });
  return { order, places, pass: [], next: [], cursor: -1 };
}

/** Queues every place of `id`: ahead of the cursor into this pass, else into the next one. */
export function enqueue(q: ReadyQueue, id: NodeId): void {
  for (const p of q.places.get(id) ?? []) heapPush(p > q.cursor ? q.pass : q.next, p);
}

/** Starts a fresh pass from the first place: everything queued is ahead of it. */
export function beginPass(q: ReadyQueue): void {
  for (const p of q.next) heapPush(q.pass, p);
  q.next.length = 0;
  q.cursor = -1;
}

/**
 * The next ready node the walk meets, moving the cursor onto its place; when this pass has
 * nothing left ahead but places were queued behind the cursor, a new pass begins. Undefined when
 * no queued node is ready. `ready(id)` tells whether a queued node is still ready.
 */
export function takeReady(q: ReadyQueue, ready: (id: NodeId) => boolean): NodeId | undefined {
  for (;;) {
    if (q.pass.length === 0) {
      if (q.next.length === 0) return undefined;
      [q.pass, q.next] = [q.next, q.pass];
      q.cursor = -1;
    }
    const p = heapPop(q.pass);
    q.cursor = p;
    const id = q.order[p]!;
    if (ready(id)) return id;
  }
}

function heapPush(h: number[], v: number): void {
  let i = h.length;
  h.push(v);
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (h[parent]! <= v) break;
    h[i] = h[parent]!;
    i = parent;
  }
  h[i] = v;
}

function heapPop(h: number[]): number {
  const top = h[0]!;
  const last = h.pop()!;
  if (h.length === 0) return top;
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= h.length) break;
    const c = l + 1 < h.length && h[l + 1]! < h[l]! ? l + 1 : l;
    if (h[c]! >= last) break;
    h[i] = h[c]!;
    i = c;
  }
  h[i] = last;
  return top;
}
