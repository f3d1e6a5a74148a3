/**
 * The defects seen in the lab's state (the store behind the views), one test each, named after
 * what was seen. The host is createHandlers over an in-memory store with a lab host answering
 * from memory; views are rendered to static markup (effects do not run). Pure parts are in
 * lib/defects.test.ts, layout in e2e/defects.test.ts.
 */
import { readFileSync } from 'node:fs';
import { renderToStaticMarkup } from 'react-dom/server';
import type { ReactElement } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import type { StoreApi } from 'zustand/vanilla';
import { ApiError, createHandlers } from '../core/api/index.ts';
import type { LabHost, ModelEntry } from '../core/api/lab.ts';
import { hostOver, storeTracker } from '../test/fixtures.ts';
import { createLabStore, type LabState } from './state.ts';
import { splitFor } from './store/run.ts';
import { LabContext } from './useLab.ts';
import { EditorView } from './views/EditorView.tsx';
import { ModelsView } from './views/ModelsView.tsx';

const TEAM = readFileSync(new URL('../examples/gsm8k-team.yaml', import.meta.url), 'utf8');
const KEPT = '/models/kept.gguf';
const VANISHING = '/models/vanishing.gguf';

const stores = storeTracker();
afterEach(() => stores.closeAll());

const readable = (path: string): ModelEntry => ({ path, fileName: path.split('/').pop()!, sizeBytes: 1000, source: 'added', info: { architecture: 'llama', fileType: 'Q8_0', hasChatTemplate: false } });
const gone = (path: string): ModelEntry => ({ path, fileName: path.split('/').pop()!, sizeBytes: 0, source: 'added', error: `Model file not found: ${path}` });

/** A lab host with two datasets and a model list the test changes (a file deleted between scans). */
function labHost(models: { list: ModelEntry[] }): LabHost {
  return {
    listExamples: () => [],
    listDatasets: () => [
      { name: 'gsm8k', splits: ['train', 'test'], describe: 'grade-school math', available: true },
      { name: 'learn-word', splits: ['train'], describe: 'a toy task', available: true },
    ],
    listModels: () => models.list,
    addModel: ({ path }) => {
      const m = readable(path);
      models.list = [...models.list, m];
      return m;
    },
    testModel: async () => ({ text: '', promptTokens: 0, completionTokens: 0, ms: 0 }),
    startRun: () => {
      throw new ApiError('BAD_REQUEST', `startRun: Model file not found: ${VANISHING}`, 'startRun');
    },
    cancelRun: () => ({ cancelled: true }),
    activeRuns: () => [],
  };
}

async function openLab(models = { list: [readable(KEPT)] }) {
  const lab = createLabStore(hostOver(createHandlers({ store: stores.open(), version: 't', lab: labHost(models) })));
  await lab.getState().loadCatalog();
  lab.getState().loadText(TEAM, null);
  await lab.getState().validateNow();
  return { lab, models };
}

