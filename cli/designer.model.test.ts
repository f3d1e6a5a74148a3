import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../core/store/index.ts';
import { cli } from '../test/cli.ts';
import { existsSync } from 'node:fs';
import { noteSkip, tempDir, tinyModel as model } from '../test/fixtures.ts';

const haveModel = existsSync(model);

if (!haveModel) noteSkip('designer.model.test', 'the designed-workflow run and replay', model);

describe.skipIf(!haveModel)('a designed workflow with the real tiny model (examples/designer-team.yaml)', () => {
  it('runs: the design node is the designer\'s, every designed node is wired by it; replay gives every node identical with no model loaded', async () => {
    const db = path.join(tempDir('designer'), 'd.db');
    const run = await cli(['run', 'examples/designer-team.yaml', '--dataset', 'learn-design', '--split', 'train', '--limit', '4', '--model', model, '--db', db, '--threads', '1', '--json']);
    expect(run.code, run.err).toBe(0);
    const report = JSON.parse(run.out);
    expect(report.runs).toBe(4);
    const store = openStore(db);
    const events = store.listRuns(report.experimentId).flatMap((r) => store.getRunEvents(r.runId));
    store.close();
    const design = events.filter((e) => e.nodeId === 'design');
    expect(design).toHaveLength(4);
    expect(design.every((e) => e.runBy === 'designer' && e.wiredBy === 'human')).toBe(true);
    // Each design record keeps the designer's text; designed nodes (neither the design node nor the fixed `call`) are wired by the designer.
    expect(design.every((e) => typeof (e.output as { text?: unknown }).text === 'string')).toBe(true);
    const designed = events.filter((e) => e.nodeId !== 'design' && e.nodeId !== 'call');
    expect(designed.length).toBeGreaterThan(0);
    expect(designed.every((e) => e.wiredBy === 'designer' && e.runBy === 'executor')).toBe(true);

    const replay = await cli(['replay', report.experimentId, '--db', db, '--json']);
    expect(replay.code, replay.err).toBe(0);
    expect(JSON.parse(replay.out)).toMatchObject({ nodes: events.length, matched: events.length, mismatched: 0, modelsLoaded: 0 });
  }, 120_000);
});
