/**
 * The improvement loop from the window: the Run form's extra options (rollouts, hint cards and
 * weight versions per role), train loops started here with their live progress, resuming a
 * cancelled experiment or loop, comparing two experiments, deleting and exporting hint cards,
 * and the experiment lists' filters and open groups. Every start goes through the same API
 * methods the CLI's service sits behind (startRun, startTrainLoop, resumeRun).
 */
import { TRAIN_LOOP_DEFAULTS, type StartRunRequest, type StartTrainLoopRequest, type TrainLoopEvent } from '../../core/api/client.ts';
import type { CardsDocument, CompareView, DistillCardRequest } from '../../core/api/client.ts';
import { hasLearningSignal, NO_FILTER, rolloutsCandidates, type ExperimentFilter } from '../lib/experimentGroups.ts';
import { applyLoopEvent, loopFinished, startLoopProgress, type LoopProgress } from '../lib/trainLoopProgress.ts';
import { IDLE, load, LOADING, type Loadable } from './loadable.ts';
import type { SliceContext } from './types.ts';

/** What the Run form adds to a run: its kind and, per role, hint cards and a weight version. */
export interface RunOptions {
  kind: 'run' | 'rollouts';
  /** Rollouts per task G (rollouts), 1..64. */
  group: number;
  /** Sampling temperature (rollouts), (0, 5]. */
  temperature: number;
  /** Card ids per role (each card belongs to one role). */
  cards: Record<string, string[]>;
  /** Weight version id per role (its file replaces the role's model). */
  versions: Record<string, string>;
}

/** The train-loop form (`flowlab train-loop`'s flags; absent ones take the CLI's defaults). */
export interface TrainLoopForm {
  dataset: string;
  split: string;
  heldoutSplit: string;
  /** Roles trained; empty: every role running an agent node. */
  roles: string[];
  group: number;
  iterations: number;
  limit: number;
  heldout: number;
  heldoutSamples: number;
  seed: number;
  threads: number;
  /** Policy step (flowlab train-loop's flags and defaults): `--lr` (3e-4), `--kl` (0.02), `--temperature` (1), `--entropy` (0 = off). */
  lr: number;
  kl: number;
  temperature: number;
  entropy: number;
  /** SFT on the loop's own successes (docs/laptop-rl.md): `--warm-start` (0), `--sft-mix`, `--sft-steps` (2), `--sft-lr` (1e-3), `--sft-roles` (empty: every trained role), `--sft-pool` (0: this iteration's successes only). */
  warmStart: number;
  sftMix: boolean;
  sftSteps: number;
  sftLr: number;
  sftRoles: string[];
  sftPool: number;
}

/** Whether the form asks for SFT steps: a warm start, or SFT mixed into every iteration (host/trainLoop.ts). */
export const sftOn = (f: Pick<TrainLoopForm, 'warmStart' | 'sftMix'>): boolean => f.warmStart > 0 || f.sftMix;

/** The train-loop form's policy and SFT fields at `flowlab train-loop`'s defaults. */
/** The policy and SFT step fields of the Learning form, at `flowlab train-loop`'s defaults. */
export const TRAIN_LOOP_STEP_DEFAULTS = { lr: TRAIN_LOOP_DEFAULTS.lr, kl: TRAIN_LOOP_DEFAULTS.kl, temperature: TRAIN_LOOP_DEFAULTS.temperature, entropy: TRAIN_LOOP_DEFAULTS.entropy, warmStart: TRAIN_LOOP_DEFAULTS.warmStart, sftMix: false, sftSteps: TRAIN_LOOP_DEFAULTS.sftSteps, sftLr: TRAIN_LOOP_DEFAULTS.sftLr, sftRoles: [] as string[], sftPool: TRAIN_LOOP_DEFAULTS.sftPool } as const;

export interface LoopSlice {
  experimentFilter: ExperimentFilter;
  setExperimentFilter(patch: Partial<ExperimentFilter>): void;
  /** Groups opened in the Experiments list, by entry key. */
  openGroups: Record<string, boolean>;
  toggleGroup(key: string): void;

