import { afterEach, describe, expect, it } from 'vitest';
import type { StoreApi } from 'zustand/vanilla';
import { computeWorkflowHash } from '../../core/store/index.ts';
import { roleLadder, runRecord } from '../../test/fixtures.ts';
import { TRAIN_LOOP_COMMAND } from '../lib/learning.ts';
import type { LabState } from '../state.ts';
import { LearningView } from './LearningView.tsx';
import { closeViewStores, renderView, storeLab } from './viewTest.fixture.tsx';

afterEach(closeViewStores);

const render = (lab: StoreApi<LabState>): string => renderView(lab, <LearningView />);

describe('Learning view', () => {
  it('shows the empty state with the train-loop command', async () => {
    const lab = await storeLab();
    await lab.getState().loadLearning();
    const html = render(lab);
    expect(html).toContain('data-testid="learning-empty"');
    expect(html.replace(/&#x27;/g, "'")).toContain(TRAIN_LOOP_COMMAND);
  });

  it('shows a role tab, the rung table, the lineage and the before/after block', async () => {
    const lab = await storeLab((s) => {
      const hyper = { loopId: 'tl-1', lr: 0.001 };
      s.weights.save({ id: 'wv-1', role: 'solver', basePath: '/b.gguf', path: '/v/iter-001.gguf', iteration: 1, hyper, metrics: { reward: 0.2, kl: 0.01, rungs: { format: 1, validity: 1, completion: 1, correctness: 0, credit: 0 } }, createdAt: 1 });
      s.weights.save({ id: 'wv-2', role: 'solver', basePath: '/b.gguf', path: '/v/iter-002.gguf', parentId: 'wv-1', iteration: 2, hyper, metrics: { reward: 0.7, kl: 0.02 }, createdAt: 2 });
    });
    await lab.getState().loadLearning();
    expect(lab.getState().learning.status).toBe('ready');
    const html = render(lab);
    for (const id of ['learning-role-solver', 'learning-chart', 'learning-versions', 'version-wv-1', 'version-wv-2', 'learning-before-after']) expect(html).toContain(`data-testid="${id}"`);
    expect(html).toContain('no held-out evaluation recorded for this loop');
    expect(html).toMatch(/<td>2<\/td><td>0\.70<\/td>/);
    expect(html).toContain('/v/iter-002.gguf');
  });

  it('shows the co-evolution of a designer and an executor trained in one loop, with a legend per role', async () => {
    const lab = await storeLab((s) => {
      const hyper = { loopId: 'tl-co' };
      let t = 0;
      for (const [role, rewards] of [['designer', [0.1, 0.5]], ['executor', [0.2, 0.6]]] as const) {
        rewards.forEach((reward, i) => s.weights.save({ id: `wv-${role}-${i + 1}`, role, basePath: '/b.gguf', path: `/v/${role}-${i + 1}.gguf`, iteration: i + 1, hyper, metrics: { reward }, createdAt: ++t }));
      }
    });
    await lab.getState().loadLearning();
    const html = render(lab);
    expect(html).toContain('data-testid="coevolution-chart"');
    expect(html).toContain('Co-evolution: designer and executor');
    for (const r of ['designer', 'executor']) expect(html).toContain(`data-testid="learning-role-${r}"`);
  });

  it('marks a constant held-out evaluation CONSTANT beside its best constant policy', async () => {
    const YAML = 'name: learn\nsteps: []\n';
    const lab = await storeLab((s) => {
      for (const [id, phase] of [['exp-before', 'heldout-before'], ['exp-after', 'heldout-after']] as const) {
        // Labels weather:now, search:word, math:add (3 classes); every run answers math:add: right once, CONSTANT.
        const labels = ['weather:now', 'search:word', 'math:add'];
        s.createExperiment({ id, kind: 'run', workflowName: 'learn', workflowYaml: YAML, workflowHash: computeWorkflowHash(YAML), dataset: 'learn-design', split: 'heldout', seed: 1, config: { trainLoop: { loopId: 'tl-1', phase } }, tasks: labels.map((expected, i) => ({ taskIndex: i, taskId: `t${i}`, input: {}, expected })) });
        labels.forEach((expected, i) => s.saveRun(runRecord(id, i, { answer: 'math:add', expected, score: expected === 'math:add' ? 1 : 0, correct: expected === 'math:add', ladder: { solver: roleLadder('solver', 0.5) } }), []));
      }
      s.weights.save({ id: 'wv-1', role: 'solver', basePath: '/b.gguf', path: '/v/iter-001.gguf', iteration: 1, hyper: { loopId: 'tl-1' }, metrics: { reward: 0.2 }, createdAt: 1 });
    });
    await lab.getState().loadLearning();
    const html = render(lab);
    // accuracy 1/3; best constant: each label once, the first in order (math:add) 1/3; 1 answer.
    expect(html).toContain('<td>0.33</td><td data-testid="learning-guard-before">0.33 · 1<strong class="error"> CONSTANT &quot;math:add&quot; 100.0%</strong></td>');
    expect(html).toContain('data-testid="learning-guard-after"');
  });
});
