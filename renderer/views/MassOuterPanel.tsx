import type { JudgeAudit, OuterCycleArm, OuterLoopView, OuterTaskRanking } from '../../core/api/client.ts';
import { modelsLabel, modelsOfOuterLoop } from '../lib/vocabulary.ts';
import { useLab, useLabPick } from '../useLab.ts';
import { LoadState } from './Status.tsx';

/** The command that makes an outer loop (shown when there is none). */
export const RANK_COMMAND = 'flowlab rank --model ../shared/models/stories260K.gguf --threads 1';

const pct = (x: number | null) => (x === null ? '–' : `${(x * 100).toFixed(0)}%`);
const num = (x: number | null) => (x === null ? '–' : x.toFixed(2));

/** A held-out difference and its interval as `flowlab rsi` prints them: `+0.250 [0.000, 0.500]` (three decimals; no pairs: –). */
export function pairedCi(ci: { mean: number | null; low: number | null; high: number | null } | null): string {
  if (!ci || ci.mean === null || ci.low === null || ci.high === null || !Number.isFinite(ci.mean)) return '–';
  return `${ci.mean >= 0 ? '+' : ''}${ci.mean.toFixed(3)} [${ci.low.toFixed(3)}, ${ci.high.toFixed(3)}]`;
}

/** A sign test as `flowlab rsi` prints it: `2/0/6 (p 0.5000)`, `(p < 1e-4)` below that. */
export function pairedSign(s: { positive: number; negative: number; ties: number; p: number } | null): string {
  return s ? `${s.positive}/${s.negative}/${s.ties} (p ${s.p < 1e-4 ? '< 1e-4' : s.p.toFixed(4)})` : '–';
}

/**
 * MASS outer loops (`flowlab rank` / `flowlab rsi`, core/mass/outerRecords.ts): per task the
 * Bradley-Terry ranking with the cut (training ranks, then validation, the rest left out; the
 * guard's quarantined runs dropped), the quarantine with each reason, and per cycle and arm the
 * held-out comparison with the base.
 */
export function MassOuterPanel() {
  const { outerLoops, outerLoop, selectOuterLoop } = useLabPick('outerLoops', 'outerLoop', 'selectOuterLoop');
  const list = outerLoops.status === 'ready' ? outerLoops.data : [];
  const shown = outerLoop.status === 'ready' ? outerLoop.data : undefined;
  return (
    <section className="mass-outer" data-testid="mass-outer" aria-labelledby="mass-outer-title">
      <h3 id="mass-outer-title">Outer loops</h3>
      <LoadState state={outerLoops} what="outer loops" />
      {outerLoops.status === 'ready' && list.length === 0 && (
        <div className="empty" data-testid="mass-outer-empty">
          <p>No outer loop yet. Start one above (job rank or rsi), or from a terminal:</p>
          <pre>
            <code>{RANK_COMMAND}</code>
          </pre>
        </div>
      )}
      {list.length > 0 && (
        <label className="mass-pick">
          Outer loop{' '}
          <select data-testid="mass-outer-loop" value={shown?.loopId ?? ''} onChange={(e) => void selectOuterLoop(e.target.value)}>
            {list.map((x) => (
              <option key={x.loopId} value={x.loopId}>
                {x.loopId} — {x.tasks} task(s), {x.cycles} cycle(s){x.halted ? ', halted' : ''}
              </option>
            ))}
          </select>
        </label>
      )}
      <LoadState state={outerLoop} what="the outer loop" />
      {shown && <OuterLoop loop={shown} />}
    </section>
  );
}

function OuterLoop({ loop }: { loop: OuterLoopView }) {
  const experiments = useLab((s) => s.experiments);
  const models = modelsOfOuterLoop([...new Set(loop.rankings.map((t) => t.prefix))], experiments.status === 'ready' ? experiments.data : []);
  return (
    <div>
      <p className="muted small" data-testid="mass-outer-models">
        models {modelsLabel(models)}
      </p>
      {loop.halted && (
        <p className="note error" data-testid="mass-outer-halted">
          {loop.halted.cycle === null ? 'Halted before the export (rank)' : `Halted in cycle ${loop.halted.cycle}`}: {loop.halted.reasons.join('; ')}
        </p>
      )}
      {(loop.judgeAudits ?? []).map((j) => <JudgeAuditNote key={j.prefix} prefix={j.prefix} audit={j.audit} />)}
      {loop.cycles.length > 0 && <Cycles cycles={loop.cycles} base={loop.baseHeldoutScore} />}
      <h4>Quarantine ({loop.quarantine.length})</h4>
      {loop.quarantine.length === 0 ? (
        <p className="muted small" data-testid="mass-quarantine-none">No run quarantined.</p>
      ) : (
        <ul className="small" data-testid="mass-quarantine">
          {loop.quarantine.map((q) => (
            <li key={`${q.prefix}/${q.runId}`}>
              <code>{q.runId}</code> ({q.taskId}, rank {q.rank}{q.tampered ? ', SIMULATED tamperer' : ''}): {q.reasons.join('; ')}
            </li>
          ))}
        </ul>
      )}
      {loop.rankings.map((t) => <Ranking key={`${t.prefix}/${t.taskId}`} t={t} />)}
    </div>
  );
}