  runOptions: RunOptions;
  setRunOptions(patch: Partial<Omit<RunOptions, 'cards' | 'versions'>>): void;
  setRoleCards(role: string, ids: string[]): void;
  setRoleVersion(role: string, versionId: string | null): void;
  /** The fields the options add to a StartRunRequest for these roles, or why they cannot. */
  runExtras(roles: readonly string[]): { extras: Partial<StartRunRequest>; problems: string[] };

  trainLoopForm: TrainLoopForm;
  setTrainLoopForm(patch: Partial<TrainLoopForm>): void;
  /** The request startTrainLoop would send now, or the reasons it cannot be sent. */
  trainLoopRequest(): { ok: true; request: StartTrainLoopRequest } | { ok: false; problems: string[] };
  /** Loops seen in this window (started here, or whose events arrived), by id. */
  trainLoops: Record<string, LoopProgress>;
  /** The loop the Learning view follows. */
  watchedLoop: string | null;
  loopStarting: boolean;
  loopError: string | null;
  startTrainLoop(): Promise<void>;
  cancelTrainLoop(loopId: string): Promise<void>;
  receiveLoopEvent(event: TrainLoopEvent): void;

  /** Resumes a cancelled, interrupted or failed experiment (or the train loop it belongs to). */
  resumeExperiment(experimentId: string): Promise<void>;
  resuming: string | null;

  compareIds: { a: string; b: string };
  setCompareIds(patch: Partial<{ a: string; b: string }>): void;
  comparison: Loadable<CompareView>;
  runCompare(): Promise<void>;

  /**
   * Opens the Rollouts view's default experiment: the newest standalone rollouts experiment, else
   * the newest training iteration with a learning signal (at most `ROLLOUTS_PROBE` are read); none
   * when every training iteration tried has none (`rolloutsNoSignal` then says so).
   */
  chooseDefaultRollouts(): Promise<void>;
  rolloutsNoSignal: boolean;

  /** Distils a card on the host (`distillCard`, as flowlab distill); the library reloads after. */
  distillCardNow(req: DistillCardRequest): Promise<void>;
  distilling: boolean;
  /** The last distillation's outcome, in users' words. */
  distillNote: { text: string; tone: 'info' | 'error' } | null;
  /** A stored experiment's workflow text (null when it cannot be read). */
  loadExperimentDetail(id: string): Promise<string | null>;
  deleteCard(cardId: string): Promise<boolean>;
  /** The exchange document of these cards (all when absent), or null after a notice saying why not. */
  exportCardsDocument(ids?: string[]): Promise<CardsDocument | null>;
}

/** Adds this slice to the lab state (store/types.ts). */
declare module './types.ts' {
  interface LabState extends LoopSlice {}
}

/** An API error's message in users' words: no leading `method: `, no trailing `[CODE]`. */
export function plainMessage(message: string): string {
  return message.replace(/^[a-z][A-Za-z]+: /, '').replace(/\s*\[[A-Z_]+(?: [^\]]*)?\]$/, '');
}

/** Most training iterations read when looking for one with a learning signal. */
export const ROLLOUTS_PROBE = 8;

