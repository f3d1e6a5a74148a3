import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, createHandlers, createRemoteApi, type FlowlabApi } from '../core/api/index.ts';
import type { LabEvent, LabHost, TestGeneration } from '../core/api/lab.ts';
import { asExperimentId, asNodeId, asRunId, HUMAN } from '../core/ids.ts';
import { computeWorkflowHash } from '../core/store/index.ts';
import { gate, hostOver, storeTracker } from '../test/fixtures.ts';
import type { LabClient } from './client.ts';
import { createLabStore, type StoreDeps } from './state.ts';

const TEAM = readFileSync(new URL('../examples/gsm8k-team.yaml', import.meta.url), 'utf8');
const MODEL = '/models/tiny.gguf';

const stores = storeTracker();
afterEach(() => stores.closeAll());

/** A lab host that answers from memory and records what it was asked. */
function fakeLab(): LabHost & { started: unknown[]; cancelled: string[] } {
  const started: unknown[] = [];
  const cancelled: string[] = [];
  return {
    started,
    cancelled,
    listExamples: () => [{ file: 'examples/gsm8k-team.yaml', name: 'gsm8k-team', text: TEAM }],
    listDatasets: () => [{ name: 'gsm8k', splits: ['train', 'test'], describe: 'grade-school math', available: true }],
    listModels: () => [{ path: MODEL, fileName: 'tiny.gguf', sizeBytes: 1000, source: 'folder', info: { architecture: 'llama', fileType: 'Q8_0', hasChatTemplate: false } }],
    addModel: ({ path }) => {
      throw new ApiError('BAD_REQUEST', `addModel: ${path} is not a GGUF file`, 'addModel', 'path');
    },
    testModel: async () => ({ text: 'there was', promptTokens: 4, completionTokens: 2, ms: 5 }),
    startRun: (p) => {
      started.push(p);
      return { experimentId: 'exp-new' };
    },
    cancelRun: ({ experimentId }) => {
      cancelled.push(experimentId);
      return { cancelled: true };
    },
    activeRuns: () => [],
  };
}

function seededApi(lab: LabHost = fakeLab()): FlowlabApi {
  const store = stores.open();
  const id = asExperimentId('exp-ui');
  store.createExperiment({
    id, kind: 'run', workflowName: 'gsm8k-team', workflowYaml: TEAM, workflowHash: computeWorkflowHash(TEAM),
    dataset: 'gsm8k', split: 'test', seed: 1, config: null,
    tasks: [{ taskIndex: 0, taskId: 't0', input: {} }],
  });
  const runId = asRunId('exp-ui-r0');
  store.saveRun(
    { runId, experimentId: id, taskIndex: 0, taskId: 't0', status: 'failed', score: 0, correct: false, seed: 1, promptTokens: 0, completionTokens: 0, startedAt: 0, endedAt: 5, failures: { wiring: 1 } },
    [{ runId, nodeId: asNodeId('calculate'), attempt: 1, seq: 0, kind: 'tool', wiredBy: HUMAN, inputs: {}, status: 'failed', failureClass: 'wiring', errorCode: 'UNKNOWN_TOOL', message: 'no tool x', calls: [], startedAt: 1, endedAt: 2 }],
  );
  return createHandlers({ store, version: '0.0.1', lab });
}

/** Timers and frames the test runs by hand. */
function manualDeps(): StoreDeps & { frames: Array<() => void>; timers: Array<() => void>; runFrames(): void; runTimers(): void } {
  const frames: Array<() => void> = [];
  const timers: Array<() => void> = [];
  return {
    frames,
    timers,
    prefersDark: false,
    schedule: (fn) => void frames.push(fn),
    delay: (fn) => {
      timers.push(fn);
      return () => {
        const i = timers.indexOf(fn);
        if (i >= 0) timers.splice(i, 1);
      };
    },
    runFrames: () => frames.splice(0).forEach((f) => f()),
    runTimers: () => timers.splice(0).forEach((f) => f()),
  };
}

const client = (lab?: LabHost): LabClient => hostOver(seededApi(lab));
const settle = () => new Promise((r) => setTimeout(r, 0));

