/**
 * `flowlab verify` and `flowlab repeat` refuse what they cannot re-run from a stored spec, saying
 * why and what to use instead (found by a new user: a fork re-run without its intervention read
 * DIFFERENT; a cancelled experiment re-ran every planned task and read DIFFERENT with no reason).
 */
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../core/store/index.ts';
import { capture, newExperiment, runRecord, tempDir } from '../test/fixtures.ts';
import { main } from './main.ts';

let db = '';
beforeAll(() => {
  db = path.join(tempDir('cli-verify-refuses'), 'v.db');
  const store = openStore(db);
  try {
    store.createExperiment(newExperiment({ id: 'exp-cancelled', limit: 3 }));
    store.saveRun(runRecord('exp-cancelled', 0), []);
    store.setExperimentStatus('exp-cancelled', 'cancelled');
    store.createExperiment({ ...newExperiment({ id: 'exp-fork', limit: 1 }), kind: 'fork' });
    store.setExperimentStatus('exp-fork', 'completed');
    store.createExperiment({ ...newExperiment({ id: 'exp-import', limit: 1 }), kind: 'import' });
    store.setExperimentStatus('exp-import', 'completed');
  } finally {
    store.close();
  }
});

const cli = async (...args: string[]) => {
  const io = capture();
  const code = await main([...args, '--db', db], io);
  return { code, err: io.err };
};

describe('flowlab verify / repeat on what cannot be re-run', () => {
  it('a cancelled experiment: INCOMPLETE with what is stored and how to finish it, nothing re-run', async () => {
    const r = await cli('verify', 'exp-cancelled');
    expect(r.code).toBe(1);
    expect(r.err).toContain('exp-cancelled is cancelled (1 of 3 task(s) stored): verify compares a finished experiment with a re-run of it; finish it first with flowlab resume exp-cancelled');
    expect(r.err).toContain('[INCOMPLETE]');
    expect(r.err).not.toContain('Re-running');
  });

  it('a fork: WRONG_KIND naming replay and fork, for verify and for repeat', async () => {
    for (const cmd of ['verify', 'repeat']) {
      const r = await cli(cmd, 'exp-fork');
      expect(r.code, cmd).toBe(1);
      expect(r.err, cmd).toContain("exp-fork is a fork: it re-runs from its parent's recording with its intervention, so check it offline with flowlab replay, or make it again with flowlab fork");
    }
  });

  it('an imported trace: WRONG_KIND, no model calls to re-run', async () => {
    const r = await cli('verify', 'exp-import');
    expect(r.code).toBe(1);
    expect(r.err).toContain('exp-import was imported from a trace file: it holds no model calls to re-run');
  });
});
