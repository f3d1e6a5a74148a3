/**
 * The Studies view's state: the studies in the database and the chosen one in full (plan, cell
 * and train-loop progress, the table). An older load answering after a newer one is dropped.
 * And the study started from the view (`startStudy`, what `flowlab study` runs, or its dry run):
 * its status, cell count, latest lines and estimate from the pushed `StudyJobEvent`s, and its
 * cancel; when it ends the studies are loaded again with it shown.
 */
import type { LabEvent, StartStudyRequest, StudyDetail, StudyJobEstimate, StudyJobEvent, StudyJobStatus, StudyPlanFile, StudySummaryView } from '../../core/api/client.ts';
import { errorMessage } from '../../core/api/client.ts';
import { followJob, withProgress } from './jobFollow.ts';
import { IDLE, latestLoader, type Loadable } from './loadable.ts';
import type { SliceContext } from './types.ts';

export interface StudiesSlice {
  studies: Loadable<StudySummaryView[]>;
  study: Loadable<StudyDetail>;
  /** The chosen study ('' = the newest). */
  studyId: string;
  /** Loads the list and the chosen (or newest) study. */
  loadStudies(): Promise<void>;
  selectStudy(id: string): Promise<void>;
  /** Opens a cell's experiment in the Experiments view. */
  openStudyExperiment(experimentId: string): Promise<void>;
  /** The shipped plans (examples/studies). */
  studyPlans: Loadable<StudyPlanFile[]>;
  loadStudyPlans(): Promise<void>;
  /** The study started from the view (null: none yet). */
  studyJob: StudyJob | null;
  /** Why the last start was refused (the API error's message), or null. */
  studyJobError: string | null;
  startStudyJob(request: StartStudyRequest): Promise<void>;
  cancelStudyJob(): Promise<void>;
  /** Folds a pushed event of the job into `studyJob` (other events are ignored). */
  receiveStudy(event: LabEvent): void;
}

/** A study job as the view shows it. */
export interface StudyJob {
  studyId: string;
  dryRun: boolean;
  status: 'starting' | StudyJobStatus;
  /** The latest progress lines, oldest first (at most STUDY_JOB_LINES). */
  lines: string[];
  /** Cells finished of the study's cells. */
  done?: number;
  total?: number;
  message?: string;
  /** A completed dry run's estimate. */
  estimate?: StudyJobEstimate;
}

/** Progress lines kept for the view. */
export const STUDY_JOB_LINES = 12;
const ended = (s: StudyJob['status']) => s !== 'starting' && s !== 'running';

/** `job` with the event `e` folded in. */
export function foldStudyJob(job: StudyJob, e: StudyJobEvent): StudyJob {
  if (e.type === 'studyJob') return { ...job, status: e.status, ...(e.message !== undefined && { message: e.message }), ...(e.estimate && { estimate: e.estimate }) };
  return withProgress(job, e, STUDY_JOB_LINES);
}

declare module './types.ts' {
  interface LabState extends StudiesSlice {}
}

export function createStudiesSlice({ api, set, get }: SliceContext): StudiesSlice {
  const list = latestLoader(() => get().studies, (studies) => set({ studies }));
  const one = latestLoader(() => get().study, (study) => set({ study }));
  const loadOne = async () => {
    const studies = get().studies;
    const id = get().studyId || (studies.status === 'ready' ? studies.data[0]?.id : undefined);
    if (!id) return void set({ study: IDLE });
    await one(() => api.getStudy({ studyId: id }));
  };
  const plans = latestLoader(() => get().studyPlans, (studyPlans) => set({ studyPlans }));
  const afterEnd = async (job: StudyJob) => {
    set({ studyId: job.studyId });
    await get().loadStudies();
  };
  const follow = followJob<StudyJob, StudyJobEvent>({
    idOfEvent: (e) => e.studyId, idOfJob: (j) => j.studyId, fold: foldStudyJob, ended: (j) => ended(j.status),
    get: () => get().studyJob, set: (studyJob) => set({ studyJob }), onEnd: afterEnd,
  });
  return {
    studies: IDLE,
    study: IDLE,
    studyId: '',
    studyPlans: IDLE,
    studyJob: null,
    studyJobError: null,

    async loadStudyPlans() {
      await plans(() => api.listStudyPlans());
    },

    async startStudyJob(request) {
      set({ studyJob: null, studyJobError: null });
      follow.reset();
      try {
        const { studyId } = await api.startStudy(request);
        const job = follow.started({ studyId, dryRun: request.dryRun ?? false, status: 'starting', lines: [] });
        set({ studyJob: job, studyId });
        if (ended(job.status)) await afterEnd(job);
        else await get().loadStudies();
      } catch (err) {
        set({ studyJobError: errorMessage(err) });
      }
    },

    async cancelStudyJob() {
      const job = get().studyJob;
      if (!job || ended(job.status)) return;
      await api.cancelStudy({ studyId: job.studyId });
    },

    receiveStudy(event) {
      if (event.type === 'studyJob' || event.type === 'studyProgress') follow.receive(event);
    },

    async loadStudies() {
      await list(() => api.listStudies());
      await loadOne();
    },

    async selectStudy(id) {
      set({ studyId: id, study: IDLE });
      await loadOne();
    },

    async openStudyExperiment(experimentId) {
      get().setView('experiments');
      await get().selectExperiment(experimentId);
    },
  };
}
