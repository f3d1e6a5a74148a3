import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectBadRequest, newExperiment, nodeEvents, runRecord, thrownBy } from '../../test/fixtures.ts';
import { asExperimentId } from '../ids.ts';
import { openStore, type Store } from '../store/index.ts';
import { ApiError, API_CHANNELS, API_METHODS, createHandlers, createRemoteApi, type FlowlabApi } from './index.ts';

const YAML = 'name: demo\nsteps: []\n';
const EXP = asExperimentId('exp-api-1');

let store: Store;
let api: FlowlabApi;

beforeEach(() => {
  store = openStore(':memory:');
  store.createExperiment(newExperiment({ id: EXP }));
  const r0 = runRecord(EXP, 0);
  const r1 = runRecord(EXP, 1, { status: 'failed', correct: false, score: 0, answer: undefined, failures: { execution: 1 } });
  store.saveRun(r0, nodeEvents(r0));
  store.saveRun(r1, []);
  api = createHandlers({ store, version: '9.9.9' });
});

afterEach(() => store.close());

const apiError = (fn: () => unknown): ApiError => thrownBy(ApiError, fn);

describe('createHandlers over an in-memory store', () => {
  it('lists experiments with progress and scores, without the workflow text', () => {
    const [e, ...rest] = api.listExperiments();
    expect(rest).toEqual([]);
    expect(e).toMatchObject({
      id: EXP,
      workflowName: 'demo',
      dataset: 'gsm8k',
      status: 'running',
      tasksPlanned: 3,
      runsDone: 2,
      runsCompleted: 1,
      runsCorrect: 1,
      accuracy: 0.5,
      completionRate: 0.5,
    });
    expect(e).not.toHaveProperty('workflowYaml');
    expect(e).not.toHaveProperty('config');
    expect(api.listExperiments({})).toHaveLength(1);
  });

  it('gets one experiment in full', () => {
    const e = api.getExperiment({ id: EXP });
    expect(e.workflowYaml).toBe(YAML);
    expect(e.config).toEqual({ threads: 1 });
    expect(e.runsDone).toBe(2);
    expect(e.meanScore).toBe(0.5);
  });

  it('lists runs in task order', () => {
    const runs = api.listRuns({ experimentId: EXP });
    expect(runs.map((r) => [r.taskIndex, r.status, r.correct])).toEqual([
      [0, 'completed', true],
      [1, 'failed', false],
    ]);
    expect(runs[1]!.failures).toEqual({ execution: 1 });
  });

  it('returns a run trace with its node events and model calls', () => {
    const { run, events } = api.getRunTrace({ runId: `${EXP}-r0` });
    expect(run.taskId).toBe('t0');
    expect(events.map((e) => [e.seq, e.nodeId, e.status, e.failureClass ?? null, e.errorCode ?? null])).toEqual([
      [0, 'plan', 'ok', null, null],
      [1, 'calc', 'failed', 'execution', 'TOOL_ERROR'],
    ]);
    expect(events[0]!.calls[0]).toMatchObject({ promptTokens: 12, completionTokens: 5, completion: 'add two and two' });
    expect(events[1]!.message).toBe('division by zero');
  });

  it('reports unknown ids as NOT_FOUND naming the method', () => {
    const e1 = apiError(() => api.getExperiment({ id: 'nope' }));
    expect(e1.code).toBe('NOT_FOUND');
    expect(e1.method).toBe('getExperiment');
    expect(e1.message).toMatch(/^getExperiment: .*no experiment nope/);
    expect(apiError(() => api.listRuns({ experimentId: 'nope' })).code).toBe('NOT_FOUND');
    expect(apiError(() => api.getRunTrace({ runId: 'nope' })).message).toMatch(/^getRunTrace: .*no run nope/);
  });

  it('reports a closed store as UNAVAILABLE', () => {
    store.close();
    expect(apiError(() => api.listExperiments()).code).toBe('UNAVAILABLE');
  });

  it('tells the app version and database file', () => {
    expect(api.appInfo()).toEqual({ version: '9.9.9', dbFile: ':memory:' });
  });

  it('tells the models folder when the host gives one (the Models view shows it when empty)', () => {
    expect(createHandlers({ store, version: '9.9.9', modelDir: '/u/models' }).appInfo()).toEqual({ version: '9.9.9', dbFile: ':memory:', modelDir: '/u/models' });
  });
});

