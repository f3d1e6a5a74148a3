/**
 * The renderer's view state as one vanilla zustand store (no React here; the hook
 * lives in useLab.ts). It is composed of slices, one file each under store/: ui (view, theme),
 * browse (experiments, runs, trace), editor (workflow text and graph), run (form and live
 * progress), catalog (examples, datasets, models) and improve (rollout groups, the prior library
 * of hint cards), learning (curves and weight versions), diff (two runs aligned, opened from the Trace view) and mass (MASS evolutions: champion timelines, design diffs). Every action that fetches drops a late answer for a selection the user has left.
 */
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { LabClient } from './client.ts';
import { createAnnotationsSlice } from './store/annotations.ts';
import { createBrowseSlice } from './store/browse.ts';
import { createCatalogSlice } from './store/catalog.ts';
import { createDiffSlice } from './store/diff.ts';
import { createDocumentSlice } from './store/document.ts';
import { createForkSlice } from './store/fork.ts';
import { createEditorSlice } from './store/editor.ts';
import { createEvaluationsSlice } from './store/evaluations.ts';
import { createImproveSlice } from './store/improve.ts';
import { createJobsSlice } from './store/jobs.ts';
import { createLearningSlice } from './store/learning.ts';
import { createLiveSlice } from './store/live.ts';
import { createLoopSlice } from './store/loop.ts';
import { createMassSlice } from './store/mass.ts';
import { createRunSlice } from './store/run.ts';
import { createRunsTableSlice } from './store/runsTable.ts';
import { createStudiesSlice } from './store/studies.ts';
import { NODE_DEPS, type LabState, type SliceContext, type StoreDeps } from './store/types.ts';
import { createUiSlice } from './store/ui.ts';

export type { Loadable } from './store/loadable.ts';
export type { StoreDeps } from './store/types.ts';

/**
 * What the views show, and the actions that change it: UiSlice & BrowseSlice & EditorSlice &
 * RunSlice & CatalogSlice & ImproveSlice & LearningSlice & DiffSlice (each slice file adds itself to it).
 */
export type { LabState } from './store/types.ts';

/** Creates the lab's view store over `api`. `deps` supplies timers and frame scheduling. */
export function createLabStore(api: LabClient, deps: StoreDeps = NODE_DEPS): StoreApi<LabState> {
  return createStore<LabState>()((set, get) => {
    const ctx: SliceContext = { api, deps, set, get };
    return {
      ...createUiSlice(ctx),
      ...createBrowseSlice(ctx),
      ...createEditorSlice(ctx),
      ...createRunSlice(ctx),
      ...createCatalogSlice(ctx),
      ...createImproveSlice(ctx),
      ...createLearningSlice(ctx),
      ...createDiffSlice(ctx),
      ...createStudiesSlice(ctx),
      ...createMassSlice(ctx),
      ...createDocumentSlice(ctx),
      ...createLiveSlice(ctx),
      ...createLoopSlice(ctx),
      ...createForkSlice(ctx),
      ...createRunsTableSlice(ctx),
      ...createJobsSlice(ctx),
      ...createEvaluationsSlice(ctx),
      ...createAnnotationsSlice(ctx),
    };
  });
}
