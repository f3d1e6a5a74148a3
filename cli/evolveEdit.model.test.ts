import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { noteSkip, tempDir } from '../test/fixtures.ts';
import { cli, haveShared, tinyModel } from '../test/cli.ts';

if (!haveShared) noteSkip('evolveEdit.model.test', 'the edit-optimizer evolve with the real tiny model', tinyModel);

describe.skipIf(!haveShared)('flowlab evolve learn-design on stories260K (edit optimizer)', () => {
  it('every proposal is a valid new design under the edit grammar; the champion is compared with v0 on held-out tasks; the replay is identical', async () => {
    const db = path.join(tempDir('evolve-edit'), 'e.db');
    const run = await cli(['evolve', 'learn-design', '--model', tinyModel, '--threads', '1', '--iterations', '5', '--rule', 'direct', '--heldout', '4', '--db', db, '--json']);
    expect(run.code, run.err).toBe(0);
    const r = JSON.parse(run.out) as { proposals: { proposals: number; valid: number; accepted: number; cutOff: number }; heldout: Array<{ comparison: { n: number } }>; tasks: Array<{ champion: number | null }> };
    expect(r.proposals.proposals).toBe(4);
    // The grammar offers only valid, untried designs: all four parse and are new versions (issue 25 asks for at least 80%).
    expect(r.proposals.valid).toBe(4);
    expect(r.proposals.accepted).toBe(4);
    expect(r.proposals.cutOff).toBe(0);
    const champion = r.tasks[0]!.champion;
    expect(r.heldout.map((h) => h.comparison.n)).toEqual(champion ? [4] : []);
    const replay = await cli(['evolve', '--replay', 'evo-learn-design-1-direct-stories260k-sel4', '--db', db]);
    expect(replay.code, replay.out + replay.err).toBe(0);
    expect(replay.out).toMatch(/(\d+)\/\1 records identical; models loaded 0/);
  }, 600_000);
});
