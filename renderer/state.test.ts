import { afterEach, describe, expect, it } from 'vitest';
import { createHandlers, createRemoteApi, type FlowlabApi, type FlowlabClient } from '../core/api/index.ts';
import { asExperimentId, asNodeId, asRunId, HUMAN } from '../core/ids.ts';
import { computeWorkflowHash, openStore, type Store } from '../core/store/index.ts';
import { createApiClient } from './api.ts';
import { createLabStore } from './state.ts';

const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

/** A client over real handlers on an in-memory store, shaped like the wire (errors as wire strings). */
function hostOver(api: FlowlabApi): FlowlabClient {
  return createRemoteApi(async (method, payload) => {
    try {
      return (api[method] as (p: unknown) => unknown)(payload);
    } catch (err) {
      throw new Error(`Error invoking remote method 'flowlab:${method}': Error: ${(err as { toWire(): string }).toWire()}`);
    }
  });
}

function seededApi(): FlowlabApi {
  const store = openStore(':memory:');
  stores.push(store);
  const yaml = 'name: demo\n';
  const id = asExperimentId('exp-ui');
  store.createExperiment({
    id, kind: 'run', workflowName: 'demo', workflowYaml: yaml, workflowHash: computeWorkflowHash(yaml),
    dataset: 'gsm8k', split: 'test', seed: 1, config: null,
    tasks: [{ taskIndex: 0, taskId: 't0', input: {} }],
  });
  const runId = asRunId('exp-ui-r0');
  store.saveRun(
    { runId, experimentId: id, taskIndex: 0, taskId: 't0', status: 'failed', score: 0, correct: false, seed: 1, promptTokens: 0, completionTokens: 0, startedAt: 0, endedAt: 5, failures: { wiring: 1 } },
    [{ runId, nodeId: asNodeId('calc'), attempt: 1, seq: 0, kind: 'tool', wiredBy: HUMAN, inputs: {}, status: 'failed', failureClass: 'wiring', errorCode: 'UNKNOWN_TOOL', message: 'no tool x', calls: [], startedAt: 1, endedAt: 2 }],
  );
  return createHandlers({ store, version: '0.0.1' });
}

describe('createLabStore', () => {
  it('loads experiments, then runs, then a run trace', async () => {
    const lab = createLabStore(createApiClient(hostOver(seededApi())));
    await lab.getState().refresh();
    const s1 = lab.getState();
    expect(s1.experiments).toMatchObject({ status: 'ready', data: [{ id: 'exp-ui', runsDone: 1, accuracy: 0 }] });
    await lab.getState().selectExperiment('exp-ui');
    expect(lab.getState().runs).toMatchObject({ status: 'ready', data: [{ runId: 'exp-ui-r0', status: 'failed' }] });
    await lab.getState().selectRun('exp-ui-r0');
    const trace = lab.getState().trace;
    expect(trace.status).toBe('ready');
    if (trace.status === 'ready') expect(trace.data.events.map((e) => [e.nodeId, e.failureClass, e.errorCode])).toEqual([['calc', 'wiring', 'UNKNOWN_TOOL']]);
    await lab.getState().selectExperiment(null);
    expect(lab.getState()).toMatchObject({ selectedExperimentId: null, selectedRunId: null, runs: { status: 'idle' }, trace: { status: 'idle' } });
  });

  it('shows API failures with their code rebuilt from the wire', async () => {
    const lab = createLabStore(createApiClient(hostOver(seededApi())));
    await lab.getState().selectRun('no-such-run');
    expect(lab.getState().trace).toMatchObject({ status: 'error', code: 'NOT_FOUND', message: expect.stringMatching(/^getRunTrace: .*no run no-such-run$/) });
  });

  it('drops a slow answer for a selection the user already left', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const real = hostOver(seededApi());
    const slow: FlowlabClient = { ...real, listRuns: async (p) => (await gate, real.listRuns(p)) };
    const lab = createLabStore(slow);
    const first = lab.getState().selectExperiment('exp-ui');
    await lab.getState().selectExperiment(null);
    release();
    await first;
    expect(lab.getState().runs).toEqual({ status: 'idle' });
  });

  it('reports UNAVAILABLE when there is no host API', async () => {
    const lab = createLabStore(createApiClient(undefined));
    await lab.getState().refresh();
    expect(lab.getState().experiments).toMatchObject({ status: 'error', code: 'UNAVAILABLE' });
  });
});
