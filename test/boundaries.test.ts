/**
 * The room rules of .dependency-cruiser.cjs (docs/architecture.md), run through
 * dependency-cruiser's `cruise()` API: the real tree breaks none of them, and a tree laid out
 * like the rooms with deliberately wrong imports fails with each rule's name.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseOptions, type ICruiseResult, type IConfiguration } from 'dependency-cruiser';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const config = createRequire(import.meta.url)(join(ROOT, '.dependency-cruiser.cjs')) as IConfiguration;
/** The folders `npm test` checks (package.json's "test" script). */
const ROOMS = ['core', 'models', 'host', 'cli', 'electron', 'renderer', 'bench', 'test', 'e2e', 'scripts'];

/** Violations as `rule: from -> to`, sorted, from a cruise under `baseDir` with the repo's rules. */
async function violations(baseDir: string, paths: string[], tsConfigFile?: string): Promise<string[]> {
  const options: ICruiseOptions = {
    ...config.options,
    baseDir,
    validate: true,
    ruleSet: { forbidden: config.forbidden },
    tsConfig: tsConfigFile ? { fileName: tsConfigFile } : undefined,
  };
  const transpile = tsConfigFile ? { tsConfig: extractTSConfig(join(baseDir, tsConfigFile)) } : undefined;
  const { output } = await cruise(paths, options, undefined, transpile);
  const result = output as ICruiseResult;
  return result.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();
}

describe('the real tree', () => {
  it('breaks no room rule and has no circular import', async () => {
    const found = await violations(ROOT, ROOMS, 'tsconfig.json');
    expect(found).toEqual([]);
  }, 60_000);
});

describe("core's layers", () => {
  /** The `core-layers` rules, each `from` the files of one layer `to` those of the layers above. */
  const layerRules = (config.forbidden ?? []).filter((r) => r.name === 'core-layers') as { from: { path?: string }; to: { path?: string } }[];
  const placed = (file: string) => layerRules.some((r) => [r.from.path, r.to.path].some((p) => typeof p === 'string' && new RegExp(p).test(file)));

  it('place every folder and file of core/ in a layer (a new module must be given one)', () => {
    const entries = readdirSync(join(ROOT, 'core'), { withFileTypes: true });
    const unplaced = entries.filter((e) => !placed(e.isDirectory() ? `core/${e.name}/index.ts` : `core/${e.name}`)).map((e) => e.name);
    expect(layerRules.length).toBeGreaterThan(1);
    expect(unplaced).toEqual([]);
  });

  it('put the pipeline below experiments, training, mass, studies and distill', () => {
    const below = layerRules.find((r) => typeof r.from.path === 'string' && new RegExp(r.from.path).test('core/pipeline/execute.ts'));
    const above = ['experiments', 'training', 'mass', 'studies', 'distill'].filter((m) => new RegExp(String(below?.to.path)).test(`core/${m}/index.ts`));
    expect(above).toEqual(['experiments', 'training', 'mass', 'studies', 'distill']);
  });
});

describe('a tree with wrong imports', () => {
  const dir = mkdtempSync(join(tmpdir(), 'flowlab-rooms-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const files: Record<string, string> = {
    'core/ids.ts': 'export type Id = string;\n',
    'core/view.ts': "import { createElement } from 'react';\nexport const view = createElement;\n",
    'node_modules/react/package.json': '{ "name": "react", "version": "0.0.0", "main": "index.js" }\n',
    'node_modules/react/index.js': 'exports.createElement = () => null;\n',
    'node_modules/electron/package.json': '{ "name": "electron", "version": "0.0.0", "main": "index.js" }\n',
    'node_modules/electron/index.js': 'exports.app = {};\n',
    'host/shell.ts': "import { app } from 'electron';\nexport const shell = app;\n",
    'core/x.ts': "import { y } from '../cli/y.ts';\nexport const x = y;\n",
    'core/a.ts': "import type { B } from './b.ts';\nexport type A = { b?: B };\n",
    'core/b.ts': "import type { A } from './a.ts';\nexport type B = { a?: A };\n",
    'core/api/client.ts': "export type { Id } from '../ids.ts';\n",
    'core/api/handlers.ts': "export const handlers = {};\n",
    'models/m.ts': "import { serve } from '../host/h.ts';\nexport const m = serve;\n",
    'host/h.ts': "import { CSP } from '../electron/e.ts';\nexport const serve = CSP;\n",
    'host/p.ts': "import { fixture } from './p.fixture.ts';\nexport const p = fixture;\n",
    'host/p.fixture.ts': "export const fixture = 1;\n",
    'core/store/index.ts': "export { open } from './sqlite.ts';\n",
    'core/store/sqlite.ts': "export const open = () => 1;\n",
    'cli/z.ts': "import { open } from '../core/store/sqlite.ts';\nimport { open as viaIndex } from '../core/store/index.ts';\nexport const z = [open, viaIndex];\n",
    'cli/y.ts': "import { E } from '../electron/e.ts';\nexport const y = E;\n",
    'electron/e.ts': "export const CSP = 'default-src self';\nexport const E = 1;\n",
    'renderer/v.ts': "import type { Id } from '../core/ids.ts';\nimport type { Id as ApiId } from '../core/api/client.ts';\nexport type V = Id | ApiId;\n",
    'renderer/w.ts': "import { handlers } from '../core/api/handlers.ts';\nimport { missing } from './nowhere.ts';\nexport const w = [handlers, missing];\n",
    'renderer/v.test.ts': "import { serve } from '../host/h.ts';\nexport const t = serve;\n",
    // core's layers: the pipeline below experiments and training; a test beside the code is exempt.
    'core/pipeline/step.ts': 'export const step = 1;\n',
    'core/pipeline/run.ts': "import { kind } from '../experiments/kind.ts';\nexport const run = kind;\n",
    'core/pipeline/run.test.ts': "import { kind } from '../experiments/kind.ts';\nexport const t = kind;\n",
    'core/experiments/kind.ts': "import { step } from '../pipeline/step.ts';\nexport const kind = step;\n",
    'core/training/loop.ts': "import { step } from '../pipeline/step.ts';\nexport const loop = step;\n",
    'core/store/weights.ts': "import { loop } from '../training/loop.ts';\nexport const w = loop;\n",
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }

  it('fails each wrong import with the name of the rule it breaks, and nothing else', async () => {
    const found = await violations(dir, ['core', 'models', 'host', 'cli', 'electron', 'renderer']);
    expect(found).toEqual([
      'core-is-pure: core/x.ts -> cli/y.ts',
      'core-layers: core/pipeline/run.ts -> core/experiments/kind.ts',
      'core-layers: core/store/weights.ts -> core/training/loop.ts',
      'core-no-native-or-ui: core/view.ts -> node_modules/react/index.js',
      'core-through-index: cli/z.ts -> core/store/sqlite.ts',
      'host-not-cli-or-electron: host/h.ts -> electron/e.ts',
      'models-only-core: models/m.ts -> host/h.ts',
      'no-circular: core/a.ts -> core/b.ts',
      'no-tests-in-production: host/p.ts -> host/p.fixture.ts',
      'no-unresolvable: renderer/w.ts -> ./nowhere.ts',
      'renderer-only-api: renderer/v.ts -> core/ids.ts',
      'renderer-runtime-through-client: renderer/w.ts -> core/api/handlers.ts',
      'roots-not-each-other: cli/y.ts -> electron/e.ts',
      'shared-rooms-not-electron: host/shell.ts -> node_modules/electron/index.js',
    ]);
  }, 60_000);
});