describe('browse', () => {
  it('loads experiments (with their runs), then an experiment, then a run trace', async () => {
    const lab = createLabStore(client());
    await lab.getState().refresh();
    expect(lab.getState().experiments).toMatchObject({ status: 'ready', data: [{ id: 'exp-ui', runsDone: 1, accuracy: 0 }] });
    expect(lab.getState().runsByExperiment['exp-ui']).toMatchObject({ status: 'ready', data: [{ failures: { wiring: 1 } }] });
    await lab.getState().selectExperiment('exp-ui');
    expect(lab.getState().runs).toMatchObject({ status: 'ready', data: [{ runId: 'exp-ui-r0', status: 'failed' }] });
    expect(lab.getState().experiment).toMatchObject({ status: 'ready', data: { workflowYaml: TEAM } });
    await lab.getState().selectRun('exp-ui-r0');
    const trace = lab.getState().trace;
    expect(trace.status === 'ready' && trace.data.events.map((e) => [e.nodeId, e.failureClass, e.errorCode])).toEqual([['calculate', 'wiring', 'UNKNOWN_TOOL']]);
    lab.getState().selectTraceNode('calculate');
    expect(lab.getState().traceNode).toBe('calculate');
    await lab.getState().selectExperiment(null);
    expect(lab.getState()).toMatchObject({ selectedExperimentId: null, selectedRunId: null, traceNode: null, runs: { status: 'idle' }, trace: { status: 'idle' } });
  });

  it('shows API failures with their code rebuilt from the wire', async () => {
    const lab = createLabStore(client());
    await lab.getState().selectRun('no-such-run');
    expect(lab.getState().trace).toMatchObject({ status: 'error', code: 'NOT_FOUND', message: expect.stringMatching(/^getRunTrace: .*no run no-such-run$/) });
  });

  it('drops a slow answer for a selection the user already left', async () => {
    const held = gate();
    const real = client();
    const slow: LabClient = { ...real, listRuns: async (p) => (await held.wait, real.listRuns(p)) };
    const lab = createLabStore(slow);
    const first = lab.getState().selectExperiment('exp-ui');
    await lab.getState().selectExperiment(null);
    held.open();
    await first;
    expect(lab.getState().runs).toEqual({ status: 'idle' });
  });

  it('reports UNAVAILABLE when the host cannot answer', async () => {
    const none = createRemoteApi(async (method) => {
      throw new ApiError('UNAVAILABLE', `${method}: no host`, method);
    });
    const lab = createLabStore(none);
    await lab.getState().refresh();
    expect(lab.getState().experiments).toMatchObject({ status: 'error', code: 'UNAVAILABLE' });
  });
});

describe('editor', () => {
  it('opens an example, draws its graph and validates it through the host', async () => {
    const lab = createLabStore(client());
    await lab.getState().loadCatalog();
    const examples = lab.getState().examples;
    expect(examples.status).toBe('ready');
    if (examples.status !== 'ready') return;
    lab.getState().openExample(examples.data[0]!);
    await settle();
    const { editor } = lab.getState();
    expect(editor.file).toBe('examples/gsm8k-team.yaml');
    expect(editor.graph?.nodes.map((n) => n.id)).toEqual(['plan', 'solve', 'calculate', 'verify', 'answer']);
    expect(editor.validation).toMatchObject({ status: 'ready', data: { ok: true, summary: { name: 'gsm8k-team' } } });
  });

  it('debounces typing, and drops a validation answer for text changed since', async () => {
    const deps = manualDeps();
    const held = gate();
    const real = client();
    const calls: string[] = [];
    const slow: LabClient = {
      ...real,
      validateWorkflow: async (p) => {
        calls.push(p.text);
        if (calls.length === 1) await held.wait;
        return real.validateWorkflow(p);
      },
    };
    const lab = createLabStore(slow, deps);
    lab.getState().setText('name: a\n');
    lab.getState().setText('name: ab\n');
    expect(deps.timers).toHaveLength(1); // one pending validation, not two
    deps.runTimers();
    expect(calls).toEqual(['name: ab\n']);
    lab.getState().setText(TEAM); // the user keeps typing while the first answer is on its way
    held.open();
    await settle();
    expect(lab.getState().editor.validation.status).not.toBe('ready');
    deps.runTimers();
    await settle();
    expect(lab.getState().editor.validation).toMatchObject({ status: 'ready', data: { ok: true } });
    expect(calls).toEqual(['name: ab\n', TEAM]);
  });

  it('reports issues for an invalid document and keeps the graph drawn', async () => {
    const lab = createLabStore(client());
    lab.getState().loadText(TEAM.replace('role: answerer', 'role: ghost'), null);
    await settle();
    const v = lab.getState().editor.validation;
    expect(v.status === 'ready' && !v.data.ok && v.data.issues.map((i) => [i.code, i.path.join('.'), i.line])).toEqual([['UNKNOWN_ROLE', 'nodes.4.role', 73]]);
    expect(lab.getState().editor.graph?.nodes).toHaveLength(5);
  });

  it('applies graph edits to the text, revalidates, and undoes them', async () => {
    const lab = createLabStore(client());
    lab.getState().loadText(TEAM, 'examples/gsm8k-team.yaml');
    await settle();
    expect(lab.getState().editGraph({ op: 'setRole', id: 'answer', role: 'verifier' })).toBe(true);
    await settle();
    expect(lab.getState().editor.text).toContain('  - id: answer\n    role: verifier\n');
    expect(lab.getState().editor.graph?.nodes.find((n) => n.id === 'answer')?.role).toBe('verifier');
    expect(lab.getState().editor.validation).toMatchObject({ status: 'ready', data: { ok: true } });
    expect(lab.getState().editGraph({ op: 'removeNode', id: 'nope' })).toBe(false);
    expect(lab.getState().notice).toMatchObject({ tone: 'error', text: expect.stringContaining('no node "nope"') });
    lab.getState().undoGraphEdit();
    expect(lab.getState().editor.text).toBe(TEAM);
  });

  it('selecting a node asks the text to move its caret to the node', () => {
    const lab = createLabStore(client());
    lab.getState().loadText(TEAM, null);
    lab.getState().selectEditorNode('solve');
    expect(lab.getState().editor).toMatchObject({ selectedNode: 'solve', caret: { line: 35, focus: false } });
  });
});

