/** Test helper: run the real CLI in a child process. The shared material is in fixtures.ts. */
import { spawn } from 'node:child_process';

export { haveShared, shared, tinyModel } from './fixtures.ts';

/** Runs `node bin/flowlab.js ...args` and collects its exit code, stdout and stderr. */
export function cli(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/flowlab.js', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => resolve({ code, out, err }));
  });
}
