/**
 * The Run view: the form (dataset, split, limit, seed, SIMULATED faults), starting and
 * cancelling, and the live state folded from pushed events. Events are queued and applied once
 * per animation frame (deps.schedule), so a burst of `node` events is one store update.
 */
import { isExperimentLabEvent, isTrainLoopEvent } from '../../core/api/client.ts';
import type { ExperimentLabEvent, LabEvent, StartRunRequest } from '../../core/api/lab.ts';
import { faultSpecs, type FaultRow } from '../lib/faults.ts';
import { graphOf } from '../lib/graphEdits.ts';
import { userMessage } from '../lib/messages.ts';
import { applyLabEvents, isFinished, plannedRuns, startLiveRun, type LiveRun } from '../lib/liveRun.ts';
import type { DocGraph } from '../lib/workflowGraph.ts';
import { load } from './loadable.ts';
import type { SliceContext } from './types.ts';

export interface RunForm {
  dataset: string;
  split: string;
  limit: number;
  seed: number;
  faults: FaultRow[];
  /** The split last chosen for each dataset, so switching datasets back restores it (see splitFor). */
  splitByDataset?: Record<string, string>;
}

/** The largest seed the host accepts (StartRunRequest: 0..2^31-1). */
export const MAX_SEED = 2 ** 31 - 1;
/** The most tasks one run may plan (StartRunRequest: 1..10000). */
export const MAX_LIMIT = 10_000;

/**
 * The split to show after switching to a dataset with `splits`: the one last chosen for it, else
 * `test` when it has one (what the CLI's examples run), else its first. Never a split it lacks.
 */
export function splitFor(dataset: string, splits: readonly string[], remembered: Readonly<Record<string, string>> = {}): string {
  const last = remembered[dataset];
  if (last !== undefined && splits.includes(last)) return last;
  return splits.includes('test') ? 'test' : (splits[0] ?? '');
}

export interface RunSlice {
  runForm: RunForm;
  live: LiveRun | null;
  /** The graph of the workflow being run (drawn with live node states), whatever the editor holds now. */
  runGraph: DocGraph | null;
  /** startRun in flight. */
  starting: boolean;
  /** Why the last start or cancel failed. */
  runError: string | null;
  setRunForm(patch: Partial<Omit<RunForm, 'faults'>>): void;
  addFault(row?: Partial<FaultRow>): void;
  updateFault(index: number, patch: Partial<FaultRow>): void;
  removeFault(index: number): void;
  /** The request startRun would send now, or the reasons it cannot be sent. */
  runRequest(): { ok: true; request: StartRunRequest } | { ok: false; problems: string[] };
  startRun(): Promise<void>;
  cancelRun(): Promise<void>;
  /** Queues a pushed event; applied before the next paint. */
  receive(event: LabEvent): void;
  /** Re-attaches to an experiment the host is already running (after a reload). */
  attachActiveRun(): Promise<void>;
}

/** Adds this slice to the lab state (store/types.ts). */
declare module './types.ts' {
  interface LabState extends RunSlice {}
}

