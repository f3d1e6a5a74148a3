export { ALL_LAYERS, PyodideSandbox, pyodidePackageDir, workerArgs, type PyodideSandboxOptions, type SandboxLayers } from './pool.ts';
