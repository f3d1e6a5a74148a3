/**
 * `getBlameEval`: a stored blame evaluation read back through the API is the report the
 * evaluation returned when it ended (what `flowlab blame-eval --json` prints), field for field;
 * other experiments and unknown ids are refused with their code and field.
 */
import { describe, expect, it } from 'vitest';
import { startExperiment } from '../../experiments/index.ts';
import { designedBlameEval, tools } from '../../experiments/designedBlameEval.fixture.ts';
import { computeWorkflowHash } from '../../store/index.ts';
import { createHandlers } from '../handlers.ts';

describe('getBlameEval', () => {
  it('answers the report the blame evaluation printed when it ended, with its inject specs', async () => {
    const { store, deps, spec } = designedBlameEval();
    const out = await (await startExperiment(spec, deps)).done;
    const api = createHandlers({ store, version: 'test', tools });
    const view = api.getBlameEval({ experimentId: out.experimentId });
    // The CLI's --json object: { experimentId, simulated, inject, ...report }.
    expect(view).toEqual({ experimentId: out.experimentId, simulated: true, inject: spec.inject, ...out.blame!.report });
    // The fixture's figures (cli/blameEval.test.ts reads the same run): 40 runs, the designer found every time.
    expect(view.runs).toBe(40);
    expect(view.byRole.designer).toMatchObject({ precision: 1, recall: 1 });
    expect(view.byKind.dangling_edge!.injected).toBeGreaterThan(0);
    store.close();
  });

  it('refuses an experiment that is not a blame evaluation (BAD_REQUEST) and an unknown id (NOT_FOUND)', async () => {
    const { store } = designedBlameEval();
    const yaml = 'name: plain\nsteps: []\n';
    store.createExperiment({ id: 'exp-plain', kind: 'run', workflowName: 'plain', workflowYaml: yaml, workflowHash: computeWorkflowHash(yaml), dataset: 'gsm8k', split: 'test', seed: 0, config: {}, tasks: [] });
    const api = createHandlers({ store, version: 'test', tools });
    // Store reads answer synchronously on the host: the error is thrown, not a rejection.
    const fails = (payload: unknown) => {
      try {
        api.getBlameEval(payload as never);
      } catch (err) {
        return err;
      }
      throw new Error('getBlameEval did not throw');
    };
    expect(fails({ experimentId: 'exp-plain' })).toMatchObject({ code: 'BAD_REQUEST', field: 'experimentId', message: expect.stringContaining('exp-plain is a run experiment, not a blame evaluation') });
    expect(fails({ experimentId: 'exp-none' })).toMatchObject({ code: 'NOT_FOUND' });
    expect(fails({ experimentId: '' })).toMatchObject({ code: 'BAD_REQUEST', field: 'experimentId' });
    store.close();
  });
});
