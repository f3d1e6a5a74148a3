/**
 * The llama.cpp build chosen per platform, checked against node-llama-cpp itself: its installed
 * `package.json` (`optionalDependencies`, the packages npm can install) and its own resolution
 * code, run here for each platform. `getPrebuiltBinariesPackageDirectoryForBuildOptions` is read
 * from the installed `dist/bindings/utils/compileLLamaCpp.js` and evaluated with its dynamic
 * `import()` replaced by a recorder, so the test sees which package node-llama-cpp would import for
 * (platform, arch, gpu) on any machine. `getPlatform` is evaluated with a stand-in `process`, and
 * `resolveValidGpuOptionForPlatform` is imported as it is.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { llamaBuildPackages, llamaBuildsToTry, llamaCpuPackage, llamaGpuLayers, llamaGpuOption, llamaPackagesFor, nodeLlamaPlatform, type LlamaBuildGpu } from './platform.ts';
import { llamaBinaryPackage, llamaBinaryStatus } from './binary.ts';
import { llamaPlatformPackage } from '../../electron/native.ts';

const require = createRequire(import.meta.url);
/** node-llama-cpp's folder (its `exports` hide package.json, so found through the main entry). */
const NLC = (() => {
  let dir = path.dirname(require.resolve('node-llama-cpp'));
  while (!(existsSync(path.join(dir, 'package.json')) && readFileSync(path.join(dir, 'package.json'), 'utf8').includes('"name": "node-llama-cpp"'))) dir = path.dirname(dir);
  return dir;
})();
const pkg = JSON.parse(readFileSync(path.join(NLC, 'package.json'), 'utf8')) as { version: string; optionalDependencies: Record<string, string> };

type Resolve = (o: { platform: string; arch: string; gpu: LlamaBuildGpu }) => Promise<unknown>;
let upstreamResolve: Resolve;
let upstreamPlatform: (nodePlatform: string) => string;
let validGpu: (gpu: unknown, o: { platform: string; arch: string }) => unknown;

/** The packages node-llama-cpp's own code imports for a build (binaries first, then the extension). */
async function upstreamImports(platform: string, arch: string, gpu: LlamaBuildGpu): Promise<string[]> {
  imported.length = 0;
  await upstreamResolve({ platform: upstreamPlatform(platform), arch, gpu });
  return [...imported];
}
const imported: string[] = [];

