/**
 * Comparing a re-run with its original (`flowlab verify`, `flowlab repeat`): runs paired by task
 * index, each pair through `diff`'s alignment (core/trace/diff.ts), so a difference is named by
 * its first diverging node and what diverged first in it; train loops by their versions' hashes.
 */
import type { RunRecord } from '../results/index.ts';
import { diffRuns, differsText, type DiffGraph, type NodeEvent } from '../trace/index.ts';
import type { VersionHash } from './digest.ts';

/** One side of a comparison: an experiment's runs, their events read on demand. */
export interface RunsSide {
  runs: readonly RunRecord[];
  events: (runId: string) => NodeEvent[];
}

/** Where two runs of one task first differ. */
export interface FirstRunDifference {
  taskIndex: number;
  /** `missing` when one side has no run of the task. */
  nodeId?: string;
  attempt?: number;
  /** What diverged (diff's aspect label and place), e.g. `sampled text (call 0 completion)`. */
  what: string;
  a?: string;
  b?: string;
}

/** What `compareRuns` answers. */
export interface RunsComparison {
  /** Task indices compared (those of `a`, or `only`). */
  tasks: number;
  /** Of them, how many ran the same in both (every node run the same in every aspect diff compares). */
  identical: number;
  /** The lowest task index that differs, with its first diverging node. */
  first?: FirstRunDifference;
}

/**
 * Pairs `a`'s and `b`'s runs by task index (all of `a`'s, or the indices in `only`) and diffs each
 * pair (core/trace/diff.ts: input, prompt, sampling, sampled text, output, status per node run).
 */
export function compareRuns(a: RunsSide, b: RunsSide, graph?: DiffGraph, only?: ReadonlySet<number>): RunsComparison {
  const byTask = (s: RunsSide) => new Map(s.runs.map((r) => [r.taskIndex, r]));
  const ra = byTask(a);
  const rb = byTask(b);
  const indices = [...(only ?? ra.keys())].sort((x, y) => x - y);
  let identical = 0;
  let first: FirstRunDifference | undefined;
  for (const i of indices) {
    const x = ra.get(i);
    const y = rb.get(i);
    if (!x || !y) {
      first ??= { taskIndex: i, what: `no run of task ${i} in ${x ? 'the re-run' : 'the original'}` };
      continue;
    }
    const d = diffRuns({ events: a.events(x.runId), ...(graph && { graph }) }, { events: b.events(y.runId), ...(graph && { graph }) });
    const sameGrade = x.status === y.status && (x.answer ?? null) === (y.answer ?? null) && x.score === y.score;
    if (d.same && sameGrade) {
      identical++;
      continue;
    }
    if (first) continue;
    if (d.first) {
      const n = d.nodes[d.first.index]!;
      first = { taskIndex: i, nodeId: d.first.nodeId, attempt: d.first.attempt, what: differsText(n) || d.first.aspect, ...(d.first.difference.a !== undefined && { a: d.first.difference.a }), ...(d.first.difference.b !== undefined && { b: d.first.difference.b }) };
    } else {
      first = { taskIndex: i, what: 'grade', a: `${x.status} ${x.answer ?? ''} ${x.score}`, b: `${y.status} ${y.answer ?? ''} ${y.score}` };
    }
  }
  return { tasks: indices.length, identical, ...(first && { first }) };
}

/** What `compareVersions` answers: versions compared, how many have the same file bytes, the first that differs. */
export interface VersionsComparison {
  versions: number;
  identical: number;
  first?: { role: string; iteration: number; a?: string; b?: string };
}

/** Pairs two loops' versions by (role, iteration) and compares their sha256; the first difference in (role, iteration) order. */
export function compareVersions(a: readonly VersionHash[], b: readonly VersionHash[]): VersionsComparison {
  const key = (v: VersionHash) => `${v.role}\u0000${String(v.iteration).padStart(6, '0')}`;
  const mb = new Map(b.map((v) => [key(v), v]));
  const keys = [...new Set([...a.map(key), ...mb.keys()])].sort();
  const ma = new Map(a.map((v) => [key(v), v]));
  let identical = 0;
  let first: VersionsComparison['first'];
  for (const k of keys) {
    const x = ma.get(k);
    const y = mb.get(k);
    if (x && y && x.sha256 === y.sha256) {
      identical++;
      continue;
    }
    const v = (x ?? y)!;
    first ??= { role: v.role, iteration: v.iteration, ...(x && { a: x.sha256 }), ...(y && { b: y.sha256 }) };
  }
  return { versions: keys.length, identical, ...(first && { first }) };
}
