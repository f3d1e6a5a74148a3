/**
 * The import rules of Flowlab's rooms (docs/architecture.md), checked by dependency-cruiser on
 * every `npm test` and by test/boundaries.test.ts. A wrong import fails with the rule's name:
 *
 *   core/      pure TypeScript; imports none of models/ host/ cli/ electron/ renderer/
 *   models/    adapters of core's ports; imports core only
 *   host/      the lab runner and browser host; imports core and models, never cli or electron
 *   cli/, electron/  the two composition roots; import host, core and models, not each other
 *   renderer/  the views; reach core only through its API (core/api/), at run time through
 *              core/api/client.ts alone
 *   test/ e2e/ bench/ scripts/  harnesses; may import anything
 *
 * Other rooms reach a core module (core/<module>/) through its index.ts. Inside core, modules
 * still import each other's files directly, but only downwards through core's layers
 * (`core-layers`, CORE_LAYERS below; lowest first):
 *
 *   foundations   core/*.ts, model, trace, workflow, sandbox, stats, tabular, tasks, tools,
 *                 engine, design, faults, blame, reward, results, store, guards, rollouts,
 *                 schedule
 *   pipeline      one task: task -> engine -> grade -> credit -> ladder -> store (core/pipeline)
 *   loops         built on the pipeline: training, distill, mass, repro, otel
 *   experiments   the kinds of work: experiments, and faults/experimentFaults.ts (a blame
 *                 evaluation's fault wiring, which checks its specs with the experiment spec's
 *                 errors and reads the experiment's row)
 *   compositions  made of experiments and loops: studies, workshop
 *   faces         the lab API and the job registry: api, jobs
 *
 * A module may import modules of its own layer and of the layers below, never above (its tests
 * and fixtures may, as for the room rules). Every
 * folder of core/ is in one layer (test/boundaries.test.ts checks that a new folder is placed).
 *
 * Room rules bind production code. Tests and fixtures beside the code (`*.test.ts(x)`,
 * `*.fixture.ts`, `testing.ts` and `testing/` folders of test helpers) are harness code like test/ and e2e/: they may import across rooms, and no
 * production module may import them. Circular imports are forbidden everywhere, tests included.
 * Type-only imports count (`tsPreCompilationDeps: true`), so a cycle of `import type` fails too.
 */

/** Test and fixture files beside the code (harness code, not bound by the room rules). */
const TESTS = '(\\.(test|fixture)\\.tsx?$)|(/testing(/|\\.ts$))';

/** The rooms of harness code (test/, e2e/, bench/, scripts/), which production code never imports. */
const HARNESS = ['bench', 'scripts', 'test', 'e2e'];

/** A path pattern matching files under any of `rooms`. */
const under = (...rooms) => `^(${rooms.join('|')})/`;

/**
 * A forbidden import, an error: from production files matching `from` (tests and fixtures are
 * exempt, `pathNot: TESTS`; `from` undefined: every file, tests included) to modules matching
 * `to` (a dependency-cruiser `to` object).
 */
function rule(name, comment, from, to) {
  return { name, comment, severity: 'error', from: from === undefined ? {} : { path: from, pathNot: TESTS }, to };
}

/**
 * Core's layers, lowest first (the comment at the top says what each holds). `''` in a layer
 * stands for the files directly under core/ (ids.ts, errors.ts, limits.ts, ...).
 */
const CORE_LAYERS = [
  ['foundations', ['', 'model', 'trace', 'workflow', 'sandbox', 'stats', 'tabular', 'tasks', 'tools', 'engine', 'design', 'faults', 'blame', 'reward', 'results', 'store', 'guards', 'rollouts', 'schedule']],
  ['pipeline', ['pipeline']],
  ['loops', ['training', 'distill', 'mass', 'repro', 'otel']],
  ['experiments', ['experiments', 'faults/experimentFaults.ts']],
  ['compositions', ['studies', 'workshop']],
  ['faces', ['api', 'jobs']],
];

/** The pattern of one layer entry: a module folder, one file (`<module>/<file>.ts`), or `''` (the files directly under core/). */
const entryPattern = (entry) => (entry === '' ? '[^/]+\\.[cm]?[jt]sx?$' : entry.endsWith('.ts') ? `${entry.replace(/\./g, '\\.')}$` : `${entry}/`);

