/**
 * electron-vite build of the desktop app into out/:
 *   out/main/index.js      Electron main (ESM, as package.json is "type": "module")
 *   out/main/worker.js     the lab's utility process (ESM; main forks it, electron/worker.ts)
 *   out/preload/index.cjs  preload (CommonJS: sandboxed preloads cannot be ES modules)
 *   out/renderer/          the React page (index.html + hashed assets)
 * `npm run build` runs it; Forge's prePackage hook runs it before packaging.
 */
import { resolve } from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'electron-vite';
import type { Plugin } from 'vite';
import { DEV_CSP, PRODUCTION_CSP } from './host/security.ts';

const root = import.meta.dirname;

/** Native or huge packages main must load from node_modules (unpacked from the asar), never bundle. */
const NATIVE = ['better-sqlite3', 'node-llama-cpp', /^@node-llama-cpp\//];

/** Under `electron-vite dev` only: swaps index.html's CSP for the dev one (inline React Refresh preamble, HMR socket). */
function devCsp(): Plugin {
  return {
    name: 'flowlab:dev-csp',
    apply: 'serve',
    transformIndexHtml(html) {
      if (!html.includes(PRODUCTION_CSP)) throw new Error('renderer/index.html: CSP <meta> does not match PRODUCTION_CSP in host/security.ts');
      return html.replace(PRODUCTION_CSP, DEV_CSP);
    },
  };
}

export default defineConfig({
  main: {
    build: {
      outDir: resolve(root, 'out/main'),
      // Every package.json dependency stays external (loaded from node_modules at run time).
      externalizeDeps: true,
      rolldownOptions: {
        input: { index: resolve(root, 'electron/main.ts'), worker: resolve(root, 'electron/worker.ts') },
        external: NATIVE,
        output: { format: 'es', entryFileNames: '[name].js' },
      },
    },
  },
  preload: {
    build: {
      outDir: resolve(root, 'out/preload'),
      // A sandboxed preload can require only 'electron': bundle everything else into one file.
      externalizeDeps: false,
      rolldownOptions: {
        input: { index: resolve(root, 'electron/preload.ts') },
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: resolve(root, 'renderer'),
    plugins: [react(), devCsp()],
    build: {
      outDir: resolve(root, 'out/renderer'),
      // electron-vite leaves bundles unminified; the renderer is the one worth shrinking.
      minify: true,
      rolldownOptions: { input: resolve(root, 'renderer/index.html') },
    },
  },
});