const f3 = (x: number | null) => (x === null ? '–' : x.toFixed(3));
const ci = (c: [number, number] | null) => (c ? ` [${c[0].toFixed(3)}, ${c[1].toFixed(3)}]` : '');

/** The self-judge's audit (core/guards judgeAudit): verdicts, position consistency, agreement and kappa vs the verifier; UNRELIABLE JUDGE with its reasons. */
function JudgeAuditNote({ prefix, audit: a }: { prefix: string; audit: JudgeAudit }) {
  return (
    <div className={a.unreliable ? 'note error' : 'note'} data-testid={`mass-judge-audit-${prefix}`}>
      <strong>{a.unreliable ? 'UNRELIABLE JUDGE' : 'Judge audit'}</strong> <span className="muted small">{prefix} · {a.judge} · {a.pairs} pairs</span>
      <ul className="small">
        <li>verdicts: A {a.verdicts.A}, B {a.verdicts.B}, tie {a.verdicts.tie}</li>
        <li>position consistency (pairs judged in both orders): {f3(a.positionConsistency.rate)}{ci(a.positionConsistency.ci)} ({a.positionConsistency.k}/{a.positionConsistency.n})</li>
        <li>agreement with the verifier: {f3(a.agreement.rate)}{ci(a.agreement.ci)} ({a.agreement.k}/{a.agreement.n} decided pairs)</li>
        <li>Cohen&apos;s kappa vs the verifier: {f3(a.kappa.value)}{ci(a.kappa.ci)}</li>
        {a.unreliable && <li>Its ranks, agreement and the self arm come from a judge that fails: {a.reasons.join('; ')}</li>}
      </ul>
    </div>
  );
}

function Cycles({ cycles, base }: { cycles: OuterCycleArm[]; base: number | null }) {
  return (
    <table className="mass-cycles" data-testid="mass-cycles">
      <caption className="small">Held-out, against the base (base mean external score {num(base)})</caption>
      <thead>
        <tr>
          <th scope="col">cycle</th>
          <th scope="col">arm</th>
          <th scope="col">trained runs</th>
          <th scope="col">pairs</th>
          <th scope="col">base → arm (external score)</th>
          <th scope="col" title="mean paired difference, arm − base, with its 95% percentile-bootstrap interval (flowlab rsi prints the same)">diff [95% CI]</th>
          <th scope="col" title="pairs where the arm scored above / below / equal to the base, and the exact two-sided sign test's p">sign + / − / = (p)</th>
          <th scope="col">win rate: self-judge / external verifier</th>
          <th scope="col">judge-verifier agreement</th>
          <th scope="col">delegated / hand-offs</th>
        </tr>
      </thead>
      <tbody>
        {cycles.map((c) => (
          <tr key={`${c.cycle}:${c.arm}`} data-testid={`mass-cycle-${c.cycle}-${c.arm}`}>
            <td>{c.cycle}</td>
            <td>{c.arm}</td>
            <td>{c.trainedRuns}</td>
            <td>{c.pairs}</td>
            <td>{num(c.baseScore)} → {num(c.armScore)}</td>
            <td className="nowrap" data-testid={`mass-cycle-${c.cycle}-${c.arm}-ci`}>{pairedCi(c.ci)}</td>
            <td className="nowrap" data-testid={`mass-cycle-${c.cycle}-${c.arm}-sign`}>{pairedSign(c.sign)}</td>
            <td>{pct(c.selfJudgeWinRate)} / {pct(c.verifierWinRate)}</td>
            <td>{pct(c.agreement)}</td>
            <td>{c.delegated ?? '–'} / {c.handoffs ?? '–'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Ranking({ t }: { t: OuterTaskRanking }) {
  const v = t.train + 1;
  return (
    <article className="mass-ranking" data-testid={`mass-ranking-${t.prefix}/${t.taskId}`}>
      <h4>
        <code>{t.taskId}</code> <span className="muted small">{t.prefix} · ranks 1–{t.train} train, {t.validation === 1 ? v : `${v}–${t.train + t.validation}`} validation, the rest left out · judge-verifier agreement {pct(t.agreement.rate)}</span>
      </h4>
      <table className="mass-bt">
        <thead>
          <tr>
            <th scope="col">rank</th>
            <th scope="col">run</th>
            <th scope="col">BT score</th>
            <th scope="col">W/L/T</th>
            <th scope="col">verified</th>
            <th scope="col">cut</th>
          </tr>
        </thead>
        <tbody>
          {t.runs.map((r) => (
            <tr key={r.runId} className={`mass-cut-${r.cut}`}>
              <td>{r.rank}</td>
              <td><code>{r.runId}</code>{r.delegated ? ' (delegated)' : ''}</td>
              <td>{r.score.toFixed(2)}</td>
              <td>{r.wins}/{r.losses}/{r.ties}</td>
              <td>{r.verified.toFixed(2)}</td>
              <td>{r.cut === 'dropped' ? `dropped: ${r.dropped ?? ''}` : r.cut === 'out' ? 'left out' : r.cut}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </article>
  );
}
