/** `flowlab fork` on a run that is not there: UNKNOWN_RUN (as docs/fork.md says), and the run ids to use when an experiment's id was given. */
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../core/store/index.ts';
import { capture, newExperiment, tempDir } from '../test/fixtures.ts';
import { main } from './main.ts';

let db = '';
beforeAll(() => {
  db = path.join(tempDir('cli-fork-unknown'), 'f.db');
  const store = openStore(db);
  store.createExperiment(newExperiment({ id: 'exp-a', limit: 2 }));
  store.close();
});

const fork = async (run: string) => {
  const io = capture();
  const code = await main(['fork', run, '--node', 'solve', '--output', '{"answer": 1}', '--db', db], io);
  return { code, err: io.err };
};

describe('flowlab fork of an unknown run', () => {
  it('UNKNOWN_RUN with the form of a run id', async () => {
    const r = await fork('nope/0');
    expect(r.code).toBe(1);
    expect(r.err).toContain(`no run "nope/0" in ${db} (a run id is <experiment-id>/<task index>) [UNKNOWN_RUN]`);
  });
  it("an experiment's id: says so and gives its first run's id", async () => {
    const r = await fork('exp-a');
    expect(r.code).toBe(1);
    expect(r.err).toContain(`no run "exp-a" in ${db}; "exp-a" is an experiment: fork one of its runs, <experiment-id>/<task index> (e.g. exp-a/0) [UNKNOWN_RUN]`);
  });
});
