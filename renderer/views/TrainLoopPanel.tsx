import type { ReactNode } from 'react';
import { flowlabCommand } from '../lib/commands.ts';
import { loopFinished, loopLine } from '../lib/trainLoopProgress.ts';
import type { TrainLoopForm } from '../store/loop.ts';
import { useLab, useLabPick } from '../useLab.ts';

/** `flowlab train-loop`'s flags for the form's values (what the printed command says). */
export function trainLoopArgs(form: TrainLoopForm, workflowFile: string, model: string | null): string[] {
  return [
    'train-loop', workflowFile, '--dataset', form.dataset, '--split', form.split, '--heldout-split', form.heldoutSplit,
    ...(form.roles.length ? ['--roles', form.roles.join(',')] : []),
    '--group', String(form.group), '--iterations', String(form.iterations), '--limit', String(form.limit),
    '--heldout', String(form.heldout), '--heldout-samples', String(form.heldoutSamples), '--seed', String(form.seed),
    '--threads', String(form.threads), '--model', model ?? '<file.gguf>',
  ];
}

function Num({ label, field, min, max, testId }: { label: string; field: keyof TrainLoopForm; min: number; max: number; testId: string }) {
  const { trainLoopForm: f, setTrainLoopForm } = useLabPick('trainLoopForm', 'setTrainLoopForm');
  const v = f[field] as number;
  return (
    <label className="stack">
      <span className="muted small">{label}</span>
      <input data-testid={testId} type="number" min={min} max={max} step={1} value={Number.isFinite(v) ? v : ''} onChange={(e) => setTrainLoopForm({ [field]: e.target.valueAsNumber })} />
    </label>
  );
}

/**
 * Starts `flowlab train-loop` from the window (the open workflow, the Run form's models and
 * weight versions) through `startTrainLoop`, and follows the loop live from its pushed events:
 * the iteration in flight and its rollouts, each iteration's score, held-out before and after.
 */
