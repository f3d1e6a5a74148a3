import { afterEach, describe, expect, it } from 'vitest';
import type { StoreApi } from 'zustand/vanilla';
import { runToyStudy } from '../../core/studies/study.fixture.ts';
import type { LabState } from '../state.ts';
import { StudiesView, STUDY_COMMAND } from './StudiesView.tsx';
import { closeViewStores, renderView, storeLab } from './viewTest.fixture.tsx';

afterEach(closeViewStores);

const render = (lab: StoreApi<LabState>): string => renderView(lab, <StudiesView />);

describe('Studies view', () => {
  it('shows the empty state with the study command', async () => {
    const lab = await storeLab();
    await lab.getState().loadStudies();
    const html = render(lab);
    expect(html).toContain('data-testid="studies-empty"');
    expect(html.replace(/&lt;/g, '<').replace(/&gt;/g, '>')).toContain(STUDY_COMMAND);
  });

  it('shows the table with intervals and deltas, the chart, the cells, and opens a cell in the Experiments view', async () => {
    let studyId = '';
    const lab = await storeLab(async (s) => (studyId = (await runToyStudy(s)).studyId));
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
