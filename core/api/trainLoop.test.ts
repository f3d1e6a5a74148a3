/**
 * `startTrainLoop` / `cancelTrainLoop` payload validation (the CLI's bounds, the field named)
 * and the train-loop event check, without a host or a model.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rejectionOf } from '../../test/fixtures.ts';
import { openStore, type Store } from '../store/index.ts';
import { ApiError, createHandlers, isLabEvent, isTrainLoopEvent, validatePayload, type LabHost, type StartTrainLoopRequest } from './index.ts';

const OK: StartTrainLoopRequest = { workflowText: 'name: x\n', dataset: 'learn-word', models: { default: '/models/stories260K.gguf' } };

/** The ApiError a bad payload gets. */
function badRequest(payload: unknown): ApiError {
  try {
    validatePayload('startTrainLoop', payload);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('expected BAD_REQUEST');
}

describe('startTrainLoop payload', () => {
  it('takes every flowlab train-loop option, each optional but the workflow, dataset and models', () => {
    expect(validatePayload('startTrainLoop', OK)).toEqual(OK);
    const full: StartTrainLoopRequest = {
      ...OK, split: 'train', heldoutSplit: 'heldout', roles: ['writer'], group: 64, iterations: 2, limit: 3, lr: 1e-3, kl: 0, temperature: 5, maxGradNorm: 0,
      heldout: 0, heldoutSamples: 2, heldoutTemperature: 0, seed: 0x7fffffff, models: { default: '/m/a.gguf', roles: { writer: 'C:\\m\\b.gguf' } }, roleVersions: { writer: 'v-1' }, threads: 2, contextSize: 64,
    };
    expect(validatePayload('startTrainLoop', full)).toEqual(full);
  });

  it.each([
    [{ lr: 0 }, 'lr', 'must be greater than 0'],
    [{ lr: 1 }, 'lr', 'must be less than 1'],
    [{ kl: -0.1 }, 'kl', 'must be at least 0'],
    [{ temperature: 0 }, 'temperature', 'must be greater than 0 (on-policy training samples)'],
    [{ temperature: 5.5 }, 'temperature', 'must be at most 5'],
    [{ heldoutTemperature: -1 }, 'heldoutTemperature', 'must be at least 0'],
    [{ maxGradNorm: -1 }, 'maxGradNorm', 'must be at least 0'],
    [{ group: 65 }, 'group', 'must be at most 64'],
    [{ group: 0 }, 'group', 'must be at least 1'],
    [{ iterations: 1.5 }, 'iterations', 'must be an integer from 1 to 10000'],
    [{ limit: 0 }, 'limit', 'must be at least 1'],
    [{ heldout: -1 }, 'heldout', 'must be at least 0'],
    [{ heldoutSamples: 0 }, 'heldoutSamples', 'must be at least 1'],
    [{ seed: -1 }, 'seed', 'must be at least 0'],
    [{ contextSize: 63 }, 'contextSize', 'must be at least 64'],
    [{ threads: 257 }, 'threads', 'must be at most 256'],
    [{ roles: [] }, 'roles', 'must name at least one role'],
    [{ models: { default: 'models/a.gguf' } }, 'models.default', 'must be an absolute path'],
    [{ dataset: '' }, 'dataset', 'must not be empty'],
  ])('%j is refused naming %s', (over, field, text) => {
    const err = badRequest({ ...OK, ...over });
    expect([err.code, err.method, err.field]).toEqual(['BAD_REQUEST', 'startTrainLoop', field]);
    expect(err.message).toBe(`startTrainLoop: payload field "${field}": ${text}`);
  });

  it('takes no folder from the request: versionsDir, dataDir and db are unknown fields', () => {
    for (const key of ['versionsDir', 'dataDir', 'db']) {
      const err = badRequest({ ...OK, [key]: '/tmp/x' });
      expect([err.code, err.field]).toEqual(['BAD_REQUEST', key]);
      expect(err.message).toBe(`startTrainLoop: payload: unknown field(s) "${key}"`);
    }
  });

  it('names the missing fields', () => {
    expect(badRequest({ dataset: 'learn-word', models: {} }).message).toBe('startTrainLoop: payload field "workflowText": missing (expected string)');
    expect(badRequest({ workflowText: 'x', dataset: 'learn-word' }).field).toBe('models');
    expect(badRequest({ loopId: '' }).field).toBe('workflowText');
  });

  it('cancelTrainLoop takes a loop id', () => {
    expect(validatePayload('cancelTrainLoop', { loopId: 'tl-1' })).toEqual({ loopId: 'tl-1' });
    expect(() => validatePayload('cancelTrainLoop', { loopId: 3 })).toThrow('cancelTrainLoop: payload field "loopId": expected string, received number');
  });
});

describe('train-loop events', () => {
  const iteration = { type: 'trainIteration', loopId: 'tl-1', iteration: 1, experimentId: 'exp-1', score: 0.25, sampledTokens: 40, seconds: 1.5, roles: { writer: { reward: 0.5, kl: 0.001, loss: -0.2, samples: 8, signalSamples: 4, versionId: 'v-1' } } };
  it('are LabEvents', () => {
    for (const e of [
      { type: 'trainLoop', loopId: 'tl-1', status: 'running', roles: ['writer'], done: 0, iterations: 2 },
      { type: 'trainLoop', loopId: 'tl-1', status: 'failed', roles: ['writer'], done: 1, iterations: 2, message: 'boom' },
      { type: 'trainRollout', loopId: 'tl-1', iteration: 1, done: 3, total: 8 },
      iteration,
      { type: 'trainHeldout', loopId: 'tl-1', phase: 'before', experimentId: 'exp-0', score: 0, samples: 4, roles: { writer: 0.1 } },
    ]) {
      expect(isLabEvent(e), JSON.stringify(e)).toBe(true);
      expect(isTrainLoopEvent(e)).toBe(true);
    }
  });

  it('refuse malformed ones', () => {
    for (const e of [
      { type: 'trainLoop', loopId: 'tl-1', status: 'paused', roles: [], done: 0, iterations: 2 },
      { type: 'trainLoop', loopId: '', status: 'running', roles: [], done: 0, iterations: 2 },
      { type: 'trainRollout', loopId: 'tl-1', iteration: 1, done: -1, total: 8 },
      { ...iteration, score: Number.NaN },
      { ...iteration, roles: { writer: { reward: 'high', samples: 1, signalSamples: 0 } } },
      { type: 'trainHeldout', loopId: 'tl-1', phase: 'during', experimentId: 'e', score: 0, samples: 1, roles: {} },
      { type: 'trainStep', loopId: 'tl-1' },
    ]) expect(isLabEvent(e), JSON.stringify(e)).toBe(false);
  });
});

describe('startTrainLoop over a host without train loops', () => {
  let store: Store;
  beforeEach(() => (store = openStore(':memory:')));
  afterEach(() => store.close());
  it('answers UNAVAILABLE', async () => {
    const lab = { startRun: async () => ({ experimentId: 'x' }) } as unknown as LabHost;
    const api = createHandlers({ store, version: '1', lab });
    const err = await rejectionOf(ApiError, api.startTrainLoop(OK));
    expect([err.code, err.message]).toEqual(['UNAVAILABLE', 'startTrainLoop: this host cannot run train loops']);
    expect((await rejectionOf(ApiError, api.cancelTrainLoop({ loopId: 'tl-1' }))).code).toBe('UNAVAILABLE');
  });
});
