/**
 * Puts an Electron build of better-sqlite3's addon in its Electron-only place (electron/native.ts)
 * and checks node-llama-cpp's platform package, before `npm start` / `npm run dev` launch Electron.
 * The CLI's Node build in node_modules/better-sqlite3 is never touched.
 *
 *   tsx scripts/electron-native.ts            # build if missing (prebuild-install, else node-gyp)
 *   tsx scripts/electron-native.ts --check    # print the plan as JSON, change nothing (exit 0)
 *   tsx scripts/electron-native.ts --force    # rebuild even if present
 *
 * The build: copy the better-sqlite3 package (sources, no build/) into a temporary folder beside
 * the target, run `prebuild-install --runtime electron --target <version>` there (downloads the
 * published Electron build), else `node-gyp rebuild --runtime=electron --target=<version>
 * --dist-url=https://electronjs.org/headers` (needs a compiler), then move the addon into place
 * (temp + rename) and remove the temporary folder. Both need the internet once.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { electronSqliteBinding, llamaPlatformPackage, npmNodeGypPath, type NativeTarget } from '../electron/native.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(ROOT, 'package.json'));

function electronVersion(): string {
  return (JSON.parse(readFileSync(require.resolve('electron/package.json'), 'utf8')) as { version: string }).version;
}

function electronAbi(version: string): string | undefined {
  try {
    return (require('node-abi') as { getAbi(v: string, runtime: string): string }).getAbi(version, 'electron');
  } catch {
    return undefined;
  }
}

function llamaVersion(): string {
  return (JSON.parse(readFileSync(require.resolve('node-llama-cpp/package.json'), 'utf8')) as { version: string }).version;
}

function installed(pkg: string): boolean {
  return existsSync(path.join(ROOT, 'node_modules', pkg, 'package.json'));
}

const target: NativeTarget = { electron: electronVersion(), platform: process.platform, arch: process.arch };
const binding = electronSqliteBinding(ROOT, target);
const llama = llamaPlatformPackage(process.platform, process.arch);
const plan = {
  electron: target.electron,
  electronAbi: electronAbi(target.electron),
  nodeAbi: process.versions.modules,
  binding,
  present: existsSync(binding),
  nodeBuild: path.join(path.dirname(require.resolve('better-sqlite3/package.json')), 'build/Release/better_sqlite3.node'),
  llamaPackage: llama,
  llamaPackagePresent: llama !== undefined && installed(llama),
};

if (process.argv.includes('--check')) {
  process.stdout.write(`${JSON.stringify(plan, null, 2)}\n`);
  process.exit(0);
}

if (llama === undefined) {
  console.error(`node-llama-cpp publishes no prebuilt llama.cpp binary for ${process.platform}-${process.arch}: models cannot load until one is built (npx --no node-llama-cpp source download; needs cmake and a compiler).`);
} else if (!plan.llamaPackagePresent) {
  console.error(`node-llama-cpp's prebuilt binaries for this machine (${llama}) are not installed: models cannot load. Fix: npm install --no-save ${llama}@${llamaVersion()} (or npm ci on this machine).`);
}

if (plan.present && !process.argv.includes('--force')) process.exit(0);

console.error(`better-sqlite3 for Electron ${target.electron} (ABI ${plan.electronAbi ?? '?'}; the CLI's build is ABI ${plan.nodeAbi}) is missing: building it once into ${path.dirname(binding)} ...`);
const pkgDir = path.dirname(require.resolve('better-sqlite3/package.json'));
mkdirSync(path.dirname(binding), { recursive: true });
const work = mkdtempSync(path.join(path.dirname(binding), 'build-'));
try {
  cpSync(pkgDir, work, { recursive: true, filter: (src) => !src.startsWith(path.join(pkgDir, 'build')) });
  const prebuild = path.join(path.dirname(require.resolve('prebuild-install/package.json')), 'bin.js');
  let r = spawnSync(process.execPath, [prebuild, '--runtime', 'electron', '--target', target.electron, '--arch', target.arch, '--platform', target.platform], { cwd: work, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error('No published Electron build could be downloaded: compiling with node-gyp (needs Python and a C++ compiler) ...');
    const gyp = npmNodeGypPath(process.execPath, process.platform, process.env);
    r = spawnSync(process.execPath, [gyp, 'rebuild', '--release', '--runtime=electron', `--target=${target.electron}`, `--arch=${target.arch}`, '--dist-url=https://electronjs.org/headers'], { cwd: work, stdio: 'inherit' });
  }
  const built = path.join(work, 'build', 'Release', 'better_sqlite3.node');
  if (r.status !== 0 || !existsSync(built)) {
    console.error(`Could not build better-sqlite3 for Electron ${target.electron}. Check your network (and, for a compile, Python and a C++ compiler), then run: npm run rebuild:electron. The CLI (npm run flowlab) works without it.`);
    process.exit(1);
  }
  const tmp = `${binding}.tmp-${process.pid}`;
  cpSync(built, tmp);
  renameSync(tmp, binding);
  console.error(`better-sqlite3 for Electron ${target.electron}: ${binding}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
