import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../test/fixtures.ts';
import { cli } from '../test/cli.ts';

describe('flowlab evolve: arguments (no model needed)', () => {
  it('asks for a dataset, refuses a family MASS does not know, and lists a first design’s issues by path', async () => {
    const none = await cli(['evolve']);
    expect(none.code).toBe(2);
    expect(none.err).toContain('missing <dataset> (or --replay / --timeline <evolution-id>)');

    const gsm = await cli(['evolve', 'gsm8k', '--model', '/nowhere.gguf']);
    expect(gsm.code).toBe(1);
    expect(gsm.err).toContain('no MASS task family for dataset "gsm8k"; known: learn-tool, learn-word [UNKNOWN_FAMILY]');

    const file = path.join(tempDir('evolve-args'), 'v0.json');
    writeFileSync(file, JSON.stringify({ agents: [{ agent_id: 'picker', role: 'Picker', instruction: 'Pick.', contract: { fields: ['tool'], checks: ['no_such_check'] } }], hops: ['ghost'] }));
    const bad = await cli(['evolve', 'learn-tool', '--model', '/nowhere.gguf', '--design', file]);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('UNKNOWN_CHECK agents[0].contract.checks[0]: unknown check "no_such_check"');
    expect(bad.err).toContain('UNKNOWN_AGENT hops[0].agent_id: hop calls "ghost"');
    expect(bad.err).toContain('[BAD_FILE]');

    const missing = await cli(['evolve', '--timeline', 'nope', '--db', path.join(tempDir('evolve-args'), 'none.db')]);
    expect(missing.code).toBe(1);
  }, 60_000);
});
