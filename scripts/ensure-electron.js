// `npm start` runs this first. `npm ci` skips Electron's postinstall (package.json allowScripts:
// it downloads the Electron binary, which offline CI machines cannot); on a user's machine we
// run that download once here, then electron-vite launches the app.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const dir = path.dirname(require.resolve('electron/package.json'));
if (!existsSync(path.join(dir, 'path.txt'))) {
  console.error('Electron binary missing: downloading it once (node node_modules/electron/install.js) ...');
  const r = spawnSync(process.execPath, [path.join(dir, 'install.js')], { stdio: 'inherit' });
  if (r.status !== 0) {
    console.error('Could not download Electron. Check your network, or set ELECTRON_MIRROR. The CLI (`npm run flowlab`) works without it.');
    process.exit(r.status ?? 1);
  }
}