/** A path pattern matching the files of the core layer entries `entries`. */
const inCore = (entries) => `^core/(${entries.map(entryPattern).join('|')})`;

/** The single files given a layer of their own, apart from their folder's. */
const LAYERED_FILES = CORE_LAYERS.flatMap(([, entries]) => entries).filter((e) => e.endsWith('.ts'));

/**
 * One `core-layers` rule per layer but the top one: its production files (but files placed in
 * another layer) may not import a file of any layer above it.
 */
const coreLayerRules = CORE_LAYERS.slice(0, -1).map(([layer, entries], i) => ({
  name: 'core-layers',
  comment: `Inside core, imports point down the layers (${CORE_LAYERS.map(([l]) => l).join(' < ')}): a module of the ${layer} layer imports nothing above it.`,
  severity: 'error',
  from: { path: inCore(entries), pathNot: [TESTS, ...LAYERED_FILES.filter((f) => !entries.includes(f)).map((f) => inCore([f]))] },
  to: { path: inCore(CORE_LAYERS.slice(i + 1).flatMap(([, e]) => e)) },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    rule('no-circular', 'A module must not reach itself through its imports (type-only imports included).', undefined, { circular: true }),
    rule('core-is-pure', 'core/ knows everything Flowlab knows, in pure TypeScript: it imports no other room.', '^core/',
      { path: under('models', 'host', 'cli', 'electron', 'renderer', ...HARNESS) }),
    rule('core-no-native-or-ui', 'core/ imports no Electron, no UI library and no model runtime (better-sqlite3 in core/store is the one native module).', '^core/',
      { path: 'node_modules/(electron|node-llama-cpp|react|react-dom|zustand|chart\\.js|cytoscape|@tensorflow)/' }),
    rule('models-only-core', 'models/ implements core\'s ports (ModelProvider, Trainer): it imports core and itself only.', '^models/',
      { path: under('host', 'cli', 'electron', 'renderer', ...HARNESS) }),
    rule('host-not-cli-or-electron', 'host/ is shared by both composition roots, so it imports neither of them (nor the views).', '^host/',
      { path: under('cli', 'electron', 'renderer', ...HARNESS) }),
    rule('shared-rooms-not-electron', 'models/ and host/ also run under plain Node (the CLI, flowlab serve): they never import the Electron package.', under('models', 'host'),
      { path: 'node_modules/electron/' }),
    rule('roots-not-each-other', 'cli/ and electron/ are separate composition roots; what both need lives in host/, models/ or core/.', under('cli', 'electron'),
      { path: under('cli', 'electron'), pathNot: '^$1/' }),
    rule('roots-not-views-or-harness', 'The composition roots load the renderer as a built page, never as a module; they import no harness code.', under('cli', 'electron'),
      { path: under('renderer', ...HARNESS) }),
    rule('renderer-only-api', 'renderer/ reaches core only through the typed API (core/api/); never models/, host/, cli/ or electron/.', '^renderer/',
      { path: ['^core/(?!api/)', under('models', 'host', 'cli', 'electron', ...HARNESS)] }),
    rule('renderer-runtime-through-client', 'At run time the renderer imports only core/api/client.ts (no zod, store or Node code); other API files as types only.', '^renderer/',
      { path: '^core/api/(?!client\\.ts$)', dependencyTypesNot: ['type-only'] }),
    rule('core-through-index', 'Other rooms reach a core module through its index.ts, its public surface (core/api/client.ts is the API\'s browser-safe second entry).', under('models', 'host', 'cli', 'electron'),
      { path: '^core/[^/]+/', pathNot: ['^core/[^/]+/index\\.ts$', '^core/api/client\\.ts$'] }),
    ...coreLayerRules,
    rule('no-tests-in-production', 'Production code does not import tests or fixtures.', under('core', 'models', 'host', 'cli', 'electron', 'renderer'),
      { path: TESTS }),
    rule('no-unresolvable', 'Every import resolves (a typo in a path fails here before it fails at run time).', undefined, { couldNotResolve: true }),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json'],
    },
  },
};
