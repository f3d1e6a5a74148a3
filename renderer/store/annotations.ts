/**
 * Annotations from the Trace view (core/api annotations.ts; `flowlab annotate`): the trace's run's
 * annotations (its own and its nodes'), adding one on the run or the selected node, removing one,
 * and the experiment's annotations as a JSON download. After a change the Runs table's current
 * query is asked again, so its tags column and tag filter follow.
 */
import type { Annotation, NewAnnotation } from '../../core/api/client.ts';
import { IDLE, load, LOADING, type Loadable } from './loadable.ts';
import type { SliceContext } from './types.ts';

export interface AnnotationsSlice {
  /** The annotations of the run they were loaded for, oldest first. */
  runAnnotations: Loadable<Annotation[]> & { runId?: string };
  /** The tags in use, most used first (the Runs table's tag filter offers them). */
  annotationTags: string[];
  loadAnnotationTags(): Promise<void>;
  /** The last add or remove's error (its message names the field), or null. */
  annotationError: string | null;
  loadAnnotations(runId: string): Promise<void>;
  /** Stores an annotation; true when stored (the list and the Runs table reloaded). */
  addAnnotation(a: NewAnnotation): Promise<boolean>;
  removeAnnotation(id: string, runId: string): Promise<void>;
  /** Every annotation of an experiment's runs (the download), or null with `annotationError` set. */
  experimentAnnotations(experimentId: string): Promise<Annotation[] | null>;
}

declare module './types.ts' {
  interface LabState extends AnnotationsSlice {}
}

export function createAnnotationsSlice({ api, set, get }: SliceContext): AnnotationsSlice {
  /** The Runs table shows tags: ask its query again when it has one. */
  const refreshRunsTable = async () => {
    if (get().runsTotal !== null) await get().setRunsFilter(get().runsFilter);
  };
  return {
    runAnnotations: IDLE,
    annotationTags: [],
    annotationError: null,

    async loadAnnotationTags() {
      const out = await load(() => api.listAnnotationTags());
      if (out.status === 'ready') set({ annotationTags: out.data.map((t) => t.tag) });
    },

    async loadAnnotations(runId) {
      if (get().runAnnotations.runId !== runId) set({ runAnnotations: { ...LOADING, runId }, annotationError: null });
      const list = await load(() => api.listAnnotations({ runId }));
      if (get().selectedRunId === runId || get().runAnnotations.runId === runId) set({ runAnnotations: { ...list, runId } });
    },

    async addAnnotation(a) {
      const out = await load(() => api.addAnnotation(a));
      if (out.status !== 'ready') {
        set({ annotationError: out.status === 'error' ? out.message : 'not stored' });
        return false;
      }
      set({ annotationError: null });
      await Promise.all([get().loadAnnotations(a.runId), refreshRunsTable(), get().loadAnnotationTags()]);
      return true;
    },

    async removeAnnotation(id, runId) {
      const out = await load(() => api.removeAnnotation({ id }));
      set({ annotationError: out.status === 'error' ? out.message : null });
      await Promise.all([get().loadAnnotations(runId), refreshRunsTable(), get().loadAnnotationTags()]);
    },

    async experimentAnnotations(experimentId) {
      const out = await load(() => api.listAnnotations({ experimentId }));
      if (out.status === 'ready') return out.data;
      set({ annotationError: out.status === 'error' ? out.message : 'not loaded' });
      return null;
    },
  };
}