export function createLoopSlice({ api, set, get }: SliceContext): LoopSlice {
  let compareTicket = 0;
  const setLoop = (p: LoopProgress) => set({ trainLoops: { ...get().trainLoops, [p.loopId]: p } });
  return {
    experimentFilter: NO_FILTER,
    setExperimentFilter(patch) {
      set({ experimentFilter: { ...get().experimentFilter, ...patch } });
    },
    openGroups: {},
    toggleGroup(key) {
      set({ openGroups: { ...get().openGroups, [key]: !get().openGroups[key] } });
    },

    runOptions: { kind: 'run', group: 4, temperature: 0.8, cards: {}, versions: {} },
    setRunOptions(patch) {
      set({ runOptions: { ...get().runOptions, ...patch } });
    },
    setRoleCards(role, ids) {
      const cards = { ...get().runOptions.cards };
      if (ids.length) cards[role] = ids;
      else delete cards[role];
      set({ runOptions: { ...get().runOptions, cards } });
    },
    setRoleVersion(role, versionId) {
      const versions = { ...get().runOptions.versions };
      if (versionId) versions[role] = versionId;
      else delete versions[role];
      set({ runOptions: { ...get().runOptions, versions } });
    },
    runExtras(roles) {
      const o = get().runOptions;
      const problems: string[] = [];
      const extras: Partial<StartRunRequest> = {};
      const cards = roles.flatMap((r) => o.cards[r] ?? []);
      if (cards.length) extras.cards = cards;
      const versions = Object.fromEntries(Object.entries(o.versions).filter(([r]) => roles.includes(r)));
      if (Object.keys(versions).length) extras.roleVersions = versions;
      if ((cards.length || Object.keys(versions).length) && (o.kind === 'rollouts' || get().runForm.faults.length)) {
        problems.push('Hint cards and weight versions are for runs only: not with rollouts or SIMULATED faults (as flowlab rollouts and blame-eval take neither).');
      }
      if (o.kind === 'rollouts') {
        if (!(Number.isInteger(o.group) && o.group >= 1 && o.group <= 64)) problems.push('Rollouts per task (G) must be a whole number from 1 to 64.');
        if (!(o.temperature > 0 && o.temperature <= 5)) problems.push('Temperature must be above 0 and at most 5.');
        Object.assign(extras, { kind: 'rollouts', group: o.group, temperature: o.temperature });
      }
      return { extras, problems };
    },

    // `flowlab train-loop`'s defaults (one set for the CLI and the window); threads 1 (tiny models).
    trainLoopForm: { dataset: 'learn-word', split: TRAIN_LOOP_DEFAULTS.split, heldoutSplit: TRAIN_LOOP_DEFAULTS.heldoutSplit, roles: [], group: TRAIN_LOOP_DEFAULTS.group, iterations: TRAIN_LOOP_DEFAULTS.iterations, limit: TRAIN_LOOP_DEFAULTS.limit, heldout: TRAIN_LOOP_DEFAULTS.heldout, heldoutSamples: TRAIN_LOOP_DEFAULTS.heldoutSamples, seed: TRAIN_LOOP_DEFAULTS.seed, threads: 1, ...TRAIN_LOOP_STEP_DEFAULTS, sftRoles: [] },
    setTrainLoopForm(patch) {
      set({ trainLoopForm: { ...get().trainLoopForm, ...patch } });
    },
    trainLoopRequest() {
      const s = get();
      const f = s.trainLoopForm;
      const problems: string[] = [];
      if (!s.editor.text.trim()) problems.push('Open or write a workflow in the Editor first (examples/learn-word.yaml trains on learn-word).');
      if (!f.dataset) problems.push('Pick a dataset.');
      const whole = (v: number, min: number, max: number) => Number.isInteger(v) && v >= min && v <= max;
      if (!whole(f.group, 1, 64)) problems.push('Rollouts per task (G) must be a whole number from 1 to 64.');
      if (!whole(f.iterations, 1, 10_000)) problems.push('Iterations must be a whole number from 1 to 10000.');
      if (!whole(f.limit, 1, 10_000)) problems.push('Tasks per iteration must be a whole number from 1 to 10000.');
      if (!whole(f.heldout, 0, 10_000)) problems.push('Held-out tasks must be a whole number from 0 to 10000.');
      if (!whole(f.heldoutSamples, 1, 64)) problems.push('Held-out samples must be a whole number from 1 to 64.');
      if (!whole(f.seed, 0, 2_147_483_647)) problems.push('Seed must be a whole number from 0 to 2147483647.');
      if (!whole(f.threads, 1, 256)) problems.push('Threads must be a whole number from 1 to 256.');
      const open = (v: number, lo: number, hi: number) => Number.isFinite(v) && v > lo && v < hi;
      if (!open(f.lr, 0, 1)) problems.push('Learning rate must be above 0 and below 1.');
      if (!(Number.isFinite(f.kl) && f.kl >= 0 && f.kl <= 100)) problems.push('KL weight must be from 0 to 100.');
      if (!(Number.isFinite(f.temperature) && f.temperature > 0 && f.temperature <= 5)) problems.push('Temperature must be above 0 and at most 5.');
      if (!(Number.isFinite(f.entropy) && f.entropy >= 0 && f.entropy <= 1)) problems.push('Entropy bonus must be from 0 to 1.');
      if (!whole(f.warmStart, 0, 10_000)) problems.push('SFT warm start must be a whole number of iterations from 0 to 10000.');
      if (!whole(f.sftSteps, 1, 100)) problems.push('SFT steps must be a whole number from 1 to 100.');
      if (!open(f.sftLr, 0, 1)) problems.push('SFT learning rate must be above 0 and below 1.');
      if (!whole(f.sftPool, 0, 1000)) problems.push('SFT pool must be a whole number of successes per class from 0 to 1000.');
      const roles = s.editor.graph?.roles.map((r) => r.name) ?? [];
      const roleModels = Object.fromEntries(Object.entries(s.roleModels).filter(([role]) => roles.includes(role)));
      if (!s.defaultModel && roles.some((r) => !roleModels[r])) problems.push('Pick a default model in the Run form (Models per role).');
      if (problems.length) return { ok: false, problems };
      const versions = Object.fromEntries(Object.entries(s.runOptions.versions).filter(([r]) => roles.includes(r)));
      const request: StartTrainLoopRequest = {
        workflowText: s.editor.text,
        dataset: f.dataset,
        split: f.split,
        heldoutSplit: f.heldoutSplit,
        group: f.group,
        iterations: f.iterations,
        limit: f.limit,
        heldout: f.heldout,
        heldoutSamples: f.heldoutSamples,
        seed: f.seed,
        threads: f.threads,
        lr: f.lr,
        kl: f.kl,
        temperature: f.temperature,
        // 0 is off, left out as the CLI leaves --entropy 0 out.
        ...(f.entropy > 0 && { entropy: f.entropy }),
        // The SFT fields only with an SFT schedule (the host refuses SFT roles without one).
        ...(sftOn(f) && {
          warmStart: f.warmStart, sftMix: f.sftMix, sftSteps: f.sftSteps, sftLr: f.sftLr,
          ...(f.sftRoles.length ? { sftRoles: f.sftRoles.filter((r) => roles.includes(r)) } : {}),
          ...(f.sftPool > 0 && { sftPool: f.sftPool }),
        }),
        models: { ...(s.defaultModel ? { default: s.defaultModel } : {}), ...(Object.keys(roleModels).length ? { roles: roleModels } : {}) },
        ...(f.roles.length ? { roles: f.roles.filter((r) => roles.includes(r)) } : {}),
        ...(Object.keys(versions).length ? { roleVersions: versions } : {}),
      };
      return { ok: true, request };
    },
    trainLoops: {},
    watchedLoop: null,
    loopStarting: false,
    loopError: null,
    async startTrainLoop() {
      if (get().loopStarting) return;
      const req = get().trainLoopRequest();
      if (!req.ok) {
        set({ loopError: req.problems.join(' ') });
        return;
      }
      set({ loopStarting: true, loopError: null });
      const started = await load(() => api.startTrainLoop(req.request));
      if (started.status !== 'ready') {
        set({ loopStarting: false, loopError: started.status === 'error' ? plainMessage(started.message) : 'The train loop could not start.' });
        return;
      }
      const id = started.data.loopId;
      // Its first events may have come before this answer: keep what they built.
      if (!get().trainLoops[id]) setLoop(startLoopProgress(id, req.request.iterations));
      set({ loopStarting: false, watchedLoop: id });
      void get().refresh();
    },
    async cancelTrainLoop(loopId) {
      const r = await load(() => api.cancelTrainLoop({ loopId }));
      if (r.status === 'error') set({ loopError: `Cancel failed: ${plainMessage(r.message)}` });
    },
    receiveLoopEvent(event) {
      const have = get().trainLoops[event.loopId] ?? startLoopProgress(event.loopId);
      const next = applyLoopEvent(have, event);
      setLoop(next);
      if (!get().watchedLoop || loopFinished(get().trainLoops[get().watchedLoop!])) set({ watchedLoop: event.loopId });
      // A new iteration experiment, or the loop's end: the lists behind the other views changed.
      if (event.type === 'trainIteration' || event.type === 'trainHeldout' || (event.type === 'trainLoop' && event.status !== 'running')) {
        void get().refresh();
        if (get().view === 'learning') void get().loadLearning();
      }
    },

    resuming: null,
    async resumeExperiment(experimentId) {
      if (get().resuming) return;
      set({ resuming: experimentId });
      const r = await load(() => api.resumeRun({ experimentId }));
      set({ resuming: null });
      if (r.status === 'error') {
        get().notify(`Could not resume ${experimentId}: ${plainMessage(r.message)}`, 'error');
        return;
      }
      if (r.status !== 'ready') return;
      const { pending, loopId } = r.data;
      if (loopId) {
        if (!get().trainLoops[loopId]) setLoop(startLoopProgress(loopId));
        set({ watchedLoop: loopId });
        get().notify(pending ? `Resumed train loop ${loopId}: ${pending} iteration(s) left. Follow it in Learning.` : `Train loop ${loopId} had nothing left to do.`);
      } else {
        get().notify(pending ? `Resumed ${experimentId}: ${pending} task(s) left. Follow it in Run.` : `${experimentId} had nothing left to do.`);
      }
      void get().refresh();
    },

    compareIds: { a: '', b: '' },
    setCompareIds(patch) {
      set({ compareIds: { ...get().compareIds, ...patch }, comparison: IDLE });
    },
    comparison: IDLE,
    async runCompare() {
      const { a, b } = get().compareIds;
      if (!a || !b) return;
      const ticket = ++compareTicket;
      set({ comparison: LOADING });
      const comparison = await load(() => api.compareExperiments({ a, b }));
      if (ticket === compareTicket) set({ comparison });
    },

    rolloutsNoSignal: false,
    async chooseDefaultRollouts() {
      const s = get();
      if (s.experiments.status !== 'ready') return;
      const { standalone, iterations } = rolloutsCandidates(s.experiments.data);
      if (standalone[0]) return void get().selectRolloutsExperiment(standalone[0].id);
      for (const e of iterations.slice(0, ROLLOUTS_PROBE)) {
        const view = await load(() => api.getRollouts({ experimentId: e.id }));
        if (get().rolloutsExperimentId) return; // the user chose meanwhile
        if (view.status === 'ready' && hasLearningSignal(view.data)) {
          set({ rolloutsNoSignal: false });
          return void get().selectRolloutsExperiment(e.id);
        }
      }
      set({ rolloutsNoSignal: iterations.length > 0 });
    },

    distilling: false,
    distillNote: null,
    async distillCardNow(req) {
      if (get().distilling) return;
      set({ distilling: true, distillNote: null });
      const r = await load(() => api.distillCard(req));
      if (r.status === 'ready') {
        const c = r.data;
        const flag = c.trust?.flagged ? ` Flagged: ${c.trust.reasons.join('; ')}.` : '';
        set({ distilling: false, distillNote: { text: `Distilled card ${c.id} for ${c.role} from ${c.shots} trajectory(ies): “${c.title}”.${flag}`, tone: c.trust?.flagged ? 'error' : 'info' } });
        await get().loadCards();
      } else {
        set({ distilling: false, distillNote: { text: r.status === 'error' ? `Could not distil: ${plainMessage(r.message)}` : 'Could not distil.', tone: 'error' } });
      }
    },
    async loadExperimentDetail(id) {
      const r = await load(() => api.getExperiment({ id }));
      return r.status === 'ready' ? r.data.workflowYaml : null;
    },

    async deleteCard(cardId) {
      const r = await load(() => api.deleteCard({ cardId }));
      if (r.status === 'error') {
        get().notify(`Could not delete card ${cardId}: ${plainMessage(r.message)}`, 'error');
        return false;
      }
      get().notify(`Deleted card ${cardId}.`);
      await get().loadCards();
      return true;
    },
    async exportCardsDocument(ids) {
      const r = await load(() => api.exportCards(ids?.length ? { ids } : {}));
      if (r.status === 'ready') return r.data;
      if (r.status === 'error') get().notify(`Could not export the cards: ${plainMessage(r.message)}`, 'error');
      return null;
    },
  };
}
