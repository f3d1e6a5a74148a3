#!/usr/bin/env node
// The flowlab CLI. Runs the prebuilt bundle out/cli/main.js (scripts/build-cli.mjs; made by
// `npm run build`, `npm test` and npm's `prepare` step). Development path: the TypeScript
// sources through tsx's loader, taken with FLOWLAB_DEV=1, when the bundle is missing, or when a
// bundled source file (out/cli/sources.txt) was edited after the bundle was built.
import { readFileSync, statSync } from 'node:fs';

const root = new URL('../', import.meta.url);
const bundle = new URL('out/cli/main.js', root);

/** True when the bundle exists and no source file it was built from is newer (a few ms of stats). */
function bundleFresh() {
  if (process.env.FLOWLAB_DEV === '1') return false;
  try {
    const built = statSync(bundle).mtimeMs;
    for (const file of readFileSync(new URL('out/cli/sources.txt', root), 'utf8').split('\n')) {
      if (file && statSync(new URL(file, root), { throwIfNoEntry: false })?.mtimeMs > built) return false;
    }
    return true;
  } catch {
    return false;
  }
}

let main;
if (bundleFresh()) {
  ({ main } = await import(bundle.href));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../cli/main.ts'));
}
process.exitCode = await main(process.argv.slice(2));
