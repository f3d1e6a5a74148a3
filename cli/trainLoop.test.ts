import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultTools } from '../core/tools/index.ts';
import { parseWorkflow } from '../core/workflow/index.ts';
import { tempDir } from '../test/fixtures.ts';
import { UsageError } from './args.ts';
import { resolveRoleVersions } from './models.ts';

const WORKSHOP = parseWorkflow(readFileSync('examples/workshop-learn.yaml', 'utf8'), { tools: defaultTools() }).graph;

describe('--role-version resolution', () => {
  // Resolution only checks that the version's file exists: a file of our own, so no shared folder is needed.
  const versionFile = path.join(tempDir('rv'), 'iter-001.gguf');
  writeFileSync(versionFile, 'GGUF');
  const versions: Record<string, { id: string; role: string; path: string }> = {
    'wv-1': { id: 'wv-1', role: 'solver', path: versionFile },
    'wv-gone': { id: 'wv-gone', role: 'solver', path: '/nowhere/gone.gguf' },
  };
  const lookup = (id: string) => versions[id];

  it('maps role=version-id to the version\'s file', () => {
    expect(resolveRoleVersions(WORKSHOP, ['solver=wv-1', 'planner=wv-1'], lookup, 'u')).toEqual({ solver: versions['wv-1'], planner: versions['wv-1'] });
    expect(resolveRoleVersions(WORKSHOP, undefined, lookup, 'u')).toEqual({});
  });

  it('refuses malformed values, unknown roles and versions, a role given twice, a missing file', () => {
    const bad: Array<[string[], RegExp]> = [
      [['solver'], /takes role=<version-id>/],
      [['ghost=wv-1'], /names role "ghost"/],
      [['solver=wv-9'], /no weight version wv-9/],
      [['solver=wv-1', 'solver=wv-1'], /gives role "solver" twice/],
      [['solver=wv-gone'], /file \/nowhere\/gone\.gguf is missing/],
    ];
    for (const [values, message] of bad) {
      expect(() => resolveRoleVersions(WORKSHOP, values, lookup, 'u'), values.join(' ')).toThrow(UsageError);
      expect(() => resolveRoleVersions(WORKSHOP, values, lookup, 'u')).toThrow(message);
    }
  });
});
