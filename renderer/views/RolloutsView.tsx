import { useEffect, useMemo } from 'react';
import type { RolloutGroup, RolloutsView as RolloutsData } from '../../core/api/client.ts';
import { groupLabel, groupModel, rolloutExperiments, SIGN_SYMBOL, SIGN_WORD, type RolloutColumn, type SignedBar, type Sign } from '../lib/rollouts.ts';
import { useLab, useLabPick, useLabStore } from '../useLab.ts';
import { shellWord } from '../lib/commands.ts';
import { groupExperiments, memberLabel } from '../lib/experimentGroups.ts';
import { experimentStatusLabel } from './format.ts';
import { LoadState, RefreshButton, Status } from './Status.tsx';
import { modelsLabel } from '../lib/vocabulary.ts';

/** The command the empty state suggests. */
export const ROLLOUTS_COMMAND = 'npm run flowlab -- rollouts examples/gsm8k-team.yaml --dataset gsm8k --limit 5 --group 4 --model <file.gguf>';

/**
 * Rollout groups: pick a rollouts experiment and one of its groups (a task); its G rollouts
 * stand side by side, each with its seed, score, and per learning role the reward h and the
 * group-relative advantage A; zero-spread groups are flagged. A click opens the run's trace.
 */
export function RolloutsView() {
  const { experiments, rolloutsExperimentId: selectedId, rollouts, selectRolloutsExperiment: select, refresh, chooseDefaultRollouts, rolloutsNoSignal, setView, setRunOptions } = useLabPick(
    'experiments', 'rolloutsExperimentId', 'rollouts', 'selectRolloutsExperiment', 'refresh', 'chooseDefaultRollouts', 'rolloutsNoSignal', 'setView', 'setRunOptions',
  );
  const dbFile = useLab((s) => (s.appInfo.status === 'ready' ? s.appInfo.data.dbFile : null));
  const store = useLabStore();
  const list = useMemo(() => (experiments.status === 'ready' ? rolloutExperiments(experiments.data) : []), [experiments]);

  // On entering the view, and when the newest rollouts experiment changes: reload the chosen
  // experiment, or open the default one when none is chosen (never a training iteration
  // without learning signal: store/loop.ts chooseDefaultRollouts).
  const newest = list[0]?.id;
  useEffect(() => {
    const current = store.getState().rolloutsExperimentId;
    if (current) void select(current);
    else if (newest) void chooseDefaultRollouts();
  }, [newest, select, store, chooseDefaultRollouts]);
  const startHere = () => {
    setRunOptions({ kind: 'rollouts' });
    setView('run');
  };

  const reload = () => {
    void refresh();
    if (selectedId) void select(selectedId);
  };

  return (
    <section className="view rollouts-view" aria-labelledby="rollouts-title">
      <header className="view-head">
        <h2 id="rollouts-title">Rollouts</h2>
        <p className="muted small">
          A<sub>ρ</sub> = (h<sub>ρ</sub> − mean) / (std + 10<sup>−6</sup>) of each role’s ladder reward within the task’s group; Flow-GRPO: the trajectory’s outcome
          normalised over the group, broadcast to every turn.
        </p>
        <RefreshButton onRefresh={reload} />
      </header>
      <LoadState state={experiments} what="experiments" />
      {experiments.status === 'ready' && list.length === 0 ? (
        <div className="empty" data-testid="rollouts-empty">
          <p>
            <strong>No rollouts experiments yet.</strong> A rollouts experiment samples G rollouts per task (distinct seeds, decoded together) and gives every
            learning role its own advantage.{' '}
            <button type="button" className="link" data-testid="rollouts-start-here" onClick={startHere}>
              Start one from Run
            </button>{' '}
            (kind “rollouts”), or from a terminal:
          </p>
          <pre>
            <code>{dbFile ? `${ROLLOUTS_COMMAND} --db ${shellWord(dbFile)}` : ROLLOUTS_COMMAND}</code>
          </pre>
          <p className="muted small">Then come back here (Alt+R refreshes) to compare a group’s rollouts side by side.</p>
        </div>
      ) : (
        <>
          <div className="row wrap">
            <label className="stack">
              <span className="muted small">Rollouts experiment</span>
              <select data-testid="rollouts-experiment" value={selectedId ?? ''} onChange={(e) => void select(e.target.value || null)}>
                <option value="">{list.length ? '— choose a rollouts experiment —' : 'no rollouts experiments'}</option>
                {groupExperiments(list).map((en) =>
                  en.type === 'single' ? (
                    <option key={en.key} value={en.experiment.id}>
                      {en.experiment.id} · {en.experiment.workflowName} · {en.experiment.runsDone}/{en.experiment.tasksPlanned} rollouts
                    </option>
                  ) : (
                    // A train loop's iterations under one heading.
                    <optgroup key={en.key} label={`${en.group.label} · ${en.group.workflows.join(', ')}`}>
                      {en.members.map((e) => (
                        <option key={e.id} value={e.id}>
                          {memberLabel(e)} · {e.id} · {e.runsDone}/{e.tasksPlanned} rollouts
                        </option>
                      ))}
                    </optgroup>
                  ),
                )}
              </select>
            </label>
            <button type="button" className="link" onClick={startHere}>
              Start rollouts from Run
            </button>
          </div>
          {!selectedId && rolloutsNoSignal && (
            <p className="note small" data-testid="rollouts-no-signal-default">
              Not opened by default: the training iterations tried have no learning signal (every rollout of every group scored alike). Pick one above to see them anyway.
            </p>
          )}
          {selectedId && <LoadState state={rollouts} what="the rollouts" />}
          {rollouts.status === 'ready' && rollouts.data.experimentId === selectedId && <RolloutsBody data={rollouts.data} />}
        </>
      )}
    </section>
  );
}

