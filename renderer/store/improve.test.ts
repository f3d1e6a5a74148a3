import { afterEach, describe, expect, it } from 'vitest';
import { shortcutFor } from '../lib/shortcuts.ts';
import { createLabStore } from '../state.ts';
import { closeImproveStores, improveClient as client } from './improve.fixture.ts';
import { gate } from '../../test/fixtures.ts';

afterEach(closeImproveStores);

describe('improve slice', () => {
  it('loads a rollouts experiment, keeps the chosen group, and opens a rollout in the Trace view', async () => {
    const lab = createLabStore(client());
    await lab.getState().selectRolloutsExperiment('exp-roll');
    const r = lab.getState().rollouts;
    expect(r.status).toBe('ready');
    if (r.status !== 'ready') return;
    expect(r.data.groups.map((g) => [g.groupKey, g.noSignal, g.rollouts.map((x) => Math.sign(x.perRole['solver']!.advantage!))])).toEqual([
      ['t0', false, [1, -1]],
      ['t1', true, [0, 0]],
    ]);
    lab.getState().selectRolloutGroup(1);
    await lab.getState().selectRolloutsExperiment('exp-roll'); // a reload keeps the group
    expect(lab.getState().rolloutGroup).toBe(1);
    await lab.getState().openRunTrace('exp-roll', 'exp-roll-r2');
    expect(lab.getState()).toMatchObject({ view: 'trace', selectedExperimentId: 'exp-roll', selectedRunId: 'exp-roll-r2', trace: { status: 'ready', data: { run: { taskId: 't1#r0' } } } });
    await lab.getState().selectRolloutsExperiment(null);
    expect(lab.getState()).toMatchObject({ rolloutsExperimentId: null, rollouts: { status: 'idle' }, rolloutGroup: null });
  });

  it('shows a non-rollouts experiment as a BAD_REQUEST that says so', async () => {
    const lab = createLabStore(client());
    await lab.getState().selectRolloutsExperiment('exp-base');
    expect(lab.getState().rollouts).toMatchObject({ status: 'error', code: 'BAD_REQUEST', message: expect.stringMatching(/not a rollouts experiment/) });
  });

  it('drops a late answer for an experiment the user left', async () => {
    const held = gate();
    const real = client();
    const lab = createLabStore({ ...real, getRollouts: async (p) => (await held.wait, real.getRollouts(p)) });
    const first = lab.getState().selectRolloutsExperiment('exp-roll');
    await lab.getState().selectRolloutsExperiment(null);
    held.open();
    await first;
    expect(lab.getState().rollouts).toEqual({ status: 'idle' });
  });

  it('loads the library and measures only the cards that were used', async () => {
    const real = client();
    const asked: string[] = [];
    const lab = createLabStore({ ...real, getCardEffect: (p) => (asked.push(p.cardId), real.getCardEffect(p)) });
    await lab.getState().loadCards();
    const cards = lab.getState().cards;
    expect(cards.status === 'ready' && cards.data.map((c) => [c.id, c.uses, c.simulated])).toEqual([
      ['card-used', 1, false],
      ['card-new', 0, true],
    ]);
    expect(asked).toEqual(['card-used']);
    expect(lab.getState().cardEffects['card-used']).toMatchObject({
      status: 'ready',
      data: { effect: { basis: 'paired', n: 1, with: { meanScore: 1 }, without: { meanScore: 0 }, delta: { score: 1 } } },
    });
    lab.getState().setCardRole('planner');
    expect(lab.getState().cardRole).toBe('planner');
  });

  it('opens the new views with Alt+7 and Alt+8', () => {
    const key = (code: string) => ({ key: '', code, altKey: true, ctrlKey: false, metaKey: false, shiftKey: false, inTextField: false });
    expect(shortcutFor(key('Digit7'), 'editor')).toEqual({ type: 'view', view: 'rollouts' });
    expect(shortcutFor(key('Digit8'), 'editor')).toEqual({ type: 'view', view: 'cards' });
    expect(shortcutFor(key('Digit9'), 'editor')).toEqual({ type: 'view', view: 'learning' });
    expect(shortcutFor(key('Digit0'), 'editor')).toEqual({ type: 'view', view: 'studies' });
  });
});
