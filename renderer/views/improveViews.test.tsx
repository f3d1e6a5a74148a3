import { renderToStaticMarkup } from 'react-dom/server';
import { afterEach, describe, expect, it } from 'vitest';
import type { StoreApi } from 'zustand/vanilla';
import { createLabStore, type LabState } from '../state.ts';
import { closeImproveStores, emptyClient, improveClient } from '../store/improve.fixture.ts';
import { LabContext } from '../useLab.ts';
import { CardsView, DISTILL_COMMAND } from './CardsView.tsx';
import { ROLLOUTS_COMMAND, RolloutsView } from './RolloutsView.tsx';

afterEach(closeImproveStores);

/**
 * The view's markup for the store's current state (effects do not run on the server; zustand
 * reads `getInitialState` there, so it is pointed at the current state).
 */
function render(lab: StoreApi<LabState>, view: 'rollouts' | 'cards'): string {
  const store: StoreApi<LabState> = { ...lab, getInitialState: lab.getState };
  return renderToStaticMarkup(<LabContext.Provider value={store}>{view === 'rollouts' ? <RolloutsView /> : <CardsView />}</LabContext.Provider>);
}

/** Markup with tags dropped, entities decoded, and whitespace squeezed, to read text in. */
const text = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&#x27;/g, "'").replace(/&quot;/g, '"').replace(/&amp;/g, '&').replace(/\s+/g, ' ');

describe('Rollouts view', () => {
  it('shows a group\'s rollouts side by side with h, signed A and the outcome advantage', async () => {
    const lab = createLabStore(improveClient());
    await lab.getState().refresh();
    await lab.getState().selectRolloutsExperiment('exp-roll');
    const html = render(lab, 'rollouts');
    for (const id of ['rollouts-experiment', 'rollouts-group-0', 'rollouts-group-1', 'rollout-col-exp-roll-r0', 'rollout-col-exp-roll-r1']) expect(html).toContain(`data-testid="${id}"`);
    expect(html).not.toContain('data-testid="rollout-col-exp-roll-r2"'); // group t1 is not shown until chosen
    const t = text(html);
    expect(t).toContain('G = 2');
    expect(t).toContain('mode single:solver');
    expect(t).toMatch(/r0 ✓ correct seed 0 score 1\.00 solver h 0\.90 ▲ A \+1\.00 \(positive\)/);
    expect(t).toMatch(/r1 ✗ wrong seed 1 score 0\.00 solver h 0\.30 ▼ A −1\.00 \(negative\)/);
    expect(t).toContain('task 1 t1 · 0/2 ✓ · no signal');
  });

  it('flags the chosen zero-spread group as having no learning signal', async () => {
    const lab = createLabStore(improveClient());
    await lab.getState().refresh();
    await lab.getState().selectRolloutsExperiment('exp-roll');
    lab.getState().selectRolloutGroup(1);
    const html = render(lab, 'rollouts');
    expect(html).toContain('data-testid="rollout-col-exp-roll-r2"');
    expect(html).toContain('data-testid="no-signal"');
    expect(text(html)).toContain('no learning signal: every learning role got the same h in every rollout');
    expect(text(html)).toMatch(/= A 0\.00 \(zero\)/);
  });

  it('says how to make rollouts when there are none', async () => {
    const lab = createLabStore(emptyClient());
    await lab.getState().refresh();
    const html = render(lab, 'rollouts');
    expect(html).toContain('data-testid="rollouts-empty"');
    expect(text(html)).toContain(ROLLOUTS_COMMAND);
    expect(ROLLOUTS_COMMAND).toMatch(/^npm run flowlab -- rollouts .* --group 4/);
  });
});

describe('Prior library view', () => {
  it('lists cards with provenance, use counts, SIMULATED marker and measured effect', async () => {
    const lab = createLabStore(improveClient());
    await lab.getState().loadCards();
    const html = render(lab, 'cards');
    for (const id of ['card-card-used', 'card-effect-card-used', 'card-card-new', 'card-effect-card-new']) expect(html).toContain(`data-testid="${id}"`);
    const t = text(html);
    expect(t).toContain('Show the expression role solver used in 1 run');
    expect(t).toContain('role planner SIMULATED not used yet');
    expect(t).toContain('Applies when arithmetic Advice Write it out.');
    expect(t).toContain('Teacher tiny.gguf Shots 1 (successful trajectories only) Source runs exp-roll-r0 Experiment exp-roll');
    expect(t).toContain('▲ score 0.0% → 100.0% (+100.0 pts) · h(solver) 0.30 → 0.90 (+0.60)');
    expect(t).toContain('n = 1 paired task (with the card vs the same task without it, same seeds)');
    const unused = /data-testid="card-effect-card-new".*?<\/div>/s.exec(html)![0];
    expect(text(unused)).toContain('not measured yet: run with --cards and compare');
  });

  it('says how to distil a card when the library is empty', async () => {
    const lab = createLabStore(emptyClient());
    await lab.getState().loadCards();
    const html = render(lab, 'cards');
    expect(html).toContain('data-testid="cards-empty"');
    expect(text(html)).toContain(DISTILL_COMMAND);
    expect(text(html)).toContain('flowlab compare <without-cards> <with-cards>');
  });
});
