/**
 * Which llama.cpp build node-llama-cpp 3.x loads on a platform and architecture, and which npm
 * package carries it. Pure functions, no node-llama-cpp import (the answers must be there when
 * the binding is not: for messages, for packaging another platform's app).
 *
 * Source: node-llama-cpp 3.21.1, `dist/bindings/utils/compileLLamaCpp.js`
 * (`getPrebuiltBinariesPackageDirectoryForBuildOptions`: the import per platform, arch and gpu),
 * `dist/bindings/utils/getPlatform.js` (`win32` -> `win`, `darwin` -> `mac`) and
 * `dist/bindings/utils/getGpuTypesToUseForOption.js` (`metal` is valid on macOS only).
 * models/llama/platform.test.ts runs that installed code for every platform below and checks
 * each answer here against it and against node-llama-cpp's `optionalDependencies`.
 *
 * The one trap: on Apple Silicon node-llama-cpp publishes only a Metal build
 * (`@node-llama-cpp/mac-arm64-metal`, matched for `gpu: "metal"` only), so `getLlama({gpu:
 * false})` finds no binary there (`NoBinaryFoundError`, or a source build). The CPU path on
 * that machine is the Metal build with `gpuLayers: 0` (no layer offloaded).
 */

/** A llama.cpp build kind, as node-llama-cpp's `gpu` option names it (`false`: CPU only). */
export type LlamaBuildGpu = false | 'metal' | 'cuda' | 'vulkan';

/** node-llama-cpp's own platform name (`getPlatform`): `win`, `mac`, `linux`, else Node's name. */
export function nodeLlamaPlatform(platform: string): string {
  if (platform === 'win32' || platform === 'cygwin') return 'win';
  if (platform === 'darwin') return 'mac';
  if (platform === 'android') return 'linux';
  return platform;
}

/**
 * The npm packages node-llama-cpp imports for the prebuilt build `gpu` on `platform`/`arch`
 * (Node's names, e.g. `darwin`, `arm64`): the binaries package first, then its extension
 * package (CUDA's `-ext`, optional). Empty when node-llama-cpp publishes no such build.
 */
export function llamaBuildPackages(platform: string, arch: string, gpu: LlamaBuildGpu): string[] {
  const os = nodeLlamaPlatform(platform);
  if (os === 'mac') {
    if (arch === 'arm64' && gpu === 'metal') return ['@node-llama-cpp/mac-arm64-metal'];
    if (arch === 'x64' && gpu === false) return ['@node-llama-cpp/mac-x64'];
    return [];
  }
  if (os === 'linux' || os === 'win') {
    if (arch === 'x64') {
      if (gpu === 'cuda') return [`@node-llama-cpp/${os}-x64-cuda`, `@node-llama-cpp/${os}-x64-cuda-ext`];
      if (gpu === 'vulkan') return [`@node-llama-cpp/${os}-x64-vulkan`];
      if (gpu === false) return [`@node-llama-cpp/${os}-x64`];
      return [];
    }
    // One build for every gpu value on these (node-llama-cpp does not look at `gpu` there).
    const one: Record<string, string> = os === 'linux' ? { arm64: 'linux-arm64', arm: 'linux-armv7l', riscv64: 'linux-riscv64' } : { arm64: 'win-arm64' };
    return one[arch] ? [`@node-llama-cpp/${one[arch]}`] : [];
  }
  return [];
}

/**
 * The `gpu` option Flowlab passes to `getLlama` for a model set to `mode` (`false`: CPU only,
 * `'auto'`: offload to a GPU when there is one). CPU-only is `false` everywhere but macOS on
 * arm64, where it is `'metal'` (the only build published there) and layers stay on the CPU
 * through `gpuLayers: 0` ({@link llamaGpuLayers}).
 */
export function llamaGpuOption(mode: 'auto' | false, platform: string = process.platform, arch: string = process.arch): 'auto' | LlamaBuildGpu {
  if (mode === 'auto') return 'auto';
  return nodeLlamaPlatform(platform) === 'mac' && arch === 'arm64' ? 'metal' : false;
}

/** `gpuLayers` for `loadModel`: 0 (every layer on the CPU) for `false`, `'auto'` otherwise. */
export function llamaGpuLayers(mode: 'auto' | false): 0 | 'auto' {
  return mode === false ? 0 : 'auto';
}

/**
 * The builds `getLlama` may load for `mode`, in the order it tries them: the CPU mode's one
 * build; for `'auto'`, Metal on Apple Silicon, else CUDA, Vulkan, then CPU (node-llama-cpp's
 * `getLlamaGpuTypes("allValid")` order; which GPU builds it really tries depends on the
 * drivers it finds), keeping only those with a published package.
 */
export function llamaBuildsToTry(mode: 'auto' | false, platform: string = process.platform, arch: string = process.arch): LlamaBuildGpu[] {
  const option = llamaGpuOption(mode, platform, arch);
  if (option !== 'auto') return [option];
  const mac = nodeLlamaPlatform(platform) === 'mac';
  const order: LlamaBuildGpu[] = mac && arch === 'arm64' ? ['metal'] : mac ? [false] : ['cuda', 'vulkan', false];
  const cpu = llamaBuildPackages(platform, arch, false)[0];
  return order.filter((gpu) => {
    const pkgs = llamaBuildPackages(platform, arch, gpu);
    // Where every gpu value maps to the CPU build's package (linux-arm64, win-arm64), that
    // package holds the CPU build only (its bins/ has one folder): no GPU build to try.
    return pkgs.length > 0 && (gpu === false || pkgs[0] !== cpu);
  });
}

/** The binaries package of the CPU-mode build on `platform`/`arch` (undefined where none is published). */
export function llamaCpuPackage(platform: string = process.platform, arch: string = process.arch): string | undefined {
  return llamaBuildPackages(platform, arch, nodeLlamaPlatform(platform) === 'mac' && arch === 'arm64' ? 'metal' : false)[0];
}

/** Every package (binaries and extensions) of the builds {@link llamaBuildsToTry} lists. */
export function llamaPackagesFor(mode: 'auto' | false, platform: string, arch: string): string[] {
  return llamaBuildsToTry(mode, platform, arch).flatMap((gpu) => llamaBuildPackages(platform, arch, gpu));
}
