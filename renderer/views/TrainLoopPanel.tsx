import type { ReactNode } from 'react';
import { flowlabCommand } from '../lib/commands.ts';
import { loopFinished, loopLine } from '../lib/trainLoopProgress.ts';
import { sftOn, type TrainLoopForm } from '../store/loop.ts';
import { useLab, useLabPick } from '../useLab.ts';

/** `flowlab train-loop`'s flags for the form's values (what the printed command says). */
export function trainLoopArgs(form: TrainLoopForm, workflowFile: string, model: string | null): string[] {
  return [
    'train-loop', workflowFile, '--dataset', form.dataset, '--split', form.split, '--heldout-split', form.heldoutSplit,
    ...(form.roles.length ? ['--roles', form.roles.join(',')] : []),
    '--group', String(form.group), '--iterations', String(form.iterations), '--limit', String(form.limit),
    '--heldout', String(form.heldout), '--heldout-samples', String(form.heldoutSamples), '--seed', String(form.seed),
    '--threads', String(form.threads), '--lr', String(form.lr), '--kl', String(form.kl), '--temperature', String(form.temperature),
    ...(form.entropy > 0 ? ['--entropy', String(form.entropy)] : []),
    ...(sftOn(form) ? [
      '--warm-start', String(form.warmStart), ...(form.sftMix ? ['--sft-mix'] : []), '--sft-steps', String(form.sftSteps), '--sft-lr', String(form.sftLr),
      ...(form.sftRoles.length ? ['--sft-roles', form.sftRoles.join(',')] : []),
      ...(form.sftPool > 0 ? ['--sft-pool', String(form.sftPool)] : []),
    ] : []),
    '--model', model ?? '<file.gguf>',
  ];
}

/** A real-valued field (learning rates, weights, temperature): any step. */
function Real({ label, field, min, max, testId, disabled = false }: { label: string; field: keyof TrainLoopForm; min: number; max: number; testId: string; disabled?: boolean }) {
  const { trainLoopForm: f, setTrainLoopForm } = useLabPick('trainLoopForm', 'setTrainLoopForm');
  const v = f[field] as number;
  return (
    <label className="stack">
      <span className="muted small">{label}</span>
      <input data-testid={testId} type="number" min={min} max={max} step="any" disabled={disabled} value={Number.isFinite(v) ? v : ''} onChange={(e) => setTrainLoopForm({ [field]: e.target.valueAsNumber })} />
    </label>
  );
}

function Num({ label, field, min, max, testId, disabled = false }: { label: string; field: keyof TrainLoopForm; min: number; max: number; testId: string; disabled?: boolean }) {
  const { trainLoopForm: f, setTrainLoopForm } = useLabPick('trainLoopForm', 'setTrainLoopForm');
  const v = f[field] as number;
  return (
    <label className="stack">
      <span className="muted small">{label}</span>
      <input data-testid={testId} type="number" min={min} max={max} step={1} disabled={disabled} value={Number.isFinite(v) ? v : ''} onChange={(e) => setTrainLoopForm({ [field]: e.target.valueAsNumber })} />
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
  const dbFile = useLab((s) => (s.appInfo.status === 'ready' ? s.appInfo.data.dbFile : null));
  const file = useLab((s) => s.editor.file);
  const workflowName = useLab((s) => s.editor.graph?.name ?? null);
  const roleModels = useLab((s) => s.roleModels);
  const base = (p: string) => p.split(/[\\/]/).pop() ?? p;
  const modelText = [
    ...(defaultModel ? [`default ${base(defaultModel)}`] : []),
    ...Object.entries(roleModels).filter(([role, m]) => m && roles?.some((r) => r.name === role)).map(([role, m]) => `${role} ${base(m)}`),
  ].join(', ');
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
        Each iteration samples G rollouts per task, scores them on the ladder and takes a policy step per role (a weight version chosen in Run is a role’s starting point).
      </p>
      {/* What the loop trains and with which models, in view (it took both from other views silently). */}
      <p className="small" data-testid="loop-workflow">
        Workflow: {workflowName ? <strong>{workflowName}</strong> : <span className="muted">none open</span>}
        {workflowName && <span className="muted"> ({file ?? 'unsaved, from the Editor'})</span>}{' '}
        <button type="button" className="link" onClick={() => setView('editor')}>
          change in Editor
        </button>
      </p>
      <p className="small" data-testid="loop-models">
        Models: {modelText || <span className="muted">none chosen</span>}{' '}
        <button type="button" className="link" onClick={() => setView('run')}>
          change in Run
        </button>
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
      <div className="row wrap" role="group" aria-label="Policy step">
        <Real label="Learning rate (--lr)" field="lr" min={0} max={1} testId="loop-lr" />
        <Real label="KL weight (--kl)" field="kl" min={0} max={100} testId="loop-kl" />
        <Real label="Temperature (--temperature)" field="temperature" min={0} max={5} testId="loop-temperature" />
        <Real label="Entropy bonus (--entropy, 0 = off)" field="entropy" min={0} max={1} testId="loop-entropy" />
      </div>
      <div className="row wrap" role="group" aria-label="SFT on the loop's own successes">
        <Num label="SFT warm start, iterations (--warm-start)" field="warmStart" min={0} max={10_000} testId="loop-warm-start" />
        <label className="small">
          <input type="checkbox" data-testid="loop-sft-mix" checked={f.sftMix} onChange={(e) => setTrainLoopForm({ sftMix: e.target.checked })} /> SFT before every policy step (--sft-mix)
        </label>
        <Num label="SFT steps (--sft-steps)" field="sftSteps" min={1} max={100} testId="loop-sft-steps" disabled={!sftOn(f)} />
        <Real label="SFT learning rate (--sft-lr)" field="sftLr" min={0} max={1} testId="loop-sft-lr" disabled={!sftOn(f)} />
        <Num label="SFT pool per class (--sft-pool, 0 = this iteration)" field="sftPool" min={0} max={1000} testId="loop-sft-pool" disabled={!sftOn(f)} />
        {!!roles?.length && (
          <span className="small" role="group" aria-label="Roles taking SFT steps">
            <span className="muted">SFT roles (none ticked: every trained role):</span>
            {roles.map((r) => (
              <label key={r.name}>
                {' '}
                <input
                  type="checkbox"
                  data-testid={`loop-sft-role-${r.name}`}
                  disabled={!sftOn(f)}
                  checked={f.sftRoles.includes(r.name)}
                  onChange={(e) => setTrainLoopForm({ sftRoles: e.target.checked ? [...f.sftRoles, r.name] : f.sftRoles.filter((x) => x !== r.name) })}
                />{' '}
                {r.name}
              </label>
            ))}
          </span>
        )}
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
