/**
 * What the lab offers: example workflows, datasets, GGUF models (with add-by-path and a one-click
 * test generation per model). A late answer for a test the user re-ran, or for a model removed
 * from view, is dropped.
 */
import type { DatasetInfo, ExampleWorkflow, ModelEntry, TestGeneration } from '../../core/api/lab.ts';
import { datasetForWorkflow, trainDatasetForWorkflow } from '../lib/datasetChoice.ts';
import { IDLE, latestLoader, load, LOADING, type Loadable } from './loadable.ts';
import type { SliceContext } from './types.ts';

/** The prompt of the one-click test generation. */
export const TEST_PROMPT = 'Once upon a time';
export const TEST_MAX_TOKENS = 24;

export interface CatalogSlice {
  examples: Loadable<ExampleWorkflow[]>;
  datasets: Loadable<DatasetInfo[]>;
  models: Loadable<ModelEntry[]>;
  /** The last add-by-path attempt. */
  addModelResult: Loadable<ModelEntry>;
  /** Test generations by model path. */
  modelTests: Record<string, Loadable<TestGeneration>>;
  /** Loads examples, datasets and models (each once unless `force`). */
  loadCatalog(force?: boolean): Promise<void>;
  loadModels(): Promise<void>;
  addModel(path: string): Promise<boolean>;
  testModel(path: string): Promise<void>;
}

/** Adds this slice to the lab state (store/types.ts). */
declare module './types.ts' {
  interface LabState extends CatalogSlice {}
}

export function createCatalogSlice({ api, set, get }: SliceContext): CatalogSlice {
  let addTicket = 0;
  const testTickets = new Map<string, number>();
  const loadModelList = latestLoader(() => get().models, (models) => set({ models }));

  return {
    examples: IDLE,
    datasets: IDLE,
    models: IDLE,
    addModelResult: IDLE,
    modelTests: {},

    async loadCatalog(force = false) {
      const jobs: Array<Promise<void>> = [];
      if (force || get().examples.status !== 'ready') {
        set({ examples: LOADING });
        jobs.push(load(() => api.listExamples()).then((examples) => set({ examples })));
      }
      if (force || get().datasets.status !== 'ready') {
        set({ datasets: LOADING });
        jobs.push(
          load(() => api.listDatasets()).then((datasets) => {
            set({ datasets });
            // Preselect the dataset the open workflow names or was last run with (datasetChoice.ts), else the first available one, and its test split.
            const form = get().runForm;
            if (datasets.status === 'ready' && !form.dataset) {
              const s = get();
              const named = datasetForWorkflow(s.editor.text, s.editor.graph?.name, s.experiments.status === 'ready' ? s.experiments.data : [], datasets.data);
              const d = datasets.data.find((x) => x.name === named) ?? datasets.data.find((x) => x.available) ?? datasets.data[0];
              if (d) get().setRunForm({ dataset: d.name, split: d.splits.includes('test') ? 'test' : (d.splits[0] ?? '') });
              const train = trainDatasetForWorkflow(s.editor.text, s.editor.graph?.name, s.experiments.status === 'ready' ? s.experiments.data : [], datasets.data, s.trainLoopForm.split);
              if (train !== undefined) get().setTrainLoopForm({ dataset: train });
            }
          }),
        );
      }
      if (force || get().models.status !== 'ready') jobs.push(get().loadModels());
      await Promise.all(jobs);
    },

    async loadModels() {
      const models = await loadModelList(() => api.listModels());
      if (!models) return;
      // "✓ Added x.gguf" is stale once a scan shows that file unreadable or gone.
      const added = get().addModelResult;
      if (added.status === 'ready' && models.status === 'ready' && !models.data.some((m) => m.path === added.data.path && !m.error)) set({ addModelResult: IDLE });
      // A single usable model becomes the default, so a first run needs no choice.
      const usable = models.status === 'ready' ? models.data.filter((m) => m.info && !m.error) : [];
      if (!get().defaultModel && usable.length === 1) get().setDefaultModel(usable[0]!.path);
    },

    async addModel(path) {
      const ticket = ++addTicket;
      set({ addModelResult: LOADING });
      const result = await load(() => api.addModel({ path: path.trim() }));
      if (ticket !== addTicket) return false;
      set({ addModelResult: result });
      if (result.status === 'ready') await get().loadModels();
      return result.status === 'ready';
    },

    async testModel(path) {
      const ticket = (testTickets.get(path) ?? 0) + 1;
      testTickets.set(path, ticket);
      set({ modelTests: { ...get().modelTests, [path]: LOADING } });
      const result = await load(() => api.testModel({ path, prompt: TEST_PROMPT, maxTokens: TEST_MAX_TOKENS }));
      if (testTickets.get(path) !== ticket) return;
      set({ modelTests: { ...get().modelTests, [path]: result } });
    },
  };
}
