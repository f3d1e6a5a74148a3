import { useEffect, useMemo } from 'react';
import { workflowElements } from '../lib/elements.ts';
import { FAULT_HELP, FAULT_KINDS } from '../lib/faults.ts';
import { isFinished, progressOf, runTally, tallyText, watchedNodes } from '../lib/liveRun.ts';
import { useLab, useLabPick } from '../useLab.ts';
import { useShortcut } from '../useShortcut.ts';
import { GraphCanvas } from './lazy.tsx';
import { LiveLegend } from './Legend.tsx';
import { RoleModels } from './RoleModels.tsx';
import { RoleExtras, RunKind } from './RunOptions.tsx';
import { MAX_LIMIT, MAX_SEED, splitFor } from '../store/run.ts';
import { runTaskLabel } from '../lib/vocabulary.ts';

/** Run the open workflow on a dataset: the form, progress, the graph lighting up, cancel. */
export function RunView() {
  const graph = useLab((s) => s.editor.graph);
  const hasText = useLab((s) => s.editor.text.trim().length > 0);
  const setView = useLab((s) => s.setView);
  return (
    <section className="view run-view" aria-labelledby="run-title">
      <header className="view-head">
        <h2 id="run-title">Run {graph?.name ? <code>{graph.name}</code> : null}</h2>
      </header>
      {!hasText && (
        <div className="empty" data-testid="run-empty">
          <p>
            <strong>No workflow to run.</strong> Open one in the{' '}
            <button type="button" className="link" onClick={() => setView('editor')}>
              Editor (Alt+1)
            </button>{' '}
            first — an example works.
          </p>
        </div>
      )}
      <div className="run-grid">
        <div className="run-form">
          <RunForm />
          <RunKind />
          <RoleModels />
          <RoleExtras />
          <Faults />
          <RunControls />
        </div>
        <div className="run-live">
          <Progress />
          <LiveGraph />
        </div>
      </div>
    </section>
  );
}

