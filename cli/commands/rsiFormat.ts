/** Tables of `flowlab rsi` and `flowlab rank`: per cycle and arm, the held-out comparison, agreement, quarantines and the halt report. */
import Table from 'cli-table3';
import type { SignTest } from '../../core/stats/index.ts';
import { formatJudgeAudit } from '../../core/guards/index.ts';
import { describeBlindSpot, describeReason, type Agreement, type BlindSpotCheck, type BlindSpotRate, type HaltReport, type RsiReport, type TamperSummary, type TaskRanking } from '../../core/mass/index.ts';

const pct = (x: number | null | undefined) => (x === null || x === undefined ? '-' : `${(x * 100).toFixed(1)}%`);
const agree = (a: Agreement) => `${pct(a.rate)} (${a.agreed}/${a.decided} decided pairs${a.verifierTies ? `, ${a.verifierTies} verifier ties left out` : ''})`;
const table = (head: string[]) => new Table({ head, style: { head: [], border: [], compact: true } });

/** What the SIMULATED tamperer's runs got, in one paragraph. */
export function formatTamper(t: TamperSummary): string {
  return [
    `SIMULATED tamperer: ${t.runs} tampered run(s); quarantined ${t.quarantined}/${t.runs} (${pct(t.quarantined / t.runs)}).`,
    `  Self-judge on pairs with one tampered run: tampered wins ${t.judge.wins}, loses ${t.judge.losses}, ties ${t.judge.ties} (win rate ${pct(t.judge.winRate)});`,
    `  mean Bradley-Terry rank ${t.meanRank.toFixed(1)}; ${t.inCutBeforeGuard} were inside the training cut and were dropped by the guard.`,
  ].join('\n');
}

/** The halt report. */
export function formatHalt(h: HaltReport): string {
  const lines = [`HALTED in cycle ${h.cycle} (${h.prefix}), before any training:`, ...h.reasons.map((r) => `  - ${r}`)];
  if (h.tampered) lines.push(formatTamper(h.tampered));
  if (h.blindSpot) lines.push(formatBlindSpot(h.blindSpot));
  const t = table(['run', 'task', 'BT rank', 'tampered', 'why quarantined']);
  for (const q of h.quarantine.slice(0, 40)) t.push([q.runId, q.taskId, q.rank, q.tampered ? 'SIMULATED' : '-', q.reasons.join('; ')]);
  lines.push(`Quarantine (${h.quarantine.length}, kept and shown, never exported or trained):`, t.toString());
  if (h.quarantine.length > 40) lines.push(`  ... ${h.quarantine.length - 40} more in ${h.file}`);
  lines.push(`Report: ${h.file}`);
  return lines.join('\n') + '\n';
}

/** A blind-spot error rate: `k/n, rate [95% Wilson]`. */
export function formatRate(r: BlindSpotRate): string {
  return `${r.errors}/${r.n}, ${r.rate === null ? '-' : r.rate.toFixed(3)}${r.interval ? ` [${r.interval[0].toFixed(3)}, ${r.interval[1].toFixed(3)}]` : ''}`;
}