function RolloutsBody({ data }: { data: RolloutsData }) {
  const { rolloutGroup: chosen, selectRolloutGroup: selectGroup } = useLabPick('rolloutGroup', 'selectRolloutGroup');
  const group = data.groups.find((g) => g.index === chosen) ?? data.groups[0];
  const noSignal = data.groups.filter((g) => g.complete && g.noSignal).length;
  const complete = data.groups.filter((g) => g.complete).length;
  const models = useLab((s) => (s.experiments.status === 'ready' ? s.experiments.data.find((e) => e.id === data.experimentId)?.models : undefined));
  return (
    <>
      <p className="row wrap small rollouts-meta" data-testid="rollouts-meta">
        <Status label={experimentStatusLabel(data.status)} />
        <span>
          G = <strong>{data.group}</strong>
        </span>
        <span>temperature {data.temperature}</span>
        <span>
          mode <code>{data.mode}</code>
        </span>
        <span>learning roles {data.learningRoles.join(', ') || '–'}</span>
        <span data-testid="rollouts-models">models {modelsLabel(models)}</span>
        <span>
          {complete} / {data.plannedGroups} groups complete
        </span>
        <span>
          {noSignal} without learning signal
        </span>
      </p>
      {data.groups.length === 0 ? (
        <div className="empty small">
          <p>No rollouts stored yet for this experiment{data.status === 'running' ? ' (it is running: refresh to see groups as they finish)' : ''}.</p>
        </div>
      ) : (
        <div className="rollouts-grid">
          <nav className="group-list" aria-label="Groups (tasks)">
            <span className="muted small">Groups (tasks)</span>
            <ul>
              {data.groups.map((g) => (
                <li key={g.index}>
                  <button
                    type="button"
                    className={g === group ? 'run-item selected' : 'run-item'}
                    aria-pressed={g === group}
                    data-testid={`rollouts-group-${g.index}`}
                    onClick={() => selectGroup(g.index)}
                  >
                    {groupLabel(g)}
                  </button>
                </li>
              ))}
            </ul>
          </nav>
          {group && <GroupPanel data={data} group={group} />}
        </div>
      )}
    </>
  );
}

