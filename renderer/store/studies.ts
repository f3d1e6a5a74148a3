/**
 * The Studies view's state: the studies in the database and the chosen one in full (plan, cell
 * and train-loop progress, the table). An older load answering after a newer one is dropped.
 */
import type { StudyDetail, StudySummaryView } from '../../core/api/client.ts';
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
  return {
    studies: IDLE,
    study: IDLE,
    studyId: '',

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