export function createRunSlice({ api, set, get, deps }: SliceContext): RunSlice {
  const queue: ExperimentLabEvent[] = [];
  let flushScheduled = false;
  /** Recent events of experiments not watched (an answer to startRun may come after its first events). */
  const unclaimed: ExperimentLabEvent[] = [];
  const UNCLAIMED_LIMIT = 2000;
  /** Refreshes the stored lists at most once per REFRESH_EVERY_MS while runs finish. */
  let refreshPending = false;
  const REFRESH_EVERY_MS = 1500;
  const refreshSoon = () => {
    if (refreshPending) return;
    refreshPending = true;
    void get().refresh();
    deps.delay(() => {
      refreshPending = false;
    }, REFRESH_EVERY_MS);
  };

  const flush = () => {
    flushScheduled = false;
    const events = queue.splice(0);
    if (!events.length) return;
    let live = get().live;
    // Follow an experiment started elsewhere (another window) when nothing is being watched.
    const first = events.find((e) => e.type === 'experiment' && e.status === 'running');
    if (first && (!live || isFinished(live)) && first.experimentId !== live?.experimentId) {
      live = startLiveRun(first.experimentId);
      if (!get().starting) void loadRunGraph(first.experimentId);
    }
    const wasFinished = isFinished(live);
    const next = applyLabEvents(live, events);
    for (const e of events) if (e.experimentId !== next?.experimentId) unclaimed.push(e);
    if (unclaimed.length > UNCLAIMED_LIMIT) unclaimed.splice(0, unclaimed.length - UNCLAIMED_LIMIT);
    if (next !== get().live) set({ live: next });
    // Some run finished (or the experiment did): the lists behind the other views are stale.
    if (next && !wasFinished && isFinished(next)) void get().refresh();
    else if (next && events.some((e) => e.type === 'run' && e.experimentId === next.experimentId)) refreshSoon();
  };

  /** Draws an experiment started elsewhere with its own stored workflow. */
  const loadRunGraph = async (experimentId: string) => {
    set({ runGraph: null });
    const detail = await load(() => api.getExperiment({ id: experimentId }));
    if (detail.status === 'ready' && get().live?.experimentId === experimentId) set({ runGraph: graphOf(detail.data.workflowYaml) });
  };

  return {
    runForm: { dataset: '', split: '', limit: 3, seed: 0, faults: [] },
    live: null,
    runGraph: null,
    starting: false,
    runError: null,

    setRunForm(patch) {
      const form = { ...get().runForm, ...patch };
      if (form.dataset && form.split) form.splitByDataset = { ...form.splitByDataset, [form.dataset]: form.split };
      set({ runForm: form });
    },
    addFault(row) {
      const roles = get().editor.graph?.roles.map((r) => r.name) ?? [];
      const next: FaultRow = { role: row?.role ?? roles[0] ?? '', kind: row?.kind ?? 'error', rate: row?.rate ?? 0.5 };
      set({ runForm: { ...get().runForm, faults: [...get().runForm.faults, next] } });
    },
    updateFault(index, patch) {
      set({ runForm: { ...get().runForm, faults: get().runForm.faults.map((f, i) => (i === index ? { ...f, ...patch } : f)) } });
    },
    removeFault(index) {
      set({ runForm: { ...get().runForm, faults: get().runForm.faults.filter((_, i) => i !== index) } });
    },

    runRequest() {
      const s = get();
      const problems: string[] = [];
      const text = s.editor.text;
      if (!text.trim()) problems.push('Open or write a workflow in the Editor first.');
      else if (s.editor.validation.status === 'ready' && !s.editor.validation.data.ok) problems.push('The workflow has validation issues: fix them in the Editor.');
      const { dataset, split, limit, seed } = s.runForm;
      if (!dataset) problems.push('Pick a dataset.');
      if (!split) problems.push('Pick a split.');
      if (!(Number.isInteger(limit) && limit >= 1 && limit <= MAX_LIMIT)) problems.push(`Limit must be a whole number of tasks, from 1 to ${MAX_LIMIT.toLocaleString('en-US')}.`);
      if (!(Number.isInteger(seed) && seed >= 0 && seed <= MAX_SEED)) problems.push(`Seed must be a whole number from 0 to ${MAX_SEED}.`);
      const roles = s.editor.graph?.roles.map((r) => r.name) ?? [];
      const roleModels = Object.fromEntries(Object.entries(s.roleModels).filter(([role]) => roles.includes(role)));
      const unassigned = roles.filter((r) => !roleModels[r]);
      if (!s.defaultModel && unassigned.length) problems.push(`Pick a default model, or a model for ${unassigned.join(', ')}.`);
      // A chosen model the last scan could not read (deleted, moved, not a GGUF) cannot run.
      const listed = s.models.status === 'ready' ? s.models.data : [];
      const uses = [...(s.defaultModel && unassigned.length ? [['default', s.defaultModel] as const] : []), ...Object.entries(roleModels).map(([r, p]) => [r, p] as const)];
      for (const [who, path] of uses) {
        const m = listed.find((x) => x.path === path);
        if (m?.error) problems.push(`The model ${m.fileName} chosen for ${who === 'default' ? 'the default' : `role ${who}`} cannot be read (${m.error}): choose another.`);
      }
      const faults = faultSpecs(s.runForm.faults, roles);
      for (const p of faults.problems) problems.push(`Fault row ${p.index + 1}: ${p.message}.`);
      if (problems.length) return { ok: false, problems };
      const request: StartRunRequest = {
        workflowText: text,
        dataset,
        split,
        limit,
        seed,
        models: { ...(s.defaultModel ? { default: s.defaultModel } : {}), ...(Object.keys(roleModels).length ? { roles: roleModels } : {}) },
      };
      if (faults.specs.length) request.inject = faults.specs;
      // Rollouts, hint cards and weight versions per role (store/loop.ts).
      const more = s.runExtras(roles);
      if (more.problems.length) return { ok: false, problems: more.problems };
      Object.assign(request, more.extras);
      return { ok: true, request };
    },

    async startRun() {
      // While the server cannot be reached (store/live.ts) Start waits for it.
      if (get().starting || get().serverDown || (get().live && !isFinished(get().live))) return;
      const req = get().runRequest();
      if (!req.ok) {
        set({ runError: req.problems.join(' ') });
        return;
      }
      set({ starting: true, runError: null });
      const started = await load(() => api.startRun(req.request));
      if (started.status === 'ready') {
        const id = started.data.experimentId;
        flush();
        // Its first events may have arrived before this answer: replay them.
        const current = get().live;
        let live = current?.experimentId === id ? current : startLiveRun(id, plannedRuns(req.request), req.request.kind === 'rollouts' ? (req.request.group ?? 1) : 0);
        const early = unclaimed.filter((e) => e.experimentId === id);
        if (early.length) {
          live = applyLabEvents(live, early) ?? live;
          for (let i = unclaimed.length - 1; i >= 0; i--) if (unclaimed[i]!.experimentId === id) unclaimed.splice(i, 1);
        }
        set({ starting: false, live, runGraph: graphOf(req.request.workflowText) });
        void get().refresh();
      } else {
        set({ starting: false, runError: started.status === 'error' ? `Could not start: ${userMessage(started)}` : 'Could not start the run.' });
      }
    },

    async cancelRun() {
      const live = get().live;
      if (!live || isFinished(live)) return;
      const r = await load(() => api.cancelRun({ experimentId: live.experimentId }));
      if (r.status === 'error') set({ runError: `Cancel failed: ${userMessage(r)}` });
      else if (r.status === 'ready' && !r.data.cancelled && get().live?.experimentId === live.experimentId) set({ runError: 'The experiment had already ended.' });
    },

    receive(event) {
      if (isTrainLoopEvent(event)) return get().receiveLoopEvent(event); // a train loop's progress (store/loop.ts)
      if (!isExperimentLabEvent(event)) return; // the store's and MASS jobs' events have their own subscribers (main.tsx)
      queue.push(event);
      if (!flushScheduled) {
        flushScheduled = true;
        deps.schedule(flush);
      }
    },

    async attachActiveRun() {
      const active = await load(() => api.activeRuns());
      if (active.status !== 'ready' || !active.data.length) return;
      if (get().live && !isFinished(get().live)) return;
      const a = active.data[0]!;
      set({ live: { ...startLiveRun(a.experimentId, a.total), status: 'running', done: a.done } });
      await loadRunGraph(a.experimentId);
    },
  };
}
