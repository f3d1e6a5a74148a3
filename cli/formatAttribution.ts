/**
 * The tables `flowlab attribution-eval` prints: one method in detail (strict and official-style
 * accuracies, the label-free baselines beside it, per labelled agent), or a comparison of methods.
 */
import Table from 'cli-table3';
import { constantFlag, type AnswerGuard } from '../core/guards/index.ts';
import { NO_PREDICTION, PAPER_REFERENCE, type Accuracy, type AttributionEvaluation, type AttributionScore, type OfficialScore, type UnscorableLog } from '../core/blame/index.ts';

const pct = (x: number | null, digits = 1) => (x === null ? 'n/a' : `${(x * 100).toFixed(digits)}%`);
const both = (a: Accuracy) => `${pct(a.overAll)} / ${pct(a.overCovered)}`;
const style = { head: [], border: [], compact: true };

/** One row of a comparison: a named run of a method and its evaluation. */
export interface AttributionRow {
  /** Stable id, e.g. `surfaced-infrastructure`, `hybrid`, `all-at-once`. */
  id: string;
  /** What the row is, for people. */
  label: string;
  evaluation: AttributionEvaluation;
  /** Model calls made (judges), summed over logs. */
  calls: number;
  wallSeconds: number;
}

/** A baseline's headline numbers, printed beside a method. */
export interface BaselineLine {
  label: string;
  score: AttributionScore;
  official: OfficialScore;
}

const paperLine = () =>
  `agent ${pct(PAPER_REFERENCE.agentAccuracy.low, 0)}–${pct(PAPER_REFERENCE.agentAccuracy.high, 0)}, step <= ${pct(PAPER_REFERENCE.stepAccuracyAtMost)} (${PAPER_REFERENCE.source})`;

function unscorableText(u: readonly UnscorableLog[]): string {
  if (!u.length) return '';
  return `Unscorable logs, left out of every accuracy (${u.length}):\n${u.map((x) => `  ${x.file}: ${x.reason}`).join('\n')}\n`;
}

/**
 * One method in detail: coverage, strict agent and step accuracy over all logs and over covered
 * logs, the official scorer's substring-matched accuracies, the baselines beside it, the paper's
 * reference, then per labelled agent. Unscorable logs are listed after.
 */
export function formatAttribution(s: AttributionScore, title: string, extra: { official?: OfficialScore; baselines?: readonly BaselineLine[]; unscorable?: readonly UnscorableLog[]; guard?: AnswerGuard } = {}): string {
  const t = new Table({ head: ['metric', 'value'], style });
  t.push(
    ['logs', String(s.logs)],
    ['covered (method answered)', `${s.covered} (${pct(s.logs ? s.covered / s.logs : 0)})`],
    ['agent accuracy, over all logs', pct(s.agentAccuracy.overAll)],
    ['agent accuracy, over covered', pct(s.agentAccuracy.overCovered)],
    ['step accuracy, over all logs', pct(s.stepAccuracy.overAll)],
    ['step accuracy, over covered', pct(s.stepAccuracy.overCovered)],
  );
  if (extra.official) {
    t.push(
      ['official-style agent accuracy, over all logs (substring)', pct(extra.official.agentAccuracy.overAll)],
      ['official-style step accuracy, over all logs (substring)', pct(extra.official.stepAccuracy.overAll)],
    );
  }
  for (const b of extra.baselines ?? []) {
    t.push([`baseline: ${b.label}`, `agent ${pct(b.score.agentAccuracy.overAll)}, step ${pct(b.score.stepAccuracy.overAll)} (official-style ${pct(b.official.agentAccuracy.overAll)}, ${pct(b.official.stepAccuracy.overAll)})`]);
  }
  if (extra.guard) {
    const g = extra.guard;
    t.push(['agent: best constant policy (most blamed agent in the labels)', g.bestConstant ? `${pct(g.bestConstant.accuracy)} (always ${g.bestConstant.answer})` : '-']);
    t.push(['agent: distinct agents blamed', `${g.distinctAnswers}${g.constant ? ` — ${constantFlag(g)}: the agent accuracy is a constant policy's` : ''}`]);
  }
  t.push(['from the paper, for context: best LLM method', paperLine()]);
  const c = new Table({ head: ['labelled agent', 'logs', 'covered', 'agent correct', 'step correct', 'predicted as'], style });
  for (const a of s.perAgent) {
    const as = Object.entries(a.predictedAs)
      .sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]))
      .map(([k, v]) => `${k === NO_PREDICTION ? 'none' : k} ${v}`)
      .join(', ');
    c.push([a.agent, String(a.labelled), String(a.covered), String(a.agentCorrect), String(a.stepCorrect), as]);
  }
  return `${title}\n${t.toString()}\nPer labelled agent:\n${c.toString()}\n${unscorableText(extra.unscorable ?? [])}`;
}

/**
 * Methods side by side, one row each: coverage; strict agent and step accuracy (over all logs /
 * over covered); the official scorer's (substring) agent and step accuracy over all logs; calls.
 */
export function formatComparison(rows: readonly AttributionRow[], title: string, notes: readonly string[] = [], unscorable: readonly UnscorableLog[] = []): string {
  const t = new Table({
    head: ['method', 'covered', 'agent strict (all / covered)', 'step strict (all / covered)', 'agent official', 'step official', 'calls', 's'],
    style,
  });
  for (const r of rows) {
    const { score, official } = r.evaluation;
    t.push([r.label, `${score.covered}/${score.logs}`, both(score.agentAccuracy), both(score.stepAccuracy), pct(official.agentAccuracy.overAll), pct(official.stepAccuracy.overAll), String(r.calls), r.wallSeconds.toFixed(1)]);
  }
  const lines = [
    'strict: agent names normalised (qualifiers such as "(thought)" stripped) and compared case-insensitively; steps equal as integers.',
    'official: as the benchmark\'s scorer (Automated_FA/evaluate.py): the label is a substring of the prediction (gold step 1 matches 10), over all logs.',
    `from the paper, for context: best LLM method ${paperLine()}`,
    ...notes,
  ];
  return `${title}\n${t.toString()}\n${lines.join('\n')}\n${unscorableText(unscorable)}`;
}
