import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson, openStore, type Store } from '../core/store/index.ts';
import { tempDir } from '../test/fixtures.ts';
import { cli, haveShared, tinyModel } from '../test/cli.ts';

const args = (db: string) => ['evolve', 'learn-tool', '--model', tinyModel, '--threads', '1', '--iterations', '5', '--db', db];
const records = (s: Store, id: string) => s.mass.list(id).map((r) => `${r.kind} ${r.key} ${canonicalJson(r.value)}`).sort();
const steps = (s: Store) => s.listExperiments().map((x) => `${x.id} ${x.status} runs=${x.runsDone} calls=${s.getExperimentCalls(x.id).length}`).sort();
const ID = 'evo-learn-tool-1-baseline-stories260k';

describe.skipIf(!haveShared)('flowlab evolve on stories260K (learn-tool)', () => {
  it('runs the inner loop end to end; SIGKILL mid-loop then the same command resumes to the uninterrupted result; replay is identical without the model', async () => {
    const dir = tempDir('evolve');
    const ref = path.join(dir, 'ref.db');
    const whole = await cli([...args(ref), '--json']);
    expect(whole.code, whole.err).toBe(0);
    const report = JSON.parse(whole.out);
    expect(report).toMatchObject({ evolutionId: ID, rule: 'baseline', iterations: 5 });
    expect(report.timeline.tasks[0].iterations).toHaveLength(5);

    const db = path.join(dir, 'kill.db');
    const child = spawn(process.execPath, ['bin/flowlab.js', ...args(db)], { stdio: 'ignore' });
    const closed = new Promise((r) => child.once('close', r)); // listened from the start: it may end before the kill
    let n = 0;
    // On the clock (not a count of polls) and only while it runs: a loaded machine is slow to start it and load the model.
    for (const deadline = Date.now() + 300_000; n < 8 && child.exitCode === null && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 25));
      if (!existsSync(db)) continue;
      try {
        const s = openStore(db, { markInterrupted: false });
        n = s.mass.list(ID).length;
        s.close();
      } catch { /* the writer may hold the lock */ }
    }
    child.kill('SIGKILL');
    await closed;
    const killed = openStore(db);
    const before = killed.mass.list(ID).length;
    killed.close();
    expect(before).toBeGreaterThanOrEqual(8);

    const resumed = await cli(args(db));
    expect(resumed.code, resumed.err).toBe(0);
    const a = openStore(db);
    const b = openStore(ref);
    expect(before).toBeLessThan(b.mass.list(ID).length);
    // The same records (designs, proposals, workspaces, verdicts, champions) and the same steps, each run once.
    expect(records(a, ID)).toEqual(records(b, ID));
    expect(steps(a)).toEqual(steps(b));
    expect(a.listExperiments().every((x) => x.runsDone === 1)).toBe(true);
    a.close();
    b.close();

    const replay = await cli(['evolve', '--replay', ID, '--db', db, '--json']);
    expect(replay.code, replay.err).toBe(0);
    const r = JSON.parse(replay.out);
    expect(r.mismatches).toEqual([]);
    expect(r.matched).toBe(r.records);
    expect(r.modelsLoaded).toBe(0);
  }, 600_000);

  it('the same command again runs nothing and says the evolution was complete and shown as stored, with --id for a new one (it printed the old one silently)', async () => {
    const db = path.join(tempDir('evolve-again'), 'lab.db');
    const once = ['evolve', 'learn-tool', '--model', tinyModel, '--threads', '1', '--iterations', '1', '--db', db];
    const first = await cli(once);
    expect(first.code, first.err).toBe(0);
    expect(first.err).not.toContain('already complete');
    const s = openStore(db);
    const stored = records(s, 'evo-learn-tool-1-baseline-stories260k');
    s.close();
    const again = await cli(once);
    expect(again.code, again.err).toBe(0);
    expect(again.err).toContain(`Evolution evo-learn-tool-1-baseline-stories260k was already complete in ${db}: nothing new was run; it is shown as stored. For a new one: --id <new-id> (or another --seed or --rule).`);
    const after = openStore(db);
    expect(records(after, 'evo-learn-tool-1-baseline-stories260k')).toEqual(stored);
    after.close();
  }, 300_000);
});