export function TrainLoopPanel() {
  const { trainLoopForm: f, setTrainLoopForm, trainLoopRequest, startTrainLoop, cancelTrainLoop, loopStarting, loopError, trainLoops, watchedLoop, datasets, defaultModel, setView } = useLabPick(
    'trainLoopForm', 'setTrainLoopForm', 'trainLoopRequest', 'startTrainLoop', 'cancelTrainLoop', 'loopStarting', 'loopError', 'trainLoops', 'watchedLoop', 'datasets', 'defaultModel', 'setView',
  );
  const roles = useLab((s) => s.editor.graph?.roles);
  useLab((s) => s.editor.text);
  useLab((s) => s.roleModels);
  const dbFile = useLab((s) => (s.appInfo.status === 'ready' ? s.appInfo.data.dbFile : null));
  const file = useLab((s) => s.editor.file);
  const req = trainLoopRequest();
  const list = datasets.status === 'ready' ? datasets.data : [];
  const dataset = list.find((d) => d.name === f.dataset);
  const loop = watchedLoop ? trainLoops[watchedLoop] : undefined;
  const running = !!loop && !loopFinished(loop);
  const splitSelect = (testId: string, key: 'split' | 'heldoutSplit') => (
    <select data-testid={testId} value={f[key]} onChange={(e) => setTrainLoopForm({ [key]: e.target.value })}>
      {(dataset?.splits ?? [f[key]]).map((s) => (
        <option key={s} value={s}>
          {s}
        </option>
      ))}
    </select>
  );
  const field = (label: string, control: ReactNode) => (
    <label className="stack">
      <span className="muted small">{label}</span>
      {control}
    </label>
  );
  return (
    <details className="train-loop-panel" data-testid="train-loop-panel" open={running || !!loop || undefined}>
      <summary>Start a train loop from here</summary>
      <p className="muted small">
        Trains the workflow open in the Editor with the models chosen in{' '}
        <button type="button" className="link" onClick={() => setView('run')}>
          Run
        </button>{' '}
        (a weight version chosen there is a role’s starting point). Each iteration samples G rollouts per task, scores them on the ladder and takes a policy step per role.
      </p>
      <div className="row wrap">
        {field(
          'Dataset',
          <select data-testid="loop-dataset" value={f.dataset} onChange={(e) => {
            const d = list.find((x) => x.name === e.target.value);
            setTrainLoopForm({ dataset: e.target.value, split: d?.splits.includes('train') ? 'train' : (d?.splits[0] ?? ''), heldoutSplit: d?.splits.includes('heldout') ? 'heldout' : (d?.splits.at(-1) ?? '') });
          }}>
            {!list.some((d) => d.name === f.dataset) && <option value={f.dataset}>{f.dataset}</option>}
            {list.map((d) => (
              <option key={d.name} value={d.name}>
                {d.name}
              </option>
            ))}
          </select>,
        )}
        {field('Split', splitSelect('loop-split', 'split'))}
        {field('Held-out split', splitSelect('loop-heldout-split', 'heldoutSplit'))}
        <Num label="Iterations" field="iterations" min={1} max={10_000} testId="loop-iterations" />
        <Num label="Tasks per iteration" field="limit" min={1} max={10_000} testId="loop-limit" />
        <Num label="Rollouts per task (G)" field="group" min={1} max={64} testId="loop-group" />
        <Num label="Held-out tasks" field="heldout" min={0} max={10_000} testId="loop-heldout" />
        <Num label="Held-out samples" field="heldoutSamples" min={1} max={64} testId="loop-heldout-samples" />
        <Num label="Seed" field="seed" min={0} max={2_147_483_647} testId="loop-seed" />
        <Num label="Threads" field="threads" min={1} max={256} testId="loop-threads" />
      </div>
      {!!roles?.length && (
        <div className="row wrap small" role="group" aria-label="Roles trained">
          <span className="muted">Roles trained (none ticked: every agent role):</span>
          {roles.map((r) => (
            <label key={r.name}>
              <input
                type="checkbox"
                data-testid={`loop-role-${r.name}`}
                checked={f.roles.includes(r.name)}
                onChange={(e) => setTrainLoopForm({ roles: e.target.checked ? [...f.roles, r.name] : f.roles.filter((x) => x !== r.name) })}
              />{' '}
              {r.name}
            </label>
          ))}
        </div>
      )}
      {!req.ok && (
        <ul className="problems small" data-testid="loop-problems">
          {req.problems.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      )}
      <div className="row">
        <button type="button" className="primary" data-testid="loop-start" disabled={!req.ok || loopStarting || running} onClick={() => void startTrainLoop()}>
          {loopStarting ? 'Starting…' : 'Start train loop'}
        </button>
        <button type="button" data-testid="loop-cancel" disabled={!running} onClick={() => loop && void cancelTrainLoop(loop.loopId)} title="Stops after the iteration in flight; resume it later from Experiments">
          Cancel
        </button>
      </div>
      <p className="muted small">
        From a terminal{file ? ` (the workflow as saved in ${file})` : ''}: <code data-testid="loop-command">{flowlabCommand(trainLoopArgs(f, file ?? '<workflow.yaml>', defaultModel), dbFile)}</code>
      </p>
      {loopError && (
        <p className="note error" role="alert" data-testid="loop-error">
          <span aria-hidden="true">✗</span> {loopError}
        </p>
      )}
      {loop && (
        <div className="progress" data-testid="loop-status" data-status={loop.status} data-done={loop.done}>
          <p className="row wrap">
            <strong>
              <code>{loop.loopId}</code>
            </strong>
            <span className="small" data-testid="loop-line">
              {loopLine(loop)}
            </span>
          </p>
          <progress max={Math.max(1, loop.iterations)} value={loop.done} aria-label={`${loop.done} of ${loop.iterations} iterations`} />
          {loop.rollouts && <progress data-testid="loop-rollouts" max={Math.max(1, loop.rollouts.total)} value={loop.rollouts.done} aria-label={`iteration ${loop.rollouts.iteration}: ${loop.rollouts.done} of ${loop.rollouts.total} rollouts`} />}
          {loop.points.length > 0 && (
            <ul className="plain small" data-testid="loop-iterations-list">
              {loop.points.map((p) => (
                <li key={p.iteration}>
                  iteration {p.iteration}: score {p.score.toFixed(2)} · <code>{p.experimentId}</code>
                  {Object.keys(p.versions).length > 0 && ` · versions ${Object.entries(p.versions).map(([r, v]) => `${r} ${v}`).join(', ')}`}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </details>
  );
}
