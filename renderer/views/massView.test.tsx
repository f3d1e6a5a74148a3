import { afterEach, describe, expect, it } from 'vitest';
import type { StoreApi } from 'zustand/vanilla';
import { evolve } from '../../core/mass/inner.ts';
import { scripted, spec } from '../../core/mass/loop.fixture.ts';
import { defaultTools } from '../../core/tools/index.ts';
import type { LabState } from '../state.ts';
import { EVOLVE_COMMAND, MassView } from './MassView.tsx';
import { closeViewStores, renderView, storeLab } from './viewTest.fixture.tsx';

afterEach(closeViewStores);

const render = (lab: StoreApi<LabState>): string => renderView(lab, <MassView />);

describe('MASS view', () => {
  it('shows the empty state with the evolve command', async () => {
    const lab = await storeLab();
    await lab.getState().loadMass();
    const html = render(lab);
    expect(html).toContain('data-testid="mass-empty"');
    expect(html).toContain(EVOLVE_COMMAND);
  });

  it('shows the champion timeline (SIMULATED scripted loop) and the diff between two versions', async () => {
    const lab = await storeLab((s) => evolve(spec('evo-v'), { store: s, provider: scripted(), tools: defaultTools() }));
    await lab.getState().loadMass();
    expect(lab.getState().evolution.status).toBe('ready');
    let html = render(lab);
    expect(html).toContain('data-testid="mass-timeline-0"');
    expect(html).toContain('Task 0 <code>learn-tool/train/0</code>: champion v2');
    expect(html.match(/class="mass-new-champion"/g)).toHaveLength(2);
    expect(html.match(/class="mass-rejected">rejected/g)).toHaveLength(2);
    expect(html).toContain('vs v0: ');
    expect(html).toMatch(/candidate shown as [AB]\) → <strong>candidate does not win<\/strong>/);
    await lab.getState().loadDesignDiff(0, 0, 2);
    html = render(lab);
    expect(html).toContain('data-testid="mass-diff"');
    expect(html).toContain('picker role: “Picker P2” → “Picker P5”');
    expect(html).toContain('<span class="diff-add">+ - picker: Picker P5.');
  });
});
