/** Test helpers: run the real CLI in a child process, and find the shared test material. */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

export const shared = process.env.FLOWLAB_SHARED ?? path.resolve(process.cwd(), '../shared');
/** The tiny real model (stories260K) used by model-dependent tests. */
export const tinyModel = path.join(shared, 'models/stories260K.gguf');
/** Whether the tiny model and the GSM8K data are present (model-dependent tests skip otherwise). */
export const haveShared = existsSync(tinyModel) && existsSync(path.join(shared, 'data/gsm8k/test.jsonl'));

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
