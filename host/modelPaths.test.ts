/**
 * A confined lab host (as `flowlab serve` runs it) reads model files only inside its model
 * folders and the files it was given at start. Each row of `PATH_PROBES` is one request that
 * tries to reach outside, with the code and field it must get; the fake readers record every
 * path they are asked to read, so the test also shows that nothing outside was touched (the
 * answer can reveal neither contents nor existence).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiError, type FlowlabApi, type StartRunRequest } from '../core/api/index.ts';
import { ScriptedProvider } from '../core/model/index.ts';
import { labPerTest, writeGsm8kTasks } from '../test/fixtures.ts';
import { createLabHost, type ModelHeader } from './index.ts';
import { ModelPaths } from './modelPaths.ts';

const SINGLE = 'name: one\nroles:\n  solver: { kind: executor, instructions: Solve. }\nsteps:\n  - id: solve\n    role: solver\n    prompt: "Q: {{task.question}}"\n    output: { schema: { type: object, properties: { answer: { type: number } }, required: [answer] } }\nanswer: solve.answer\n';
const withModelPath = (p: string) => `name: one\nmodels:\n  default: { path: ${JSON.stringify(p)} }\nroles:\n  solver: { kind: executor, instructions: Solve. }\nsteps:\n  - id: solve\n    role: solver\n    prompt: "Q: {{task.question}}"\nanswer: solve\n`;

/** Paths the fakes were asked to read. */
let touched: string[] = [];

const t = labPerTest('confine', (h) => {
  touched = [];
  writeGsm8kTasks(path.join(h.dir, 'data'));
  mkdirSync(path.join(h.dir, 'models'));
  writeFileSync(path.join(h.dir, 'models/tiny.gguf'), 'GGUF');
  mkdirSync(path.join(h.dir, 'extra'));
  writeFileSync(path.join(h.dir, 'given.gguf'), 'GGUF');
  writeFileSync(path.join(h.dir, 'secret.txt'), 'root:x:0:0');
  return createLabHost({
    store: h.store,
    dbFile: path.join(h.dir, 'lab.db'),
    modelDir: path.join(h.dir, 'models'),
    modelRoots: { folders: [path.join(h.dir, 'extra')], files: [path.join(h.dir, 'given.gguf')] },
    examplesDir: path.join(h.dir, 'examples'),
    dataDir: path.join(h.dir, 'data'),
    emit: (e) => h.events.push(e),
    createProvider: async () => new ScriptedProvider(() => '{"answer": 4}'),
    checkModel: async (file) => {
      touched.push(file);
    },
    readHeader: async (file): Promise<ModelHeader> => {
      touched.push(file);
      return { architecture: 'llama', fileType: 'F32', hasChatTemplate: false };
    },
  });
});

const run = (over: Partial<StartRunRequest> = {}): StartRunRequest => ({
  workflowText: SINGLE, dataset: 'gsm8k', split: 'test', limit: 1, seed: 1, models: { default: path.join(t.dir, 'models/tiny.gguf') }, ...over,
});

/** (what, the call, the field named). Every row must be FORBIDDEN and read nothing. */
const PATH_PROBES: ReadonlyArray<{ what: string; call: (api: FlowlabApi, dir: string) => Promise<unknown>; field: string }> = [
  { what: 'addModel /etc/shadow', call: (api) => api.addModel({ path: '/etc/shadow' }), field: 'path' },
  { what: 'addModel a file beside the database', call: (api, d) => api.addModel({ path: path.join(d, 'secret.txt') }), field: 'path' },
  { what: 'addModel models/../secret.txt', call: (api, d) => api.addModel({ path: path.join(d, 'models/../secret.txt') }), field: 'path' },
  { what: 'addModel a missing file outside', call: (api) => api.addModel({ path: '/nonexistent/x.gguf' }), field: 'path' },
  { what: 'testModel /etc/passwd', call: (api) => api.testModel({ path: '/etc/passwd', prompt: 'x' }), field: 'path' },
  { what: 'startRun models.default /etc/passwd', call: (api) => api.startRun(run({ models: { default: '/etc/passwd' } })), field: 'models.default' },
  { what: 'startRun models.roles.solver outside', call: (api, d) => api.startRun(run({ models: { default: path.join(d, 'models/tiny.gguf'), roles: { solver: path.join(d, 'secret.txt') } } })), field: 'models.roles.solver' },
  { what: 'startRun roleLora outside', call: (api) => api.startRun(run({ roleLora: { solver: [{ path: '/etc/hostname' }] } })), field: 'roleLora.solver' },
  { what: 'startRun workflow models.default.path ../../../../../etc/passwd', call: (api) => api.startRun(run({ workflowText: withModelPath('../../../../../etc/passwd'), models: {} })), field: 'workflowText' },
  { what: 'startRun workflow models.default.path absolute', call: (api) => api.startRun(run({ workflowText: withModelPath('/etc/passwd'), models: {} })), field: 'workflowText' },
  { what: 'resumeRun models.default outside', call: (api) => api.resumeRun({ experimentId: 'exp-x', models: { default: '/etc/passwd' } }), field: 'models.default' },
  { what: 'resumeRun of an experiment recorded with a model outside', call: (api) => api.resumeRun({ experimentId: 'exp-x' }), field: 'experimentId' },
];

