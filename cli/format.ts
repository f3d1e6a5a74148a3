import Table from 'cli-table3';
import type { ExperimentReport, ReplayReport } from '../core/experiments/index.ts';
import { constantFlag, NO_ANSWER } from '../core/guards/index.ts';

/** The JSON form of a report (`--json`). */
export function reportJson(r: ExperimentReport): string {
  return JSON.stringify(r) + '\n';
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** The results table `flowlab run` / `resume` print. */
export function formatReport(r: ExperimentReport, title: string): string {
  const t = new Table({ head: ['metric', 'value'], style: { head: [], border: [], compact: true } });
  const f = r.failuresByClass;
  t.push(
    ['runs stored', `${r.runs} / ${r.tasksPlanned} planned`],
    ['accuracy', pct(r.accuracy) + (r.guard.constant ? ' CONSTANT' : '')],
    ['best constant policy', r.guard.bestConstant ? `${pct(r.guard.bestConstant.accuracy)} (always ${JSON.stringify(r.guard.bestConstant.answer)})` : '-'],
    ['distinct answers', `${r.guard.distinctAnswers}${r.guard.classes !== undefined ? ` (${r.guard.classes} classes)` : ''}`],
    ['completion rate', pct(r.completionRate)],
    ['failures: wiring', String(f.wiring)],
    ['failures: execution', String(f.execution)],
    ['failures: cascade', String(f.cascade)],
    ['failures: infrastructure', String(f.infrastructure)],
    ['outputs repaired / cut at max_tokens', `${r.outputs.repaired} / ${r.outputs.cut}`],
    ['prompt tokens', String(r.promptTokens)],
    ['completion tokens', String(r.completionTokens)],
    ['seconds per task', r.secondsPerTask.toFixed(2)],
    ['wall seconds', r.wallSeconds.toFixed(2)],
    ['status', r.status],
  );
  const flag = constantFlag(r.guard);
  const noAnswer = r.guard.topAnswer?.answer === NO_ANSWER && r.guard.topAnswer.share === 1;
  const why = noAnswer ? 'no run gave an answer; the accuracy is that of answering nothing' : "the answers collapsed; the accuracy is a constant policy's";
  return `${title}\n${t.toString()}\n${flag ? `${flag}: ${why}.\n` : ''}${formatLadder(r)}Experiment: ${r.experimentId}\n`;
}

const n2 = (x: number) => x.toFixed(2);

/** The per-role reward ladder table (means over runs) with the weights in use. */
export function formatLadder(r: ExperimentReport): string {
  const roles = Object.entries(r.roles);
  if (!roles.length) return '';
  const t = new Table({
    head: ['role', 'f format', 'v validity', 'e complete', 'a correct', 'c credit', 'h reward', 'rung', 'blamed', 'weights f/v/e/a/c'],
    style: { head: [], border: [], compact: true },
  });
  for (const [role, s] of roles) {
    const w = s.weights;
    t.push([role, n2(s.format), n2(s.validity), n2(s.completion), n2(s.correctness), n2(s.credit), n2(s.reward), s.highestRung.toFixed(1), String(s.blamed) + (s.ambiguous ? ` (+${s.ambiguous} ambiguous)` : ''), `${w.format}/${w.validity}/${w.completion}/${w.correctness}/${w.credit}`]);
  }
  const notes = [
    'Reward ladder per role (means over runs): h = wf*f + wv*v + we*e + wa*a + wc*c, c = -(root failures blamed)/(nodes authored).',
    `Structure cannot see wrong-but-clean runs: ${r.silentRuns} silent run(s), carried only by a (correctness).`,
  ];
  if (r.simulatedRuns) notes.push(`SIMULATED: ${r.simulatedRuns} run(s) contain injected faults.`);
  return `${t.toString()}\n${notes.join('\n')}\n`;
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
