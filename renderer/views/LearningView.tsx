import { useEffect, useMemo } from 'react';
import { beforeAfter, chartSeries, coevolution, currentLoop, hyperText, learningRoles, lineageRows, RUNG_COLUMNS, rungRows, signed, TRAIN_LOOP_COMMAND } from '../lib/learning.ts';
import { useLab, useLabPick } from '../useLab.ts';
import { shellWord } from '../lib/commands.ts';
import { TrainLoopPanel } from './TrainLoopPanel.tsx';
import { CompareTable } from './ExperimentParts.tsx';
import { heldoutChangeKey } from '../store/learning.ts';
import { CoevolutionChart, LearningChart } from './lazy.tsx';
import { LoadState, RefreshButton } from './Status.tsx';
import { TableHead } from './TableHead.tsx';

/** How often the view reloads while shown (live while `flowlab train-loop` writes to the same database). */
export const LEARNING_REFRESH_MS = 2000;

/**
 * Learning: the newest train loop's roles on one chart when it trained several (co-evolution,
 * e.g. a designer and its executors); per role, its newest train loop's mean reward and KL per
 * iteration (chart), its rungs per iteration (table), its weight versions with their lineage, and
 * the held-out before/after comparison. Reloads every 2 s while shown.
 */
export function LearningView() {
  const { learning, weightVersions: versions, learningRole: chosen, setLearningRole: setRole, loadLearning, theme, heldoutChanges } = useLabPick(
    'learning', 'weightVersions', 'learningRole', 'setLearningRole', 'loadLearning', 'theme', 'heldoutChanges',
  );

  useEffect(() => {
    void loadLearning();
    const t = window.setInterval(() => {
      if (document.visibilityState !== 'hidden') void loadLearning();
    }, LEARNING_REFRESH_MS);
    return () => window.clearInterval(t);
  }, [loadLearning]);

  const dbFile = useLab((s) => (s.appInfo.status === 'ready' ? s.appInfo.data.dbFile : null));
  const curves = learning.status === 'ready' ? learning.data : undefined;
  const versionList = versions.status === 'ready' ? versions.data : undefined;
  const roles = useMemo(() => learningRoles(curves, versionList), [curves, versionList]);
  const role = roles.includes(chosen) ? chosen : roles[0];
  const loop = useMemo(() => currentLoop(curves?.roles.find((r) => r.role === role)), [curves, role]);
  const series = useMemo(() => chartSeries(loop), [loop]);
  const rows = rungRows(loop);
  const lineage = role && versionList ? lineageRows(versionList, role) : [];
  const ba = beforeAfter(loop);
  const change = ba.before && ba.after ? heldoutChanges[heldoutChangeKey(ba.before, ba.after)] : undefined;
  const together = useMemo(() => coevolution(curves, versionList), [curves, versionList]);

  return (
    <section className="view learning-view" aria-labelledby="learning-title">
      <header className="view-head">
        <h2 id="learning-title">Learning</h2>
        <p className="muted small">Each trained role’s own weights: mean ladder reward and KL to the starting weights per train-loop iteration. Live every 2 s.</p>
        <RefreshButton onRefresh={loadLearning} title="Refresh" />
      </header>
      <TrainLoopPanel />
      <LoadState state={learning} what="learning curves" />
      <LoadState state={versions} what="weight versions" />
      {learning.status === 'ready' && versions.status === 'ready' && roles.length === 0 && (
        <div className="empty" data-testid="learning-empty">
          <p>
            <strong>No trained weights yet.</strong> The train loop samples rollouts, scores them on the reward ladder and takes a policy step per role, writing a new
            GGUF version each iteration. Start one above, or from a terminal (with <code>flowlab serve</code> on the same database this view follows it live):
          </p>
          <pre>
            <code>{dbFile ? `${TRAIN_LOOP_COMMAND} --db ${shellWord(dbFile)}` : TRAIN_LOOP_COMMAND}</code>
          </pre>
        </div>
      )}
      {together && together.roles.length > 1 && (
        <section aria-labelledby="coevolution-title" className="coevolution">
          <h3 id="coevolution-title">
            Co-evolution: {together.roles.map((r) => r.role).join(' and ')} <span className="muted small">(loop <code>{together.loopId}</code>, each role its own weights, one harness signal)</span>
          </h3>
          <CoevolutionChart series={together} theme={theme} />
        </section>
      )}
      {role && (
        <>
          <div className="tabs learning-roles" role="tablist" aria-label="Roles">
            {roles.map((r) => (
              <button key={r} type="button" role="tab" data-testid={`learning-role-${r}`} aria-selected={r === role} onClick={() => setRole(r)}>
                {r}
              </button>
            ))}
          </div>
          {loop ? (
            <>
              <p className="muted small">
                loop <code>{loop.loopId}</code> · {loop.points.length} iteration{loop.points.length === 1 ? '' : 's'} · {hyperText(loop.hyper)}
              </p>
              <LearningChart role={role} series={series} theme={theme} />
              <table className="learning-rungs" aria-label={`Rungs per iteration of ${role}`}>
                <TableHead
                  columns={[
                    'iter', 'reward',
                    ...RUNG_COLUMNS.map(([name, short]) => ({ key: name, label: short, title: name })),
                    'KL', 'tok/s',
                    { label: 's sample / train / write', title: 'seconds: sampling / training / write+reload' },
                  ]}
                />
                <tbody>
                  {rows.map((r) => (
                    <tr key={r.versionId}>
                      <td>{r.iteration}</td>
                      <td>{r.reward}</td>
                      {r.rungs.map((v, i) => (
                        <td key={RUNG_COLUMNS[i]![0]}>{v}</td>
                      ))}
                      <td>{r.kl}</td>
                      <td>{r.tokensPerSecond}</td>
                      <td>{r.seconds}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          ) : (
            <p className="muted" data-testid="learning-chart">
              No train-loop iterations for {role} (its versions come from offline steps).
            </p>
          )}
          <div className="learning-before-after" data-testid="learning-before-after">
            <h3>Held-out before / after</h3>
            {ba.note && <p className="muted small">{ba.note}</p>}
            {(ba.before || ba.after) && (
              <table>
                <TableHead columns={['', 'mean score', `mean reward (${role})`, 'accuracy', 'best constant · answers', 'runs', 'experiment']} />
                <tbody>
                  {(['before', 'after'] as const).map((k) => {
                    const s = ba[k];
                    return (
                      <tr key={k}>
                        <th scope="row">{k}</th>
                        <td>{s ? s.score.toFixed(2) : '–'}</td>
                        <td>{s?.reward != null ? s.reward.toFixed(2) : '–'}</td>
                        <td>{s?.accuracy != null ? s.accuracy.toFixed(2) : '–'}</td>
                        <td data-testid={`learning-guard-${k}`}>
                          {s?.guard ? `${s.guard.bestConstant ? s.guard.bestConstant.accuracy.toFixed(2) : '–'} · ${s.guard.distinctAnswers}` : '–'}
                          {s?.guard?.constant && <strong className="error"> CONSTANT {JSON.stringify(s.guard.constant.answer)} {(100 * s.guard.constant.share).toFixed(1)}%</strong>}
                        </td>
                        <td>{s ? s.runs : '–'}</td>
                        <td>{s ? <code>{s.experimentId}</code> : '–'}</td>
                      </tr>
                    );
                  })}
                  <tr>
                    <th scope="row">change</th>
                    <td>{signed(ba.deltaScore)}</td>
                    <td>{signed(ba.deltaReward)}</td>
                    <td />
                    <td />
                    <td />
                    <td />
                  </tr>
                </tbody>
              </table>
            )}
            {change && (
              <div className="learning-heldout-change" data-testid="learning-heldout-change">
                <h4>
                  Held-out change, paired <span className="muted small">(after − before, as <code>flowlab compare {ba.before!.experimentId} {ba.after!.experimentId}</code> prints it)</span>
                </h4>
                <LoadState state={change} what="the held-out comparison" />
                {change.status === 'ready' && <CompareTable view={change.data} />}
              </div>
            )}
          </div>
          <div data-testid="learning-versions">
            <h3>Weight versions of {role}</h3>
            <ol className="learning-versions">
              {lineage.map((v) => (
                <li key={v.id} data-testid={`version-${v.id}`} style={{ marginLeft: `${Math.min(v.depth, 12) * 0.6}rem` }}>
                  <code>{v.id}</code> · iteration {v.iteration} · parent {v.parent === '–' ? '–' : <code>{v.parent}</code>}
                  <br />
                  <span className="muted small">
                    {v.path}
                    {v.hyper && v.hyperChanged && ` · ${v.hyper}`}
                  </span>
                </li>
              ))}
            </ol>
          </div>
        </>
      )}
    </section>
  );
}
