import { afterEach, describe, expect, it } from 'vitest';
import type { StoreApi } from 'zustand/vanilla';
import { ScriptedProvider } from '../../core/model/scripted.ts';
import { runStudy } from '../../core/studies/run.ts';
import { runToyStudy, toyStudy } from '../../core/studies/study.fixture.ts';
import type { LabState } from '../state.ts';
import { ExperimentsView } from './ExperimentsView.tsx';
import { closeViewStores, renderView, storeLab } from './viewTest.fixture.tsx';

afterEach(closeViewStores);

/** The toy study's experiments listed with their runs, its group opened on the base/id cell. */
async function shown(lab: StoreApi<LabState>, studyId: string): Promise<string> {
  await lab.getState().refresh();
  lab.setState({ selectedExperimentId: `${studyId}.base.id.s0.m` });
  return renderView(lab, <ExperimentsView />);
}
const guardOf = (html: string, id: string) => new RegExp(`data-testid="experiment-guard-${id.replace(/\./g, '\\.')}">(.*?)</div>`).exec(html)?.[1];

describe('Experiments view: the constant guard beside each accuracy, as flowlab run prints it', () => {
  it('shows the best constant policy and the distinct answers; no CONSTANT when the answers vary', async () => {
    let studyId = '';
    const lab = await storeLab(async (s) => (studyId = (await runToyStudy(s)).studyId));
    const html = await shown(lab, studyId);
    // Zone id: labels 1, 2, 3, 4 (each 1/4: best constant 25.0%). base answers 1, 0, 3, 0 (3 distinct); better 1, 2, 3, 4.
    expect(guardOf(html, `${studyId}.base.id.s0.m`)).toBe('<span class="muted">best constant 25.0% · 3 answers</span>');
    expect(guardOf(html, `${studyId}.better.id.s0.m`)).toBe('<span class="muted">best constant 25.0% · 4 answers</span>');
    // Zone far: labels 5, 6 (best constant 50.0%); base answers 5, 0.
    expect(guardOf(html, `${studyId}.base.far.s0.m`)).toBe('<span class="muted">best constant 50.0% · 2 answers</span>');
    expect(html).not.toContain('CONSTANT');
  });

  it('marks an experiment whose runs all give one answer CONSTANT with the answer and its share', async () => {
    // Every workflow answers 1 to every task (SIMULATED).
    let studyId = '';
    const lab = await storeLab(async (s) => {
      const t = toyStudy(s);
      studyId = t.id;
      await runStudy(t.plan, t.id, { ...t.deps, models: { create: async () => new ScriptedProvider(() => JSON.stringify({ answer: 1 })) } });
    });
    const html = await shown(lab, studyId);
    expect(guardOf(html, `${studyId}.base.id.s0.m`)).toContain('best constant 25.0% · 1 answer</span> <strong class="error"');
    expect(guardOf(html, `${studyId}.base.far.s0.m`)).toContain('best constant 50.0% · 1 answer</span>');
    // 2 conditions x 2 zones, each CONSTANT "1" over all its runs.
    expect(html.match(/>CONSTANT &quot;1&quot; 100\.0%<\/strong>/g)).toHaveLength(4);
  });
});
