/**
 * Test fixture (not bundled) for the view tests: a lab store over the real API handlers and an
 * in-memory store (filled by the test, or with a host whose lab methods answer by script), and
 * the view rendered to static markup inside the lab's context. `closeViewStores` closes every
 * store opened here (`afterEach(closeViewStores)`).
 */
import type { ReactElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import type { StoreApi } from 'zustand/vanilla';
import { createHandlers, createRemoteApi, type FlowlabApi, type LabHost } from '../../core/api/index.ts';
import type { Store } from '../../core/store/index.ts';
import { storeTracker } from '../../test/fixtures.ts';
import { createLabStore, type LabState } from '../state.ts';
import { LabContext } from '../useLab.ts';

const stores = storeTracker();
/** Closes every store the labs of this module opened. */
export const closeViewStores = (): void => stores.closeAll();

/** The page's API client over `api`, called in process (errors arrive as the handlers throw them). */
function clientOver(api: FlowlabApi) {
  return createRemoteApi(async (method, payload) => (api[method] as (p: unknown) => unknown)(payload));
}

/**
 * A lab store over the handlers of a fresh in-memory store (or of `file`, for a test that also runs
 * the CLI on it), filled by `fill` first (records written as the CLI writes them). No lab host: the
 * store methods only.
 */
export async function storeLab(fill: (s: Store) => unknown = () => {}, file?: string): Promise<StoreApi<LabState>> {
  const store = stores.open(file);
  await fill(store);
  return createLabStore(clientOver(createHandlers({ store, version: 'test' })));
}

/**
 * A lab store whose host answers by script (SIMULATED: no model runs). `host(self)` gets the lab
 * store being made (so a scripted answer can push events before it returns, as a host does);
 * `defaults` add answers the test file shares. Unless replaced: no examples, datasets or active
 * runs, one readable model `/m/tiny.gguf` (llama, F32), and `addModel`, `testModel` and
 * `startRun` throw `unused`.
 */
export function scriptedLab(host: (self: StoreApi<LabState>) => Partial<LabHost>, defaults: Partial<LabHost> = {}): StoreApi<LabState> {
  let lab: StoreApi<LabState>;
  const self = new Proxy({} as StoreApi<LabState>, { get: (_t, k) => (lab as unknown as Record<string | symbol, unknown>)[k] });
  const fake = {
    listExamples: () => [], listDatasets: () => [], activeRuns: () => [], cancelRun: () => ({ cancelled: false }),
    listModels: () => [{ path: '/m/tiny.gguf', fileName: 'tiny.gguf', sizeBytes: 1, source: 'folder' as const, info: { architecture: 'llama', fileType: 'F32', hasChatTemplate: false } }],
    addModel: () => { throw new Error('unused'); }, testModel: () => { throw new Error('unused'); }, startRun: () => { throw new Error('unused'); },
    ...defaults,
    ...host(self),
  } as LabHost;
  lab = createLabStore(clientOver(createHandlers({ store: stores.open(), version: 'test', lab: fake })));
  return lab;
}

/** `view` rendered to static HTML with `lab` as the lab's state. */
export function renderView(lab: StoreApi<LabState>, view: ReactElement): string {
  const s: StoreApi<LabState> = { ...lab, getInitialState: lab.getState };
  return renderToStaticMarkup(<LabContext.Provider value={s}>{view}</LabContext.Provider>);
}