describe('validateWorkflow', () => {
  it('outlines a valid workflow (the team example)', () => {
    const text = readFileSync(new URL('../../examples/gsm8k-team.yaml', import.meta.url), 'utf8');
    const res = api.validateWorkflow({ text, file: 'gsm8k-team.yaml' });
    if (!res.ok) throw new Error(JSON.stringify(res.issues));
    expect(res.summary.name).toBe('gsm8k-team');
    expect(res.summary.notation).toBe('graph');
    const ids = res.summary.nodes.map((n) => n.id);
    expect(ids).toEqual(expect.arrayContaining(['plan', 'solve']));
    expect(res.summary.nodes.find((n) => n.id === 'plan')).toEqual({ id: 'plan', kind: 'agent', role: 'planner' });
    expect(res.summary.edges).toContainEqual({ from: 'plan', to: 'solve', type: 'data' });
  });

  it('returns located issues for a broken workflow instead of throwing', () => {
    const text = 'name: broken\nroles:\n  a: { kind: planner, instructions: x }\nnodes:\n  - id: n1\n    tool: no_such_tool\n';
    const res = api.validateWorkflow({ text, file: 'broken.yaml' });
    expect(res.ok).toBe(false);
    if (res.ok) return;
    const unknown = res.issues.find((i) => i.code === 'UNKNOWN_TOOL');
    expect(unknown).toMatchObject({ file: 'broken.yaml', line: expect.any(Number) });
  });

  it('reports YAML syntax errors with a line', () => {
    const res = api.validateWorkflow({ text: 'name: [unclosed\n' });
    expect(res.ok).toBe(false);
    if (!res.ok) expect(res.issues[0]).toMatchObject({ code: 'YAML_SYNTAX', line: expect.any(Number) });
  });
});

describe('payload validation', () => {
  // The interface's types stop these at compile time; a renderer can still send them at run time.
  const raw = () => api as unknown as Record<string, (p?: unknown) => unknown>;

  it.each([
    ['getExperiment', undefined, undefined, /getExperiment: payload: expected an object, received undefined/],
    ['getExperiment', 'exp-1', undefined, /getExperiment: payload: expected an object, received string/],
    ['getExperiment', {}, 'id', /getExperiment: payload field "id": missing \(expected string\)/],
    ['getExperiment', { id: '' }, 'id', /getExperiment: payload field "id": must not be empty/],
    ['listRuns', { experimentId: 42 }, 'experimentId', /listRuns: payload field "experimentId": expected string, received number/],
    ['getRunTrace', { runId: 'r', extra: 1 }, 'extra', /getRunTrace: payload: unknown field\(s\) "extra"/],
    ['getRunTrace', { runId: 'x'.repeat(201) }, 'runId', /getRunTrace: payload field "runId": must be at most 200 characters/],
    ['validateWorkflow', { text: null }, 'text', /validateWorkflow: payload field "text": expected string, received null/],
    ['validateWorkflow', { text: 'a', file: 3 }, 'file', /validateWorkflow: payload field "file": expected string, received number/],
    ['listExperiments', { limit: 3 }, 'limit', /listExperiments: payload: unknown field\(s\) "limit"/],
    ['appInfo', [1], undefined, /appInfo: payload: expected an object, received array/],
  ])('%s(%j) is rejected as BAD_REQUEST naming field %s', (method, payload, field, message) => {
    expectBadRequest(() => raw()[method]!(payload), method, field, message);
  });

  it('checks the payload before touching the store', () => {
    store.close();
    expect(apiError(() => raw().listRuns!({ experimentId: 1 })).code).toBe('BAD_REQUEST');
  });
});

describe('channels and the remote client', () => {
  it('allowlists exactly one prefixed channel per method', () => {
    expect(API_CHANNELS).toEqual(API_METHODS.map((m) => `flowlab:${m}`));
    expect(Object.keys(api).sort()).toEqual([...API_METHODS].sort());
  });

  it('builds a promise client that forwards method and payload', async () => {
    const seen: [string, unknown][] = [];
    const client = createRemoteApi(async (method, payload) => {
      seen.push([method, payload]);
      return (api as unknown as Record<string, (p: unknown) => unknown>)[method]!(payload);
    });
    expect(Object.keys(client)).toEqual([...API_METHODS]);
    expect((await client.listRuns({ experimentId: EXP })).length).toBe(2);
    expect(await client.appInfo()).toEqual({ version: '9.9.9', dbFile: ':memory:' });
    expect(seen).toEqual([
      ['listRuns', { experimentId: EXP }],
      ['appInfo', undefined],
    ]);
  });

  it('round-trips an ApiError through its wire form and Electron prefix', () => {
    const err = new ApiError('NOT_FOUND', 'getRunTrace: :memory:: no run r9', 'getRunTrace');
    const electron = new Error(`Error invoking remote method 'flowlab:getRunTrace': Error: ${err.toWire()}`);
    const back = ApiError.fromWire(electron);
    expect([back.code, back.message, back.method]).toEqual(['NOT_FOUND', err.message, 'getRunTrace']);
    expect(ApiError.fromWire(new Error('socket hang up'))).toMatchObject({ code: 'INTERNAL', message: 'socket hang up' });
  });
});