describe('a confined lab host', () => {
  for (const probe of PATH_PROBES) {
    it(`refuses ${probe.what} (FORBIDDEN, field ${probe.field}) without reading it`, async () => {
      // resumeRun's experiment, recorded with a model outside the folders (a database from elsewhere).
      t.store.createExperiment({ id: 'exp-x', kind: 'run', workflowName: 'one', workflowYaml: SINGLE, workflowHash: 'h', dataset: 'gsm8k', split: 'test', limit: 1, seed: 0, config: { models: { models: { default: '/elsewhere/m.gguf' }, roleModels: { solver: 'default' }, gpu: false } }, tasks: [] });
      t.store.finishExperiment('exp-x', 'interrupted');
      const err = await probe.call(t.api, t.dir).then(() => new Error('expected a rejection'), (e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      const api = err as ApiError;
      expect([api.code, api.field]).toEqual(['FORBIDDEN', probe.field]);
      expect(api.message).toContain(`is outside the lab's model folders (${path.join(t.dir, 'models')}`);
      expect(api.message).not.toMatch(/not found|found bytes|ENOENT|root:x/);
      expect(touched).toEqual([]);
    });
  }

  it('accepts the model folder, an extra folder, a file given at start, and the versions folder', async () => {
    writeFileSync(path.join(t.dir, 'extra/b.gguf'), 'GGUF');
    await expect(t.api.addModel({ path: path.join(t.dir, 'models/tiny.gguf') })).resolves.toMatchObject({ source: 'folder' });
    await expect(t.api.addModel({ path: path.join(t.dir, 'extra/b.gguf') })).resolves.toMatchObject({ source: 'added' });
    await expect(t.api.addModel({ path: path.join(t.dir, 'given.gguf') })).resolves.toMatchObject({ source: 'added' });
    const { experimentId } = await t.api.startRun(run({ workflowText: withModelPath('tiny.gguf'), models: {} }));
    await t.lab.runner.settled(experimentId);
    expect(t.api.getExperiment({ id: experimentId }).status).toBe('completed');
    expect(touched).toContain(path.join(t.dir, 'models/tiny.gguf'));
  });

  it('does not list models added earlier outside its folders', async () => {
    writeFileSync(path.join(t.dir, 'lab.db.models.json'), JSON.stringify({ version: 1, added: ['/etc/passwd', path.join(t.dir, 'given.gguf')] }));
    const { createLabHost: make } = await import('./index.ts');
    const lab = make({ store: t.store, dbFile: path.join(t.dir, 'lab.db'), modelDir: path.join(t.dir, 'models'), modelRoots: { folders: [], files: [path.join(t.dir, 'given.gguf')] }, examplesDir: t.dir, emit: () => {}, readHeader: async () => ({ architecture: 'llama', fileType: 'F32', hasChatTemplate: false }) });
    expect((await lab.listModels()).map((m) => m.path)).toEqual([path.join(t.dir, 'models/tiny.gguf'), path.join(t.dir, 'given.gguf')]);
    await lab.dispose();
  });
});

describe('ModelPaths', () => {
  it('decides on the normalised path alone', () => {
    const p = new ModelPaths({ folders: ['/srv/models'], files: ['/opt/one.gguf'] });
    expect(['/srv/models/a.gguf', '/srv/models/sub/b.gguf', '/srv/models/x/../c.gguf', '/opt/one.gguf', '/srv/models/..weird.gguf'].map((f) => p.allows(f))).toEqual([true, true, true, true, true]);
    expect(['/srv/models/../etc/passwd', '/srv/models2/a.gguf', '/srv', '/opt/two.gguf', '/etc/shadow'].map((f) => p.allows(f))).toEqual([false, false, false, false, false]);
    expect(new ModelPaths().allows('/etc/shadow')).toBe(true); // unconfined: the desktop app
  });

  it('checkModel: a confined host refuses an endpoint with key= or keychain= (any of a cluster), naming the field and the server; plain endpoints and the unconfined host pass', () => {
    const served = new ModelPaths({ folders: ['/srv/models'] });
    const refusal = (ref: string) => {
      try {
        served.checkModel(ref, 'startRun', 'workflowText');
      } catch (err) {
        return [(err as ApiError).code, (err as ApiError).field, (err as ApiError).message];
      }
      return 'passed';
    };
    expect(refusal('openai:https://api.example.org/v1#m&key=OPENAI_API_KEY')).toEqual(['FORBIDDEN', 'workflowText',
      "startRun: workflowText names an endpoint (https://api.example.org/v1) with key= or keychain=: this served lab does not send API keys from its environment or keychain at a page's request; use an endpoint without a key, or the desktop app or the CLI"]);
    expect(refusal('openai:http://a:1/v1#m,http://b:2/v1#m&keychain=openai/me')?.slice(0, 2)).toEqual(['FORBIDDEN', 'workflowText']);
    expect(refusal('openai:http://a:1/v1#m,http://b:2/v1#m&keychain=openai/me')?.[2]).toContain('(http://b:2/v1)');
    expect(refusal('openai:ftp://x#m')?.slice(0, 2)).toEqual(['BAD_REQUEST', 'workflowText']);
    expect(refusal('/etc/passwd')?.slice(0, 2)).toEqual(['FORBIDDEN', 'workflowText']);
    expect([refusal('openai:http://127.0.0.1:8080/v1#m'), refusal('/srv/models/a.gguf')]).toEqual(['passed', 'passed']);
    expect(() => new ModelPaths().checkModel('openai:https://api.example.org/v1#m&key=OPENAI_API_KEY', 'startRun', 'workflowText')).not.toThrow();
  });
});
