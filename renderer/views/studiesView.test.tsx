import { renderToStaticMarkup } from 'react-dom/server';
import { afterEach, describe, expect, it } from 'vitest';
import type { StoreApi } from 'zustand/vanilla';
import { createHandlers, createRemoteApi, type FlowlabApi } from '../../core/api/index.ts';
import { openStore, type Store } from '../../core/store/index.ts';
import { runToyStudy } from '../../core/studies/study.fixture.ts';
import { createLabStore, type LabState } from '../state.ts';
import { LabContext } from '../useLab.ts';
import { StudiesView, STUDY_COMMAND } from './StudiesView.tsx';

let store: Store | undefined;
afterEach(() => store?.close());

async function client(fill: (s: Store) => Promise<unknown>) {
  store = openStore(':memory:');
  await fill(store);
  const api: FlowlabApi = createHandlers({ store, version: 'test' });
  return createRemoteApi(async (method, payload) => (api[method] as (p: unknown) => unknown)(payload));
}

function render(lab: StoreApi<LabState>): string {
  const s: StoreApi<LabState> = { ...lab, getInitialState: lab.getState };
  return renderToStaticMarkup(<LabContext.Provider value={s}>{<StudiesView />}</LabContext.Provider>);
}

describe('Studies view', () => {
  it('shows the empty state with the study command', async () => {
    const lab = createLabStore(await client(async () => {}));
    await lab.getState().loadStudies();
    const html = render(lab);
    expect(html).toContain('data-testid="studies-empty"');
    expect(html.replace(/&lt;/g, '<').replace(/&gt;/g, '>')).toContain(STUDY_COMMAND);
  });

  it('shows the table with intervals and deltas, the chart, the cells, and opens a cell in the Experiments view', async () => {
    let studyId = '';
    const lab = createLabStore(await client(async (s) => (studyId = (await runToyStudy(s)).studyId)));
    await lab.getState().loadStudies();
    expect(lab.getState().study.status).toBe('ready');
    const html = render(lab);
    for (const id of ['study-select', 'study-table', 'study-chart', 'study-cells', 'study-plan', 'study-cell-better-id-m', 'study-open-base/id/s0/m']) expect(html).toContain(`data-testid="${id}"`);
    // base on the 4 in-distribution tasks: 2 right (50%); better: all (100%), delta +50 points, 2 positive pairs, 2 ties: p = 0.5.
    expect(html).toContain('50.0 [0.0, 100.0]');
    expect(html).toContain('+50.0 [+0.0, +100.0] p=0.500');
    expect(html).toContain('4/4 cells, 12/12 runs');
    await lab.getState().openStudyExperiment(`${studyId}.better.id.s0.m`);
    expect(lab.getState().view).toBe('experiments');
    expect(lab.getState().selectedExperimentId).toBe(`${studyId}.better.id.s0.m`);
    expect(lab.getState().runs.status).toBe('ready');
  });
});
