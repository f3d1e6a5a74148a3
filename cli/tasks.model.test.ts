/**
 * The CLI on the studies' tasks with the real tiny model: the AgentFlow template on a multi-hop
 * dataset with a corpus folder the test writes (recorded, and opened again by replay), a DataWright composition on a hand-wired
 * workflow, and the located errors of a bad corpus and a malformed DataWright name.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../core/store/index.ts';
import { cli } from '../test/cli.ts';
import { haveShared, noteSkip, tempDir, tinyModel as model } from '../test/fixtures.ts';

if (!haveShared) noteSkip('tasks.model.test', 'the AgentFlow and DataWright CLI runs', `${model} or the shared data`);
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe.skipIf(!haveShared)('flowlab run on multi-hop QA and DataWright tasks', () => {
  it('runs examples/agentflow.yaml on bamboogle with --corpus: at most 3 planner turns, then the generator', async () => {
    const dir = tempDir('tasks-cli');
    dirs.push(dir);
    fs.mkdirSync(path.join(dir, 'corpus'));
    fs.writeFileSync(path.join(dir, 'corpus', 'bank.md'), '# Citibank\n\nCitibank was founded in 1812.\n');
    fs.writeFileSync(path.join(dir, 'corpus', 'people.jsonl'), '{"text": "James Madison was president from 1809 to 1817."}\n');
    const db = path.join(dir, 'af.db');
    const run = await cli(['run', 'examples/agentflow.yaml', '--dataset', 'bamboogle', '--limit', '1', '--corpus', path.join(dir, 'corpus'), '--model', model, '--threads', '1', '--db', db, '--json']);
    expect(run.code, run.err).toBe(0);
    expect(run.err).toMatch(/Corpus .*corpus: 2 passages from 2 files \(indexed in \d+ ms\)/);
    const report = JSON.parse(run.out);
    expect(report).toMatchObject({ runs: 1, completionRate: 1 });
    const store = openStore(db);
    const [r] = store.listRuns(report.experimentId);
    const events = store.getRunEvents(r!.runId);
    const turns = events.filter((e) => e.nodeId === 'plan').length;
    expect(turns).toBeGreaterThanOrEqual(1);
    expect(turns).toBeLessThanOrEqual(3);
    expect(events.at(-1)!.nodeId).toBe('generate');
    expect(events.filter((e) => e.nodeId === 'remember').at(-1)!.output).toMatchObject({ count: turns });
    expect(store.getExperiment(report.experimentId).config).toMatchObject({ corpus: { dir: fs.realpathSync(path.join(dir, 'corpus')), signature: expect.stringMatching(/^[0-9a-f]{64}$/), passages: 2 } });
    store.close();
    // replay opens the recorded corpus again: every node matches its recording
    const replay = await cli(['replay', report.experimentId, '--db', db, '--json']);
    expect(replay.code, replay.err).toBe(0);
    expect(JSON.parse(replay.out)).toMatchObject({ mismatched: 0, modelsLoaded: 0 });
    // the second run reads the index from flowlab-cache/ beside the database
    const again = await cli(['run', 'examples/agentflow.yaml', '--dataset', 'bamboogle', '--limit', '1', '--corpus', path.join(dir, 'corpus'), '--model', model, '--threads', '1', '--db', db, '--json']);
    expect(again.err).toMatch(/2 passages from 2 files \(from the cache in \d+ ms\)/);
    fs.rmSync(path.join(dir, 'corpus'), { recursive: true });
    const gone = await cli(['replay', report.experimentId, '--db', db]);
    expect([gone.code, gone.err]).toEqual([1, expect.stringMatching(/corpus folder .* cannot be read.*\[CORPUS_NOT_FOUND\]/)]);
  });

  it('runs learn-design-fixed on datawright:paired:2:learn-design; bad names and folders fail with their codes', async () => {
    const dir = tempDir('tasks-cli');
    dirs.push(dir);
    const db = path.join(dir, 'dw.db');
    const run = await cli(['run', 'examples/learn-design-fixed.yaml', '--dataset', 'datawright:paired:2:learn-design', '--split', 'train', '--limit', '3', '--model', model, '--threads', '1', '--db', db, '--json']);
    expect(run.code, run.err).toBe(0);
    expect(JSON.parse(run.out)).toMatchObject({ runs: 3, tasksPlanned: 3 });
    const store = openStore(db);
    const exp = store.listExperiments()[0]!;
    expect(exp.dataset).toBe('datawright:paired:2:learn-design');
    store.close();
    const bad = await cli(['run', 'examples/learn-design-fixed.yaml', '--dataset', 'datawright:twice:2:learn-design', '--model', model, '--db', db]);
    expect([bad.code, bad.err]).toEqual([1, expect.stringMatching(/'twice' is not a strategy.*\[UNKNOWN_DATASET\]/)]);
    const noCorpus = await cli(['run', 'examples/agentflow.yaml', '--dataset', 'bamboogle', '--corpus', path.join(dir, 'nowhere'), '--model', model, '--db', db]);
    expect([noCorpus.code, noCorpus.err]).toEqual([1, expect.stringMatching(/corpus folder .*nowhere cannot be read.*\[CORPUS_NOT_FOUND\]/)]);
  });
});