function GroupPanel({ data, group }: { data: RolloutsData; group: RolloutGroup }) {
  const openRunTrace = useLab((s) => s.openRunTrace);
  const model = useMemo(() => groupModel(data, group), [data, group]);
  return (
    <section className="group-panel" aria-labelledby="group-title" data-testid="rollouts-group-panel">
      <h3 id="group-title">
        Task {group.index} <code>{group.groupKey}</code>{' '}
        <span className="muted small">
          {group.rollouts.length} of {data.group} rollouts · {model.correct} correct · outcome mean {group.outcome.mean.toFixed(2)}
        </span>
      </h3>
      {model.flags.map((f) => (
        <p key={f} className={group.noSignal ? 'banner warn small' : 'note small'} role="note" data-testid={group.noSignal ? 'no-signal' : undefined}>
          <span aria-hidden="true">⚠ </span>
          {f}
        </p>
      ))}
      <ul className="legend">
        {model.roleStats.map((r) => (
          <li key={r.role}>
            <strong>{r.role}</strong> {r.text}
            {r.zeroSpread && <span className="tag">zero spread: no learning signal</span>}
          </li>
        ))}
        <li className="muted">
          ▲ positive / ▼ negative / = zero advantage; bars share one scale (±{model.scale.toFixed(2)}). Click a rollout to open its trace.
        </li>
      </ul>
      <div className="rollout-cols" style={{ gridTemplateColumns: `repeat(${model.columns.length}, minmax(11rem, 1fr))` }}>
        {model.columns.map((c) => (
          <RolloutCol key={c.runId} col={c} onOpen={() => void openRunTrace(data.experimentId, c.runId)} />
        ))}
      </div>
    </section>
  );
}

function RolloutCol({ col, onOpen }: { col: RolloutColumn; onOpen: () => void }) {
  return (
    <div className="rollout-col" role="group" aria-label={`Rollout ${col.label}`} data-testid={`rollout-col-${col.runId}`} onClick={onOpen} title={`${col.runId}: click to open the trace`}>
      <div className="rollout-head">
        <strong>{col.label}</strong>
        <span className={col.correct ? 'tone-ok' : 'tone-bad'}>{col.correct ? '✓ correct' : '✗ wrong'}</span>
        {col.simulated && <span className="tag sim">SIMULATED</span>}
      </div>
      <dl className="facts rollout-facts">
        <dt>seed</dt>
        <dd>{col.seed}</dd>
        <dt>score</dt>
        <dd>
          {col.score}
          {col.status !== 'completed' && <span className="muted small"> ({col.status})</span>}
        </dd>
      </dl>
      {col.roles.map((r) => (
        <div key={r.role} className="role-cell" data-testid={`rollout-role-${col.runId}-${r.role}`}>
          <div className="role-cell-head">
            <span>{r.role}</span>
            <span className="muted small">h {r.h}</span>
          </div>
          <Advantage label={`A ${r.role}`} value={r.a} sign={r.sign} bar={r.bar} note={r.zeroSpread ? 'zero spread' : undefined} />
        </div>
      ))}
      <div className="role-cell outcome-cell">
        <div className="role-cell-head">
          <span>outcome</span>
          <span className="muted small">Flow-GRPO</span>
        </div>
        <Advantage label="outcome A" value={col.outcome.a} sign={col.outcome.sign} bar={col.outcome.bar} />
      </div>
      <button
        type="button"
        className="link small"
        onClick={(e) => {
          e.stopPropagation();
          onOpen();
        }}
      >
        Open trace →
      </button>
    </div>
  );
}

/** A signed advantage: symbol, signed number and a bar around zero (hatched when negative). */
function Advantage({ label, value, sign, bar, note }: { label: string; value: string; sign: Sign; bar: SignedBar; note?: string | undefined }) {
  return (
    <div className={`adv adv-${sign}`} title={`${label}: ${value} (${SIGN_WORD[sign]})${note ? `, ${note}` : ''}`}>
      <span className="adv-value">
        <span aria-hidden="true">{SIGN_SYMBOL[sign]}</span> A {value}
        <span className="sr-only"> ({SIGN_WORD[sign]})</span>
      </span>
      <span className="adv-track" aria-hidden="true">
        <span className="adv-axis" />
        {bar.widthPct > 0 && <span className={`adv-bar adv-bar-${bar.sign}`} style={bar.sign === 'pos' ? { left: '50%', width: `${bar.widthPct}%` } : { right: '50%', width: `${bar.widthPct}%` }} />}
      </span>
      {note && <span className="muted small">{note}</span>}
    </div>
  );
}
