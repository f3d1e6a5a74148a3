/**
 * The job registry: every long-running kind registered once with its spec and codec; a duplicate
 * or unknown name is a JobError naming `kind`; the built-in experiment kinds carry the one spec
 * schema and the stored config's codec (a corrupted config names the row and field).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { StoreError } from '../store/index.ts';
import { builtinJobKinds, JobError, JobRegistry, progressFold } from './index.ts';

const toy = { name: 'toy', family: 'toy', describe: 'a toy', spec: z.strictObject({}), fold: progressFold };

describe('the job registry', () => {
  it('lists the built-in kinds in registration order, with the method that starts each', () => {
    const kinds = builtinJobKinds().list();
    expect(kinds.map((k) => `${k.family}/${k.name}`)).toEqual([
      'experiment/run', 'experiment/blame-eval', 'experiment/rollouts', 'train-loop/train-loop', 'mass/evolve', 'mass/rank', 'mass/rsi', 'study/study', 'download/download', 'fork/fork',
    ]);
    expect(kinds.filter((k) => k.configVersion === 1).map((k) => k.name)).toEqual(['run', 'blame-eval', 'rollouts', 'train-loop']);
    expect(kinds.every((k) => k.startVia !== undefined && !k.startable)).toBe(true);
    // Experiments and train loops resume through resumeRun (resumeJob routes them there); the others by their own start.
    expect(kinds.filter((k) => k.resumable).map((k) => `${k.name}:${k.resumeVia?.method}`)).toEqual(['run:resumeRun', 'blame-eval:resumeRun', 'rollouts:resumeRun', 'train-loop:resumeRun']);
  });

  it('refuses a second kind of the same name and names the kinds for an unknown one', () => {
    const r = new JobRegistry().register(toy);
    const dup = (() => { try { r.register(toy); } catch (e) { return e as JobError; } })();
    expect(dup).toBeInstanceOf(JobError);
    expect([dup!.code, dup!.field, dup!.message]).toEqual(['DUPLICATE_KIND', 'kind', 'a job kind "toy" is registered already']);
    const unknown = (() => { try { r.get('nope'); } catch (e) { return e as JobError; } })();
    expect([unknown!.code, unknown!.field, unknown!.message]).toEqual(['UNKNOWN_KIND', 'kind', 'unknown job kind "nope" (kinds: toy)']);
  });

  it('an experiment kind decodes its stored config with the store\'s codec (a bad field is located)', () => {
    const run = builtinJobKinds().get('run');
    expect(run.codec!.decode({ offset: 1, inject: ['a=wrong@1'] }, 'exp-1')).toEqual({ offset: 1, inject: ['a=wrong@1'] });
    const err = (() => { try { run.codec!.decode({ offset: -1 }, 'exp-1'); } catch (e) { return e as StoreError; } })();
    expect(err).toBeInstanceOf(StoreError);
    expect([err!.code, err!.message]).toEqual(['CORRUPT_RECORD', 'experiment exp-1: config.offset: Too small: expected number to be >=0']);
  });
});
