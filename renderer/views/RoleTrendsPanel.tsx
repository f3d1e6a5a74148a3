/**
 * Per-role trends across experiments (issue 29), in the Ladder view: one chart per role, the
 * experiments on the x axis oldest first (the same position in every chart), the role's mean
 * reward h_ρ and the share of runs blamed on it (`getRoleTrends`; the `h reward` and `blamed`
 * columns `flowlab show <experiment-id>` prints per role). Each experiment is named by number in
 * the charts and in full (workflow, kind, date, id) in the key below them. Figures carry their
 * raw values in `data-value`.
 */
import { useEffect } from 'react';
import type { RoleTrendPoint, RoleTrends, TrendExperiment } from '../../core/api/client.ts';
import { useLabPick } from '../useLab.ts';
import { timestamp } from './format.ts';
import { kindLabel } from '../lib/vocabulary.ts';
import { LoadState, RefreshButton } from './Status.tsx';

const W = 420;
const H = 150;
const PAD = { left: 34, right: 10, top: 10, bottom: 22 };
/** The y axis: h ranges −0.5..1 with the default weights; a blamed share 0..1. */
const Y_MIN = -0.5;
const Y_MAX = 1;

/** An experiment as the key names it: workflow · kind · date · id. */
export const trendLabel = (e: TrendExperiment) => `${e.workflowName} · ${kindLabel(e.kind)} · ${timestamp(e.createdAt)} · ${e.id}`;

export function RoleTrendsPanel() {
  const { roleTrends, loadRoleTrends } = useLabPick('roleTrends', 'loadRoleTrends');
  useEffect(() => void loadRoleTrends(), [loadRoleTrends]);
  const data = roleTrends.status === 'ready' ? roleTrends.data : null;
  return (
    <section className="role-trends" data-testid="role-trends" aria-labelledby="role-trends-title">
      <header className="row wrap">
        <h3 id="role-trends-title">Trends per role across experiments</h3>
        <RefreshButton onRefresh={loadRoleTrends} />
      </header>
      <LoadState state={roleTrends} what="the trends" />
      {data && data.experiments.length === 0 && <p className="muted">No experiment has a ladder or a blame yet.</p>}
      {data && data.experiments.length > 0 && <Trends data={data} />}
    </section>
  );
}

function Trends({ data }: { data: RoleTrends }) {
  const index = new Map(data.experiments.map((e, i) => [e.id, i]));
  return (
    <>
      <p className="muted small">
        <span className="trend-key trend-key-h" aria-hidden="true" /> mean reward h<sub>ρ</sub> ·{' '}
        <span className="trend-key trend-key-blamed" aria-hidden="true" /> share of runs blamed on the role · x: experiments oldest first, numbered as in the key
      </p>
      <div className="role-trends-charts">
        {Object.entries(data.roles)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([role, points]) => (
            <RoleChart key={role} role={role} points={points} experiments={data.experiments} index={index} />
          ))}
      </div>
      <ol className="small role-trends-key" data-testid="role-trends-key">
        {data.experiments.map((e) => (
          <li key={e.id} data-testid={`role-trends-key-${e.id}`}>
            {trendLabel(e)}
          </li>
        ))}
      </ol>
    </>
  );
}

function RoleChart({ role, points, experiments, index }: { role: string; points: RoleTrendPoint[]; experiments: TrendExperiment[]; index: Map<string, number> }) {
  const n = experiments.length;
  const x = (i: number) => PAD.left + (n === 1 ? (W - PAD.left - PAD.right) / 2 : (i * (W - PAD.left - PAD.right)) / (n - 1));
  const y = (v: number) => PAD.top + ((Y_MAX - v) * (H - PAD.top - PAD.bottom)) / (Y_MAX - Y_MIN);
  const share = (p: RoleTrendPoint) => (p.experimentRuns ? p.blamedRuns / p.experimentRuns : 0);
  const withH = points.filter((p) => p.meanReward !== null);
  const line = (pts: RoleTrendPoint[], v: (p: RoleTrendPoint) => number) => pts.map((p) => `${x(index.get(p.experimentId)!)},${y(v(p))}`).join(' ');
  return (
    <figure className="role-trend" data-testid={`role-trend-${role}`}>
      <figcaption>
        <strong>{role}</strong>
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} width={W} height={H} role="img" aria-label={`${role}: mean reward and share of runs blamed, per experiment`}>
        {[-0.5, 0, 0.5, 1].map((v) => (
          <g key={v}>
            <line className={v === 0 ? 'trend-zero' : 'trend-grid'} x1={PAD.left} x2={W - PAD.right} y1={y(v)} y2={y(v)} />
            <text className="trend-tick" x={PAD.left - 4} y={y(v) + 4} textAnchor="end">
              {v.toFixed(1)}
            </text>
          </g>
        ))}
        {experiments.map((e, i) => (
          <text key={e.id} className="trend-tick" x={x(i)} y={H - 6} textAnchor="middle">
            {i + 1}
          </text>
        ))}
        <polyline className="trend-h" points={line(withH, (p) => p.meanReward!)} />
        <polyline className="trend-blamed" points={line(points, share)} />
        {withH.map((p) => (
          <circle key={`h-${p.experimentId}`} className="trend-h-dot" cx={x(index.get(p.experimentId)!)} cy={y(p.meanReward!)} r={3.5}>
            <title>{`${trendLabel(experiments[index.get(p.experimentId)!]!)}: h ${p.meanReward!.toFixed(2)} over ${p.runs} runs`}</title>
          </circle>
        ))}
        {points.map((p) => (
          <rect key={`b-${p.experimentId}`} className="trend-blamed-dot" x={x(index.get(p.experimentId)!) - 3} y={y(share(p)) - 3} width={6} height={6}>
            <title>{`${trendLabel(experiments[index.get(p.experimentId)!]!)}: blamed in ${p.blamedRuns} of ${p.experimentRuns} runs`}</title>
          </rect>
        ))}
      </svg>
      <table className="small role-trend-table">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col" className="num">h mean</th>
            <th scope="col" className="num">blamed</th>
          </tr>
        </thead>
        <tbody>
          {points.map((p) => (
            <tr key={p.experimentId} data-testid={`role-trend-${role}-${p.experimentId}`} title={trendLabel(experiments[index.get(p.experimentId)!]!)}>
              <td>{index.get(p.experimentId)! + 1}</td>
              <td className="num" data-testid={`role-trend-${role}-${p.experimentId}-h`} data-value={p.meanReward === null ? 'null' : String(p.meanReward)}>
                {p.meanReward === null ? '–' : p.meanReward.toFixed(2)}
              </td>
              <td className="num" data-testid={`role-trend-${role}-${p.experimentId}-blamed`} data-value={`${p.blamedRuns}/${p.experimentRuns}`}>
                {p.blamedRuns} / {p.experimentRuns}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