function RunForm() {
  const { datasets, runForm: form, setRunForm } = useLabPick('datasets', 'runForm', 'setRunForm');
  const list = datasets.status === 'ready' ? datasets.data : [];
  const dataset = list.find((d) => d.name === form.dataset);
  return (
    <fieldset>
      <legend>Tasks</legend>
      <label className="row">
        <span>Dataset</span>
        <select
          data-testid="run-dataset"
          value={form.dataset}
          onChange={(e) => {
            const d = list.find((x) => x.name === e.target.value);
            setRunForm({ dataset: e.target.value, split: splitFor(e.target.value, d?.splits ?? [], form.splitByDataset) });
          }}
        >
          {!list.length && <option value="">{datasets.status === 'loading' ? 'loading…' : 'no datasets'}</option>}
          {list.map((d) => (
            <option key={d.name} value={d.name} title={d.message ?? d.describe}>
              {d.name}
              {d.available ? '' : ' (files missing)'}
            </option>
          ))}
        </select>
      </label>
      {dataset && !dataset.available && (
        <p className="note error small" role="alert">
          {dataset.message ?? `The ${dataset.name} files were not found.`}
        </p>
      )}
      {dataset && !dataset.available && dataset.get && (
        <p className="note small" data-testid="run-dataset-get">
          Get it with <code>{dataset.get.command}</code> ({dataset.get.bytes >= 1e6 ? `${(dataset.get.bytes / 1e6).toFixed(1)} MB` : `${Math.max(1, Math.round(dataset.get.bytes / 1e3))} kB`}, licence {dataset.get.licence};
          from {dataset.get.source}; sha256-checked) into <code>{dataset.get.folder}</code>. The procedural <code>learn</code> datasets need no files.
        </p>
      )}
      {dataset && <p className="muted small">{dataset.describe}</p>}
      <label className="row">
        <span>Split</span>
        <select data-testid="run-split" value={form.split} onChange={(e) => setRunForm({ split: e.target.value })}>
          {(dataset?.splits ?? []).map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      <label className="row">
        <span>Limit (tasks)</span>
        <input data-testid="run-limit" type="number" min={1} max={MAX_LIMIT} step={1} value={Number.isFinite(form.limit) ? form.limit : ''} onChange={(e) => setRunForm({ limit: e.target.valueAsNumber })} />
      </label>
      <label className="row">
        <span>Seed</span>
        <input data-testid="run-seed" type="number" min={0} max={MAX_SEED} step={1} value={Number.isFinite(form.seed) ? form.seed : ''} onChange={(e) => setRunForm({ seed: e.target.valueAsNumber })} />
      </label>
    </fieldset>
  );
}

function Faults() {
  const faults = useLab((s) => s.runForm.faults);
  const roles = useLab((s) => s.editor.graph?.roles);
  const { addFault, updateFault, removeFault } = useLabPick('addFault', 'updateFault', 'removeFault');
  return (
    <fieldset className="faults" data-testid="faults">
      <legend>
        <span className="tag sim">SIMULATED</span> fault injection (optional)
      </legend>
      <p className="muted small">Injected faults are marked simulated in every view; credit is scored against them like real failures.</p>
      {faults.map((f, i) => (
        <div className="row wrap" key={i} data-testid={`fault-row-${i}`}>
          <select aria-label={`Fault ${i + 1} role`} data-testid={`fault-role-${i}`} value={f.role} onChange={(e) => updateFault(i, { role: e.target.value })}>
            {!roles?.some((r) => r.name === f.role) && <option value={f.role}>{f.role || '— role —'}</option>}
            {(roles ?? []).map((r) => (
              <option key={r.name} value={r.name}>
                {r.name}
              </option>
            ))}
          </select>
          <select aria-label={`Fault ${i + 1} kind`} data-testid={`fault-kind-${i}`} value={f.kind} onChange={(e) => updateFault(i, { kind: e.target.value as (typeof FAULT_KINDS)[number] })}>
            {FAULT_KINDS.map((k) => (
              <option key={k} value={k} title={FAULT_HELP[k]}>
                {k}
              </option>
            ))}
          </select>
          <label>
            rate{' '}
            <input aria-label={`Fault ${i + 1} rate`} data-testid={`fault-rate-${i}`} type="number" min={0} max={1} step={0.05} value={Number.isFinite(f.rate) ? f.rate : ''} onChange={(e) => updateFault(i, { rate: e.target.valueAsNumber })} />
          </label>
          <button type="button" aria-label={`Remove fault ${i + 1}`} onClick={() => removeFault(i)}>
            ✕
          </button>
          <span className="muted small">{FAULT_HELP[f.kind]}</span>
        </div>
      ))}
      <button type="button" data-testid="fault-add" onClick={() => addFault()} disabled={!roles?.length}>
        Add simulated fault
      </button>
    </fieldset>
  );
}

function RunControls() {
  const { live, starting, runError, startRun, cancelRun, runRequest, serverDown } = useLabPick('live', 'starting', 'runError', 'startRun', 'cancelRun', 'runRequest', 'serverDown');
  // Recomputed on any change of what it reads.
  useLab((s) => s.runForm);
  useLab((s) => s.roleModels);
  useLab((s) => s.defaultModel);
  useLab((s) => s.editor.validation);
  const req = runRequest();
  const running = !!live && !isFinished(live);
  useShortcut('startRun', () => void startRun());
  return (
    <div className="run-controls">
      {!req.ok && (
        <ul className="problems small" data-testid="run-problems">
          {req.problems.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      )}
      {req.ok && (
        // The kind the experiment is stored as, in the CLI's words (a run with SIMULATED faults is a blame-eval).
        <p className="note small" data-testid="run-starts-kind" data-kind={runKindOf(req.request)}>
          Starts a <strong>{runKindOf(req.request)}</strong> experiment, as <code>flowlab {runKindOf(req.request)}</code> does
          {req.request.inject?.length ? (
            <>
              {' '}with <span className="tag sim">SIMULATED</span> faults {req.request.inject.join(', ')}
            </>
          ) : null}
        </p>
      )}
      <div className="row">
        <button type="button" className="primary" data-testid="run-start" disabled={!req.ok || starting || running || serverDown} onClick={() => void startRun()} title={serverDown ? 'The connection to the lab server is lost: start again once it is back' : 'Start (Ctrl+Enter)'}>
          {starting ? 'Starting…' : 'Start'}
        </button>
        <button type="button" data-testid="run-cancel" disabled={!running || serverDown} onClick={() => void cancelRun()} title="Cancel (Alt+C)">
          Cancel
        </button>
      </div>
      {runError && (
        <p className="note error" role="alert" data-testid="run-error">
          <span aria-hidden="true">✗</span> {runError}
        </p>
      )}
    </div>
  );
}

function Progress() {
  const { live, starting, openExperimentTraces, serverDown } = useLabPick('live', 'starting', 'openExperimentTraces', 'serverDown');
  // A run that starts is brought into view (in one column, below the form, it was off screen).
  const experimentId = live?.experimentId;
  useEffect(() => {
    if (starting || experimentId) document.querySelector('.run-live')?.scrollIntoView?.({ block: 'nearest' });
  }, [starting, experimentId]);
  if (!live && starting) {
    return (
      <div className="empty" data-testid="run-starting" role="status">
        <p>Starting: the host validates the workflow, plans the tasks and loads the models…</p>
      </div>
    );
  }
  if (!live) {
    return (
      <div className="empty" data-testid="run-idle">
        <p>Nothing running. Pick a dataset and models, then press Start (Ctrl+Enter). Nodes light up here as they run.</p>
      </div>
    );
  }
  const tally = runTally(live);
  const pct = Math.round(progressOf(tally) * 100);
  const finished = isFinished(live);
  return (
    <div className="progress" data-testid="run-status" data-status={live.status} data-connection={serverDown ? 'lost' : 'ok'}>
      <div className="row wrap">
        <strong>
          <code>{live.experimentId}</code>
        </strong>
        <span className={`status tone-${live.status === 'completed' ? 'ok' : live.status === 'failed' ? 'bad' : live.status === 'cancelled' ? 'muted' : 'busy'}`}>{live.status}</span>
        {serverDown && (
          <span className="status tone-bad connection-lost" data-testid="run-connection-lost" role="alert">
            ⚠ connection to the lab server lost: what happened to the run is unknown until it is back
          </span>
        )}
        {live.simulatedNodes > 0 && <span className="tag sim">SIMULATED faults: {live.simulatedNodes}</span>}
      </div>
      <progress data-testid="run-progress" max={Math.max(1, tally.total)} value={tally.done} aria-label={`${tally.done} of ${tally.total} runs`} />
      <p className="small" data-testid="run-tally">
        {tallyText(tally)} ({pct}%)
        {live.message ? ` · ${live.message}` : ''}
      </p>
      {finished && (
        <button
          type="button"
          data-testid="run-open-trace"
          onClick={() => void openExperimentTraces(live.experimentId)}
          title="Open the experiment in Trace, with its first wrong run selected"
        >
          Open its traces
        </button>
      )}
    </div>
  );
}

function LiveGraph() {
  const editorGraph = useLab((s) => s.editor.graph);
  const { runGraph, live } = useLabPick('runGraph', 'live');
  // While a run is shown, draw the workflow it runs; before any, the editor's.
  const graph = live ? (runGraph ?? editorGraph) : editorGraph;
  const theme = useLab((s) => s.theme);
  const elements = useMemo(() => (graph ? workflowElements(graph) : []), [graph]);
  const nodes = useMemo(() => watchedNodes(live), [live]);
  if (!graph) return null;
  const watched = live?.watching ? live.runs[live.watching] : undefined;
  return (
    <div className="live-graph">
      <p className="muted small" data-testid="run-watching">
        {watched ? `Watching task run ${watched.runId}${watched.taskIndex !== undefined ? ` (task ${runTaskLabel(watched.taskIndex, live?.group ?? 0)})` : ''}${watched.finished ? ` — ${watched.status}` : ''}` : 'The graph lights up as nodes run.'}
      </p>
      <GraphCanvas elements={elements} theme={theme} label="Live workflow graph" live={nodes} />
      <LiveLegend theme={theme} />
    </div>
  );
}

/** The kind a start request makes, as the store and `flowlab ls --kind` name it: rollouts, blame-eval (faults injected) or run. */
export function runKindOf(r: { kind?: 'run' | 'rollouts'; inject?: readonly string[] }): 'run' | 'blame-eval' | 'rollouts' {
  return r.kind === 'rollouts' ? 'rollouts' : r.inject?.length ? 'blame-eval' : 'run';
}
