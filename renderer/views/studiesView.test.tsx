import { afterEach, describe, expect, it } from 'vitest';
import type { StoreApi } from 'zustand/vanilla';
import { ScriptedProvider } from '../../core/model/scripted.ts';
import { runStudy } from '../../core/studies/run.ts';
import { runToyStudy, toyStudy } from '../../core/studies/study.fixture.ts';
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
    // The guard under each accuracy: the 4 labels 1..4 are distinct, so the best constant is right once (25.0%);
    // base answers 1, 0, 3, 0 (3 distinct), better 1, 2, 3, 4: no cell is constant.
    expect(html).toMatch(/data-testid="study-guard-base-id-m"><span class="muted">best constant 25.0 · 3 answers<\/span><\/div>/);
    expect(html).toContain('best constant 25.0 · 4 answers');
    expect(html).not.toContain('CONSTANT');
    await lab.getState().openStudyExperiment(`${studyId}.better.id.s0.m`);
    expect(lab.getState().view).toBe('experiments');
    expect(lab.getState().selectedExperimentId).toBe(`${studyId}.better.id.s0.m`);
    expect(lab.getState().runs.status).toBe('ready');
  });

  it('marks a constant cell CONSTANT with its answer and share, and a delta between constants', async () => {
    // Every workflow answers 1 to every task (SIMULATED): CONSTANT "1" 100%; right only on task 0 (label 1).
    const lab = await storeLab(async (s) => {
      const t = toyStudy(s);
      await runStudy(t.plan, t.id, { ...t.deps, models: { create: async () => new ScriptedProvider(() => JSON.stringify({ answer: 1 })) } });
    });
    await lab.getState().loadStudies();
    const html = render(lab);
    expect(html).toContain('25.0 [0.0, 75.0]');
    expect(html.match(/CONSTANT &quot;1&quot; 100.0%/g)).toHaveLength(4); // every cell: 2 conditions x 2 zones
    // Both deltas are differences between two constants: 0 points, every pair tied.
    expect(html.match(/\+0\.0 \[\+0\.0, \+0\.0\] p=1\.000 \(both constant\)/g)).toHaveLength(2);
  });
});