/** A view's text for the store's current state (zustand reads getInitialState on the server). */
function textOf(lab: StoreApi<LabState>, view: ReactElement): string {
  const store: StoreApi<LabState> = { ...lab, getInitialState: lab.getState };
  const html = renderToStaticMarkup(<LabContext.Provider value={store}>{view}</LabContext.Provider>);
  return html.replace(/<[^>]+>/g, ' ').replace(/&quot;/g, '"').replace(/&#x27;/g, "'").replace(/&amp;/g, '&').replace(/\s+/g, ' ');
}

const ONE_NODE = `name: one
roles:
  solver: { kind: executor }
nodes:
  - id: solve
    role: solver
    inputs: { question: task.question }
    prompt: "Q: {{question}}"
`;

describe('"1 nodes"', () => {
  it('the editor says "valid · … · 1 node" for a one-node workflow', async () => {
    const { lab } = await openLab();
    lab.getState().loadText(ONE_NODE, null);
    await lab.getState().validateNow();
    expect(lab.getState().editor.validation).toMatchObject({ status: 'ready', data: { ok: true } });
    const t = textOf(lab, <EditorView />);
    expect(t).toMatch(/valid · \w+ notation · 1 node\b/);
    expect(t).not.toContain('1 nodes');
  });
});

describe('internal names in messages ("addModel: payload field "path": must be an absolute path")', () => {
  it('the Models view says what is wrong with the path, without the method name', async () => {
    const { lab } = await openLab();
    expect(await lab.getState().addModel('models/tiny.gguf')).toBe(false);
    // The store keeps the API's message (tests and logs read it); the view words it for people.
    expect(lab.getState().addModelResult).toMatchObject({ status: 'error', code: 'BAD_REQUEST', message: expect.stringContaining('addModel: payload field "path"') });
    const t = textOf(lab, <ModelsView />);
    expect(t).toContain('✗ The model file path must be an absolute path');
    expect(t).not.toMatch(/addModel|payload field|BAD_REQUEST/);
  });
});

describe('a node added with no prompt and no inputs counts as valid', () => {
  it('adding a bare agent node from the editor makes the workflow invalid, naming the node', async () => {
    const { lab } = await openLab();
    expect(lab.getState().editor.validation).toMatchObject({ status: 'ready', data: { ok: true } });
    expect(lab.getState().editGraph({ op: 'addNode', node: { id: 'extra', kind: 'agent', role: 'solver' } })).toBe(true);
    await lab.getState().validateNow();
    const v = lab.getState().editor.validation;
    if (v.status !== 'ready' || v.data.ok) throw new Error('expected the added node to be flagged');
    expect(v.data.issues.map((i) => i.message)).toEqual([expect.stringMatching(/^node "extra" has no prompt and no inputs/)]);
    // So the Run view refuses to start it.
    lab.getState().setDefaultModel(KEPT);
    const req = lab.getState().runRequest();
    expect(!req.ok && req.problems).toContain('The workflow has validation issues: fix them in the Editor.');
  });
});

describe('seed −5 accepted', () => {
  it('refuses a negative seed (and one past 2^31−1) before anything is sent', async () => {
    const { lab } = await openLab();
    lab.getState().setDefaultModel(KEPT);
    expect(lab.getState().runRequest().ok).toBe(true);
    lab.getState().setRunForm({ seed: -5 });
    const req = lab.getState().runRequest();
    expect(req.ok).toBe(false);
    expect(!req.ok && req.problems).toEqual(['Seed must be a whole number from 0 to 2147483647.']);
    lab.getState().setRunForm({ seed: 2 ** 31 });
    expect(lab.getState().runRequest().ok).toBe(false);
    lab.getState().setRunForm({ seed: 0 });
    expect(lab.getState().runRequest().ok).toBe(true);
  });
});

describe('the split stays "train" after switching the dataset back', () => {
  it('restores the split last chosen for each dataset (test for gsm8k, as preselected)', async () => {
    const { lab } = await openLab();
    expect(lab.getState().runForm).toMatchObject({ dataset: 'gsm8k', split: 'test' });
    const choose = (dataset: string, splits: string[]) => lab.getState().setRunForm({ dataset, split: splitFor(dataset, splits, lab.getState().runForm.splitByDataset) });
    choose('learn-word', ['train']);
    expect(lab.getState().runForm.split).toBe('train');
    choose('gsm8k', ['train', 'test']);
    expect(lab.getState().runForm.split).toBe('test');
    // A split the user picked is the one restored.
    lab.getState().setRunForm({ split: 'train' });
    choose('learn-word', ['train']);
    choose('gsm8k', ['train', 'test']);
    expect(lab.getState().runForm.split).toBe('train');
  });
});

describe('a stale "✓ Added vanishing.gguf." after Rescan showed it missing, the unreadable model still selectable', () => {
  it('clears the notice once a scan shows the file unreadable, and refuses to run with it', async () => {
    const { lab, models } = await openLab();
    expect(await lab.getState().addModel(VANISHING)).toBe(true);
    expect(lab.getState().addModelResult).toMatchObject({ status: 'ready', data: { fileName: 'vanishing.gguf' } });
    lab.getState().setDefaultModel(VANISHING);
    expect(lab.getState().runRequest().ok).toBe(true);
    // The file is deleted; Rescan.
    models.list = [readable(KEPT), gone(VANISHING)];
    await lab.getState().loadModels();
    expect(lab.getState().addModelResult.status).toBe('idle');
    const req = lab.getState().runRequest();
    expect(!req.ok && req.problems.join(' ')).toMatch(/vanishing\.gguf chosen for the default cannot be read \(Model file not found: \/models\/vanishing\.gguf\): choose another/);
    // A notice for a file that is still fine stays.
    await lab.getState().addModel('/models/other.gguf');
    await lab.getState().loadModels();
    expect(lab.getState().addModelResult.status).toBe('ready');
  });
});

describe('internal names in messages ("✗ startRun: Model file not found … [BAD_REQUEST]")', () => {
  it("shows a failed start in the user's words", async () => {
    const { lab } = await openLab();
    lab.getState().setDefaultModel(KEPT);
    await lab.getState().startRun();
    expect(lab.getState().runError).toBe(`Could not start: Model file not found: ${VANISHING}`);
  });
});

describe('when the server stops mid-run only "cancelled" shows and Start stays enabled', () => {
  it('marks the connection lost (Start refuses meanwhile) and resyncs when it is back', async () => {
    const { lab } = await openLab();
    lab.getState().setDefaultModel(KEPT);
    lab.getState().setConnection({ state: 'lost', attempt: 1, retryInMs: 1000, downSince: 5 });
    expect(lab.getState().serverDown).toBe(true);
    await lab.getState().startRun();
    // Nothing was sent: no error from the host, no run started.
    expect(lab.getState()).toMatchObject({ starting: false, runError: null, live: null });
    lab.getState().setConnection({ state: 'open', attempt: 0, retryInMs: null, downSince: null });
    expect(lab.getState().serverDown).toBe(false);
  });
});

describe('deleting a node listed one issue twice', () => {
  it('removing verify leaves one issue for the solver prompt\'s missing "feedback" port, naming both uses', async () => {
    const { lab } = await openLab();
    expect(lab.getState().editGraph({ op: 'removeNode', id: 'verify' })).toBe(true);
    await lab.getState().validateNow();
    const v = lab.getState().editor.validation;
    if (v.status !== 'ready' || v.data.ok) throw new Error('expected validation issues');
    const feedback = v.data.issues.filter((i) => /"feedback"/.test(i.message));
    expect(feedback).toHaveLength(1);
    expect(feedback[0]!.message).toMatch(/uses \{\{feedback\}\}, \{\{feedback\.reason\}\} but the node has no input port "feedback"/);
    const keys = v.data.issues.map((i) => `${i.code} ${i.path.join('.')} ${i.message}`);
    expect(new Set(keys).size).toBe(keys.length);
  });
});