describe('run', () => {
  it('says what is missing before it starts anything', () => {
    const lab = createLabStore(client());
    const r = lab.getState().runRequest();
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems.join(' ')).toMatch(/Open or write a workflow.*Pick a dataset/);
  });

  it('starts with models per role and SIMULATED faults, folds events once per frame, cancels', async () => {
    const host = fakeLab();
    const deps = manualDeps();
    // The fake host starts nothing in the store, so cancel goes to it directly (the handler would say NOT_FOUND).
    const lab = createLabStore({ ...client(host), cancelRun: async (p) => host.cancelRun(p) }, deps);
    await lab.getState().loadCatalog();
    expect(lab.getState().runForm).toMatchObject({ dataset: 'gsm8k', split: 'test' });
    expect(lab.getState().defaultModel).toBe(MODEL); // the only model becomes the default
    lab.getState().loadText(TEAM, 'examples/gsm8k-team.yaml');
    await settle();
    lab.getState().setRoleModel('solver', '/models/solver.gguf');
    lab.getState().setRunForm({ limit: 3, seed: 7 });
    lab.getState().addFault({ role: 'solver', kind: 'contract', rate: 1 });
    await lab.getState().startRun();
    expect(host.started).toEqual([{
      workflowText: TEAM, dataset: 'gsm8k', split: 'test', limit: 3, seed: 7,
      models: { default: MODEL, roles: { solver: '/models/solver.gguf' } },
      inject: ['solver=contract@1'],
    }]);
    expect(lab.getState().live).toMatchObject({ experimentId: 'exp-new', status: 'starting', total: 3 });
    expect(lab.getState().runGraph?.nodes).toHaveLength(5);

    let updates = 0;
    const unsubscribe = lab.subscribe((s, prev) => void (s.live !== prev.live && updates++));
    const events: LabEvent[] = [
      { type: 'node', experimentId: 'exp-new', runId: 'r0', nodeId: 'plan', attempt: 1, phase: 'started' },
      { type: 'node', experimentId: 'exp-new', runId: 'r0', nodeId: 'plan', attempt: 1, phase: 'finished', status: 'ok' },
      { type: 'node', experimentId: 'exp-new', runId: 'r0', nodeId: 'solve', attempt: 1, phase: 'finished', status: 'failed', failureClass: 'execution', simulated: true },
      { type: 'run', experimentId: 'exp-new', runId: 'r0', taskIndex: 0, done: 1, total: 3, status: 'failed', correct: false },
    ];
    for (const e of events) lab.getState().receive(e);
    expect(deps.frames).toHaveLength(1);
    deps.runFrames();
    unsubscribe();
    expect(updates).toBe(1);
    expect(lab.getState().live).toMatchObject({ status: 'running', done: 1, total: 3, runsFailed: 1, simulatedNodes: 1 });

    await lab.getState().cancelRun();
    expect(host.cancelled).toEqual(['exp-new']);
    lab.getState().receive({ type: 'experiment', experimentId: 'exp-new', status: 'cancelled', done: 1, total: 3 });
    deps.runFrames();
    expect(lab.getState().live?.status).toBe('cancelled');
  });

  it('keeps events that arrive before startRun answers', async () => {
    const host = fakeLab();
    const deps = manualDeps();
    const base = client(host);
    let lab!: ReturnType<typeof createLabStore>;
    const early: LabClient = {
      ...base,
      startRun: async (p) => {
        lab.getState().receive({ type: 'node', experimentId: 'exp-new', runId: 'r0', nodeId: 'plan', attempt: 1, phase: 'started' });
        deps.runFrames();
        return base.startRun(p);
      },
    };
    lab = createLabStore(early, deps);
    await lab.getState().loadCatalog();
    lab.getState().loadText(TEAM, null);
    await settle();
    await lab.getState().startRun();
    expect(lab.getState().live?.runs.r0?.nodes.plan).toMatchObject({ state: 'running' });
  });
});

describe('models', () => {
  it('shows a failed add with its message, and drops a late test answer', async () => {
    const host = fakeLab();
    let calls = 0;
    const held = gate();
    host.testModel = async (): Promise<TestGeneration> => {
      const n = ++calls;
      if (n === 1) await held.wait;
      return { text: `answer ${n}`, promptTokens: 4, completionTokens: 2, ms: 5 };
    };
    const lab = createLabStore(client(host));
    expect(await lab.getState().addModel('/nope.bin')).toBe(false);
    expect(lab.getState().addModelResult).toMatchObject({ status: 'error', code: 'BAD_REQUEST', message: expect.stringContaining('not a GGUF') });
    const first = lab.getState().testModel(MODEL);
    await lab.getState().testModel(MODEL);
    held.open();
    await first;
    expect(lab.getState().modelTests[MODEL]).toMatchObject({ status: 'ready', data: { text: 'answer 2' } });
  });
});
