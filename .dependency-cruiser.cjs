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
 * still import each other's files directly (not checked).
 *
 * Room rules bind production code. Tests and fixtures beside the code (`*.test.ts(x)`,
 * `*.fixture.ts`, `testing.ts` and `testing/` folders of test helpers) are harness code like test/ and e2e/: they may import across rooms, and no
 * production module may import them. Circular imports are forbidden everywhere, tests included.
 * Type-only imports count (`tsPreCompilationDeps: true`), so a cycle of `import type` fails too.
 */

/** Test and fixture files beside the code (harness code, not bound by the room rules). */
const TESTS = '(\\.(test|fixture)\\.tsx?$)|(/testing(/|\\.ts$))';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A module must not reach itself through its imports (type-only imports included).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-is-pure',
      comment: 'core/ knows everything Flowlab knows, in pure TypeScript: it imports no other room.',
      severity: 'error',
      from: { path: '^core/', pathNot: TESTS },
      to: { path: '^(models|host|cli|electron|renderer|bench|scripts|test|e2e)/' },
    },
    {
      name: 'core-no-native-or-ui',
      comment: 'core/ imports no Electron, no UI library and no model runtime (better-sqlite3 in core/store is the one native module).',
      severity: 'error',
      from: { path: '^core/', pathNot: TESTS },
      to: { path: 'node_modules/(electron|node-llama-cpp|react|react-dom|zustand|chart\\.js|cytoscape|@tensorflow)/' },
    },
    {
      name: 'models-only-core',
      comment: 'models/ implements core\'s ports (ModelProvider, Trainer): it imports core and itself only.',
      severity: 'error',
      from: { path: '^models/', pathNot: TESTS },
      to: { path: '^(host|cli|electron|renderer|bench|scripts|test|e2e)/' },
    },
    {
      name: 'host-not-cli-or-electron',
      comment: 'host/ is shared by both composition roots, so it imports neither of them (nor the views).',
      severity: 'error',
      from: { path: '^host/', pathNot: TESTS },
      to: { path: '^(cli|electron|renderer|bench|scripts|test|e2e)/' },
    },
    {
      name: 'roots-not-each-other',
      comment: 'cli/ and electron/ are separate composition roots; what both need lives in host/, models/ or core/.',
      severity: 'error',
      from: { path: '^(cli|electron)/', pathNot: TESTS },
      to: { path: '^(cli|electron)/', pathNot: '^$1/' },
    },
    {
      name: 'roots-not-views-or-harness',
      comment: 'The composition roots load the renderer as a built page, never as a module; they import no harness code.',
      severity: 'error',
      from: { path: '^(cli|electron)/', pathNot: TESTS },
      to: { path: '^(renderer|bench|scripts|test|e2e)/' },
    },
    {
      name: 'renderer-only-api',
      comment: 'renderer/ reaches core only through the typed API (core/api/); never models/, host/, cli/ or electron/.',
      severity: 'error',
      from: { path: '^renderer/', pathNot: TESTS },
      to: { path: ['^core/(?!api/)', '^(models|host|cli|electron|bench|scripts|test|e2e)/'] },
    },
    {
      name: 'renderer-runtime-through-client',
      comment: 'At run time the renderer imports only core/api/client.ts (no zod, store or Node code); other API files as types only.',
      severity: 'error',
      from: { path: '^renderer/', pathNot: TESTS },
      to: { path: '^core/api/(?!client\\.ts$)', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'core-through-index',
      comment: 'Other rooms reach a core module through its index.ts, its public surface (core/api/client.ts is the API\'s browser-safe second entry).',
      severity: 'error',
      from: { path: '^(models|host|cli|electron)/', pathNot: TESTS },
      to: { path: '^core/[^/]+/', pathNot: ['^core/[^/]+/index\\.ts$', '^core/api/client\\.ts$'] },
    },
    {
      name: 'no-tests-in-production',
      comment: 'Production code does not import tests or fixtures.',
      severity: 'error',
      from: { path: '^(core|models|host|cli|electron|renderer)/', pathNot: TESTS },
      to: { path: TESTS },
    },
    {
      name: 'no-unresolvable',
      comment: 'Every import resolves (a typo in a path fails here before it fails at run time).',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
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
