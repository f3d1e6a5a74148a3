import Table from 'cli-table3';
import type { ExperimentReport, ReplayReport } from '../core/experiments/index.ts';

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** The results table `flowlab run` / `resume` print. */
export function formatReport(r: ExperimentReport, title: string): string {
  const t = new Table({ head: ['metric', 'value'], style: { head: [], border: [], compact: true } });
  const f = r.failuresByClass;
  t.push(
    ['runs stored', `${r.runs} / ${r.tasksPlanned} planned`],
    ['accuracy', pct(r.accuracy)],
    ['completion rate', pct(r.completionRate)],
    ['failures: wiring', String(f.wiring)],
    ['failures: execution', String(f.execution)],
    ['failures: cascade', String(f.cascade)],
    ['failures: infrastructure', String(f.infrastructure)],
    ['prompt tokens', String(r.promptTokens)],
    ['completion tokens', String(r.completionTokens)],
    ['seconds per task', r.secondsPerTask.toFixed(2)],
    ['wall seconds', r.wallSeconds.toFixed(2)],
    ['status', r.status],
  );
  return `${title}\n${t.toString()}\nExperiment: ${r.experimentId}\n`;
}

export function formatReplay(r: ReplayReport): string {
  const lines = [
    `Replayed ${r.runs} runs of ${r.experimentId} from recorded calls (models loaded: ${r.modelsLoaded}).`,
    `Node outputs: ${r.matched} / ${r.nodes} identical, ${r.mismatched} mismatched, in ${r.wallSeconds.toFixed(3)} s.`,
  ];
  for (const m of r.mismatches.slice(0, 20)) {
    lines.push(`  ${m.runId} ${m.nodeId}#${m.attempt}: ${m.what} differs${m.recorded !== undefined ? ` (recorded ${m.recorded}` : ''}${m.replayed !== undefined ? `, replayed ${m.replayed})` : m.recorded !== undefined ? ')' : ''}`);
  }
  if (r.mismatches.length > 20) lines.push(`  ... and ${r.mismatches.length - 20} more`);
  return lines.join('\n') + '\n';
}
