import { afterEach, describe, expect, it } from 'vitest';
import { createLabStore } from '../state.ts';
import { closeImproveStores, improveClient as client } from './improve.fixture.ts';
import { gate } from '../../test/fixtures.ts';
import { runAt } from './runsTable.ts';

afterEach(closeImproveStores);

describe('the Runs table slice', () => {
  it('fetches the first page of a query with its total, and the pages a scroll asks for', async () => {
    const lab = createLabStore(client());
    await lab.getState().setRunsFilter({ experimentId: 'exp-roll', sort: 'task', order: 'asc' });
    const s = lab.getState();
    expect(s.runsTotal).toBe(4);
    expect([0, 1, 2, 3].map((i) => runAt(s.runsPages, i)?.runId)).toEqual(['exp-roll-r0', 'exp-roll-r1', 'exp-roll-r2', 'exp-roll-r3']);
    expect(runAt(s.runsPages, 1)?.rollout).toEqual({ task: 0, index: 1 });
    await lab.getState().setRunsFilter({ correct: false, sort: 'experiment', order: 'asc' });
    expect(lab.getState().runsTotal).toBe(4); // exp-base's run and three rollouts are wrong
  });

  it('drops a page answering for a query the user has changed', async () => {
    const held = gate();
    const real = client();
    const lab = createLabStore({ ...real, searchRuns: async (p) => (p.experimentId === 'exp-roll' ? (await held.wait, real.searchRuns(p)) : real.searchRuns(p)) });
    const late = lab.getState().setRunsFilter({ experimentId: 'exp-roll' });
    await lab.getState().setRunsFilter({ experimentId: 'exp-base' });
    held.open();
    await late;
    expect(lab.getState().runsTotal).toBe(1);
    expect(runAt(lab.getState().runsPages, 0)?.runId).toBe('exp-base-r0');
  });

  it('shows a refused query\'s message', async () => {
    const lab = createLabStore(client());
    await lab.getState().setRunsFilter({ text: '!!' });
    expect(lab.getState().runsError).toMatch(/no word to find/);
  });

  it('"Open its traces" opens the experiment with its first wrong run selected (it opened with none)', async () => {
    const lab = createLabStore(client());
    await lab.getState().openExperimentTraces('exp-roll');
    expect(lab.getState()).toMatchObject({ view: 'trace', selectedExperimentId: 'exp-roll', selectedRunId: 'exp-roll-r1', trace: { status: 'ready' } });
    await lab.getState().openExperimentTraces('exp-cards'); // every run correct: the first
    expect(lab.getState().selectedRunId).toBe('exp-cards-r0');
  });
});