beforeAll(async () => {
  const source = readFileSync(path.join(NLC, 'dist/bindings/utils/compileLLamaCpp.js'), 'utf8');
  const start = source.indexOf('function getPrebuiltBinariesPackageDirectoryForBuildOptions(');
  expect(start, 'node-llama-cpp moved its platform table: re-read compileLLamaCpp.js').toBeGreaterThan(0);
  const end = source.indexOf('\nasync function ', start);
  const body = source.slice(start, end).replace(/\bimport\(/g, '__import(');
  const record = (name: string) => {
    imported.push(name);
    return Promise.resolve({ getBinsDir: () => ({ binsDir: `/bins/${name}`, packageVersion: pkg.version }) });
  };
  upstreamResolve = new Function('__import', 'getModuleVersion', `${body}\nreturn getPrebuiltBinariesPackageDirectoryForBuildOptions;`)(record, async () => pkg.version) as Resolve;
  const platformSrc = readFileSync(path.join(NLC, 'dist/bindings/utils/getPlatform.js'), 'utf8');
  const fn = /export function getPlatform\(\) \{([\s\S]*?)\n\}/.exec(platformSrc)![1]!;
  upstreamPlatform = (p) => new Function('process', fn)({ platform: p }) as string;
  ({ resolveValidGpuOptionForPlatform: validGpu } = (await import(pathToFileURL(path.join(NLC, 'dist/bindings/utils/getGpuTypesToUseForOption.js')).href)) as { resolveValidGpuOptionForPlatform: typeof validGpu });
});

/** The five laptop platforms: what a CPU-only model and `gpu: 'auto'` load, by hand from node-llama-cpp 3.21.1's table. */
const MATRIX = [
  { target: 'darwin-arm64', cpuOption: 'metal', cpuPackage: '@node-llama-cpp/mac-arm64-metal', auto: ['metal'] },
  { target: 'darwin-x64', cpuOption: false, cpuPackage: '@node-llama-cpp/mac-x64', auto: [false] },
  { target: 'win32-x64', cpuOption: false, cpuPackage: '@node-llama-cpp/win-x64', auto: ['cuda', 'vulkan', false] },
  { target: 'linux-x64', cpuOption: false, cpuPackage: '@node-llama-cpp/linux-x64', auto: ['cuda', 'vulkan', false] },
  { target: 'linux-arm64', cpuOption: false, cpuPackage: '@node-llama-cpp/linux-arm64', auto: [false] },
] as const;

describe.each(MATRIX)('llama.cpp on $target', ({ target, cpuOption, cpuPackage, auto }) => {
  const [platform, arch] = target.split('-') as [string, string];

  it('the CPU-only model: the gpu option, gpuLayers 0, and the package node-llama-cpp imports for it', async () => {
    const option = llamaGpuOption(false, platform, arch);
    expect(option).toBe(cpuOption);
    expect(llamaGpuLayers(false)).toBe(0);
    // node-llama-cpp keeps the option as given (it would turn an invalid one into 'auto').
    expect(validGpu(option, { platform: upstreamPlatform(platform), arch })).toBe(option);
    const imports = await upstreamImports(platform, arch, option as LlamaBuildGpu);
    expect(imports).toEqual([cpuPackage]);
    expect(llamaBuildPackages(platform, arch, option as LlamaBuildGpu)).toEqual(imports);
    expect(llamaCpuPackage(platform, arch)).toBe(cpuPackage);
    expect(llamaBinaryPackage(platform as NodeJS.Platform, arch)).toBe(cpuPackage);
    expect(llamaPlatformPackage(platform, arch)).toBe(cpuPackage);
    expect(Object.keys(pkg.optionalDependencies)).toContain(cpuPackage);
    expect(pkg.optionalDependencies[cpuPackage]).toBe(pkg.version);
  });

  it("gpu 'auto': the builds that may load, each with the packages node-llama-cpp imports, all published", async () => {
    expect(llamaBuildsToTry('auto', platform, arch)).toEqual(auto);
    for (const gpu of auto) {
      const imports = await upstreamImports(platform, arch, gpu);
      expect(imports.length, `${target} ${String(gpu)}`).toBeGreaterThan(0);
      expect(llamaBuildPackages(platform, arch, gpu)).toEqual(imports);
      for (const p of imports) expect(Object.keys(pkg.optionalDependencies), p).toContain(p);
    }
    expect(llamaPackagesFor('auto', platform, arch).every((p) => p in pkg.optionalDependencies)).toBe(true);
  });
});

describe('the Apple Silicon trap this fixes', () => {
  it("node-llama-cpp imports nothing for gpu: false on mac arm64 (the old default found no binary there)", async () => {
    expect(await upstreamImports('darwin', 'arm64', false)).toEqual([]);
    expect(llamaBuildPackages('darwin', 'arm64', false)).toEqual([]);
  });

  it('no package named @node-llama-cpp/mac-arm64 exists (electron/native.ts warned about it on every start)', () => {
    expect(Object.keys(pkg.optionalDependencies)).not.toContain('@node-llama-cpp/mac-arm64');
    expect(llamaPlatformPackage('darwin', 'arm64')).not.toBe('@node-llama-cpp/mac-arm64');
  });

  it('an arm64 Linux package holds the CPU build only, so gpu: auto tries no GPU build there', () => {
    const bins = path.join(NLC, '..', '@node-llama-cpp/linux-arm64/bins');
    if (existsSync(bins)) expect(readdirSync(bins)).toEqual(['linux-arm64']);
    expect(llamaBuildsToTry('auto', 'linux', 'arm64')).toEqual([false]);
  });

  it("Metal is turned into 'auto' off macOS by node-llama-cpp, so it is never chosen there", () => {
    expect(validGpu('metal', { platform: 'linux', arch: 'x64' })).toBe('auto');
    expect(llamaGpuOption(false, 'linux', 'arm64')).toBe(false);
  });

  it("node-llama-cpp's platform names: win32 -> win, darwin -> mac, linux stays", () => {
    for (const p of ['win32', 'darwin', 'linux']) expect(nodeLlamaPlatform(p)).toBe(upstreamPlatform(p));
  });

  it('a missing build is named precisely, with the command that installs it', () => {
    const status = llamaBinaryStatus({ platform: 'darwin', arch: 'arm64', resolve: () => undefined, searched: ['/app/node_modules/@node-llama-cpp/mac-arm64-metal'] });
    expect(status.ok).toBe(false);
    expect(status.package).toBe('@node-llama-cpp/mac-arm64-metal');
    expect(status.fix).toBe(`npm install --no-save @node-llama-cpp/mac-arm64-metal@${pkg.version}`);
    expect(status.message).toContain('@node-llama-cpp/mac-arm64-metal');
    expect(status.message).toContain(status.fix);
  });
});