/** The whole `rsi` report. */
export function formatRsi(r: RsiReport): string {
  const out: string[] = [`MASS rsi ${r.loopId}: base ${r.base.model}, held-out external score ${r.base.heldoutScore?.toFixed(3) ?? '-'}`];
  for (const c of r.cycles) {
    out.push('', `Cycle ${c.cycle}`);
    for (const g of c.groups) {
      out.push(`  runs ${g.prefix} (arms ${g.arms.join(', ')}): ${g.runs} runs, ${g.quarantined} quarantined; self-judge vs external verifier agreement ${agree(g.agreement)}${g.judgeAudit?.unreliable ? ' — UNRELIABLE JUDGE' : ''}`);
      if (g.judgeAudit) out.push(formatJudgeAudit(g.judgeAudit).trimEnd().replace(/^/gm, '  '));
      if (g.tampered) out.push(formatTamper(g.tampered).replace(/^/gm, '  '));
      if (g.blindSpot) out.push(`  ${describeBlindSpot(g.blindSpot)}`);
    }
    const t = table(['arm', 'version', 'trained on', 'held-out base -> arm', 'diff [95% CI]', 'sign +/-/= (p)', 'verifier win', 'self-judge win', 'agreement', 'delegated', 'tokens/pt']);
    for (const a of Object.values(c.arms)) {
      const h = a.heldout;
      t.push([
        a.arm, a.refused ? 'REFUSED: UNRELIABLE JUDGE' : a.versionId ?? '(no data: not trained)', `${a.trainedRuns} runs, ${a.exported.train} calls`,
        h ? `${h.base.toFixed(3)} -> ${h.arm.toFixed(3)}` : '-',
        h ? `${h.ci.mean >= 0 ? '+' : ''}${h.ci.mean.toFixed(3)} [${h.ci.low.toFixed(3)}, ${h.ci.high.toFixed(3)}]` : '-',
        h ? `${h.sign.positive}/${h.sign.negative}/${h.sign.ties} (p ${h.sign.p < 1e-4 ? '< 1e-4' : h.sign.p.toFixed(4)})` : '-',
        h ? pct(h.verifierWinRate) : '-', h ? `${pct(h.selfJudgeWinRate)}${c.groups.some((g) => g.judgeAudit?.unreliable) ? ' (UNRELIABLE JUDGE)' : ''}` : '-', h ? agree(h.agreement) : '-',
        h ? `${h.delegated}/${h.pairs}` : '-', h?.tokensPerPoint ? h.tokensPerPoint.toFixed(0) : '-',
      ]);
    }
    if (Object.keys(c.arms).length) out.push(t.toString());
    for (const a of Object.values(c.arms)) {
      const h = a.heldout;
      if (h?.vsPrevious) out.push(`  ${a.arm}: vs cycle ${c.cycle - 1}: ${h.vsPrevious.previous.toFixed(3)} -> ${h.arm.toFixed(3)}, diff ${h.vsPrevious.ci.mean >= 0 ? '+' : ''}${h.vsPrevious.ci.mean.toFixed(3)} [${h.vsPrevious.ci.low.toFixed(3)}, ${h.vsPrevious.ci.high.toFixed(3)}], sign ${h.vsPrevious.sign.positive}/${h.vsPrevious.sign.negative}/${h.vsPrevious.sign.ties} (p ${h.vsPrevious.sign.p < 1e-4 ? '< 1e-4' : h.vsPrevious.sign.p.toFixed(4)})`);
      if (h?.blindSpot) out.push(`  ${a.arm}: blind-spot error rate (right number, wrong unit) ${formatRate(h.blindSpot)}; base ${h.baseBlindSpot ? formatRate(h.baseBlindSpot) : '-'}; held-out answers by class: ${Object.entries(h.classes ?? {}).sort(([x], [y]) => x.localeCompare(y)).map(([k, n]) => `${k} ${n}`).join(', ')}`);
      const signOf = (t: SignTest) => `into/out of the blind spot ${t.positive}/${t.negative}/${t.ties} (p ${t.p < 1e-4 ? '< 1e-4' : t.p.toFixed(4)})`;
      if (h?.blindSpotVsBase) out.push(`  ${a.arm}: blind spot, paired: vs base ${signOf(h.blindSpotVsBase)}${h.blindSpotVsPrevious ? `; vs cycle ${c.cycle - 1} ${signOf(h.blindSpotVsPrevious)}` : ''}`);
    }
    for (const a of Object.values(c.arms)) {
      if (a.refused) out.push(`  ${a.arm}: SFT export refused: UNRELIABLE JUDGE (${a.refused.join('; ')}); rerun with --allow-unreliable-judge to export and train it anyway (its manifest is then marked)`);
      if (a.sft) out.push(`  ${a.arm}: SFT ${a.sft.sequences} sequences, train loss ${a.sft.trainLoss.map((x) => x.toFixed(3)).join(' -> ')}, validation loss ${a.sft.validationLoss.map((x) => (Number.isNaN(x) ? '-' : x.toFixed(3))).join(' -> ')} (kept pass ${a.sft.bestPass}), ${a.sft.seconds.toFixed(1)} s; export ${a.exported.dir}`);
    }
  }
  if (r.halted) out.push('', formatHalt(r.halted).trimEnd());
  return out.join('\n') + '\n';
}

/** The `rank` report: per task the Bradley-Terry ranking with both cuts and the quarantine. */
export function formatRank(rankings: readonly TaskRanking[], exports: Record<string, string>): string {
  const out: string[] = [];
  for (const r of rankings) {
    out.push(`Task ${r.taskId}: ${r.runs.length} runs, ${r.pairs.length} pairs judged; self-judge vs external verifier agreement ${agree(r.agreement)}`);
    const selfTrain = new Set(r.self.train.map((x) => x.runId));
    const selfVal = new Set(r.self.validation.map((x) => x.runId));
    const verTrain = new Set(r.verifier.train.map((x) => x.runId));
    const verVal = new Set(r.verifier.validation.map((x) => x.runId));
    const t = table(['rank', 'run', 'BT score', 'W-L-T', 'verified', 'reported', 'self cut', 'verifier cut', 'guard']);
    for (const x of r.runs) {
      t.push([
        x.rank, x.runId, x.score.toFixed(3), `${x.wins}-${x.losses}-${x.ties}`, x.verified, x.reported,
        selfTrain.has(x.runId) ? 'train' : selfVal.has(x.runId) ? 'validation' : '-',
        verTrain.has(x.runId) ? 'train' : verVal.has(x.runId) ? 'validation' : '-',
        x.quarantined ? `QUARANTINED${x.tampered ? ' (SIMULATED tamperer)' : ''}: ${x.guard.reasons.map(describeReason).join('; ')}` : 'ok',
      ]);
    }
    out.push(t.toString(), '');
  }
  for (const [arm, dir] of Object.entries(exports)) out.push(`Export (${arm}): ${dir}`);
  return out.join('\n') + '\n';
}

/** The blind-spot guard's check in a halt report: the rate and each sampled winner the verifier rejected. */
export function formatBlindSpot(c: BlindSpotCheck): string {
  const rejected = c.checked.filter((x) => x.disagreed);
  return [describeBlindSpot(c), ...rejected.slice(0, 20).map((x) => `  rejected: ${x.runId} (${x.taskId}, BT rank ${x.rank}, verified ${x.verified})`), ...(rejected.length > 20 ? [`  ... ${rejected.length - 20} more`] : [])].join('\n');
}
