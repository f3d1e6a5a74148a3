/**
 * What `flowlab diff` prints: the two runs, the first divergence (any difference, then the first
 * one that is not a sampling setting) with both values around the first differing character,
 * and a compact table of the aligned node runs with what differs in each.
 */
import Table from 'cli-table3';
import { DIFF_ASPECT_LABEL, differsText, type AlignedNode, type Difference, type Divergence, type RunDiff } from '../core/trace/index.ts';

/** One side of a diff as printed. */
export interface DiffedRun {
  /** The run id (`<id> (replayed)` for a replay). */
  runId: string;
  experimentId: string;
  workflow: string;
  taskIndex: number;
  taskId: string;
  seed: number;
  status: string;
  answer?: string;
  /** Absent for a replay (it is not graded). */
  correct?: boolean;
}

/** The command's report: both runs, the diff and what the reader should know. */
export interface RunDiffReport {
  a: DiffedRun;
  b: DiffedRun;
  /** B is A replayed from its recorded calls. */
  replay: boolean;
  /** Both ran the same workflow text (same sha256). */
  sameWorkflow: boolean;
  /** Notes (different workflow texts, a workflow that no longer compiles); the text form prints them on stderr. */
  notes: string[];
  /** Every call of both runs decoded with temperature 0 (greedy: the seed changes nothing). */
  greedy: boolean;
  diff: RunDiff;
}

/** The report as one JSON object (a line). */
export function runDiffJson(r: RunDiffReport): string {
  return JSON.stringify(r) + '\n';
}


/** The report as text. */
export function formatRunDiff(r: RunDiffReport): string {
  const { diff } = r;
  const lines = [runLine('A', r.a), runLine('B', r.b)];
  if (!diff.first) {
    lines.push(`No divergence: the ${diff.counts.nodes} node runs are the same in inputs, prompts, sampling, sampled text, outputs and statuses.`);
  } else {
    lines.push(`First diverging node: ${divergenceLine(diff, diff.first)}`);
    lines.push(...valueLines(diff.first.difference));
    if (!diff.firstBehaviour) {
      lines.push(`Behaviour: the same at every node run; only sampling settings differ${r.greedy ? ' (every call decoded greedily, temperature 0, so the seed changes nothing)' : ''}.`);
    } else if (diff.firstBehaviour.index !== diff.first.index || diff.firstBehaviour.difference.at !== diff.first.difference.at) {
      lines.push(`First behaviour divergence (settings aside): ${divergenceLine(diff, diff.firstBehaviour)}`);
      lines.push(...valueLines(diff.firstBehaviour.difference));
    }
  }
  const t = new Table({ head: ['', 'node', 'kind', 'A', 'B', 'differs'], style: { head: [], border: [], compact: true } });
  diff.nodes.forEach((n, i) => {
    const mark = i === diff.first?.index ? '▶' : i === diff.firstBehaviour?.index ? '▷' : '';
    t.push([mark, `${n.nodeId}#${n.attempt}`, `${n.kind}${n.role ? ' ' + n.role : ''}`, n.a?.status ?? '—', n.b?.status ?? '—', clip(differsText(n), 70) || 'same']);
  });
  lines.push(t.toString());
  const { nodes, differing, onlyA, onlyB } = diff.counts;
  const legend = diff.first ? ` ▶ first divergence${diff.firstBehaviour && diff.firstBehaviour.index !== diff.first.index ? ', ▷ first behaviour divergence' : ''}.` : '';
  lines.push(`${nodes} node runs aligned: ${differing} differ (${onlyA} only in A, ${onlyB} only in B), ${nodes - differing} the same.${legend}`);
  lines.push('(flowlab diff exits 0 whether or not the runs differ.)');
  return lines.join('\n') + '\n';
}

function runLine(name: string, s: DiffedRun): string {
  const graded = s.correct === undefined ? '' : s.correct ? '  correct' : '  wrong';
  return `Run ${name}: ${s.runId}  workflow ${s.workflow}  task ${s.taskIndex} (${s.taskId})  seed ${s.seed}  ${s.status}  answer ${s.answer ?? '-'}${graded}`;
}

function divergenceLine(diff: RunDiff, d: Divergence): string {
  const n = diff.nodes[d.index]!;
  return `${d.nodeId}#${d.attempt} (${n.kind}${n.role ? ' ' + n.role : ''}): ${DIFF_ASPECT_LABEL[d.aspect]} — ${d.difference.at}`;
}

/** Both values of a difference, clipped around the first differing character. */
function valueLines(d: Difference): string[] {
  const show = (v: string | undefined) => (v === undefined ? '(none)' : JSON.stringify(around(v, d.offset)));
  return [`  A: ${show(d.a)}`, `  B: ${show(d.b)}`];
}

function around(v: string, offset: number | undefined, width = 60): string {
  if (offset === undefined || v.length <= width) return clip(v, width);
  const from = Math.max(0, offset - 20);
  return (from > 0 ? '…' : '') + v.slice(from, from + width) + (v.length > from + width ? '…' : '');
}

export { differsText };

const clip = (s: string, n: number) => (s.length > n ? s.slice(0, n - 1) + '…' : s);
