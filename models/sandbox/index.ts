export { PyodideSandbox, pyodidePackageDir, workerArgs, type PyodideSandboxOptions } from './pool.ts';
