/**
 * Which llama.cpp build the CPU engine asks node-llama-cpp for. The GPU builds
 * (CUDA, Vulkan) are separate npm packages that a default install removes
 * (`scripts/remove-gpu-builds.mjs`); `gpu: auto` uses them only when they are
 * installed, so a machine without them never probes for a GPU, and the start-up
 * log says which build runs and how to get the others. Metal is part of the
 * standard macOS arm64 build.
 */
import { createRequire } from 'node:module';

export type GpuSetting = 'auto' | 'cuda' | 'vulkan' | 'metal' | false;

export interface GpuChoice {
  /** What to pass as `getLlama({ gpu })`. */
  gpu: 'auto' | 'cuda' | 'vulkan' | 'metal' | false;
  /** Why no GPU is used, or what is missing for the one asked for. */
  note: string | null;
  /** Set when the setting cannot be met here: the engine refuses to start with it. */
  problem: string | null;
}

export const KEEP_GPU_BUILDS = 'TASKGATE_GPU_BUILDS=1 npm ci';

/** node-llama-cpp's package names for the GPU builds of this platform (empty where there are none). */
export function gpuBuildPackages(platform: NodeJS.Platform, arch: string): Record<'cuda' | 'vulkan', string[]> {
  const prefix = platform === 'linux' ? 'linux' : platform === 'win32' ? 'win' : null;
  if (prefix === null || arch !== 'x64') return { cuda: [], vulkan: [] };
  return {
    cuda: [`@node-llama-cpp/${prefix}-x64-cuda`, `@node-llama-cpp/${prefix}-x64-cuda-ext`],
    vulkan: [`@node-llama-cpp/${prefix}-x64-vulkan`],
  };
}

export function chooseGpu(
  setting: GpuSetting,
  platform: NodeJS.Platform,
  arch: string,
  isInstalled: (packageName: string) => boolean,
): GpuChoice {
  if (setting === false) return { gpu: false, note: 'gpu: false in the config', problem: null };
  if (platform === 'darwin') {
    if (setting === 'auto' || setting === 'metal') return { gpu: setting, note: null, problem: null };
    return { gpu: false, note: null, problem: `gpu: ${setting} is not available on macOS; use auto or metal` };
  }
  const builds = gpuBuildPackages(platform, arch);
  const installed = { cuda: builds.cuda.some(isInstalled), vulkan: builds.vulkan.some(isInstalled) };
  if (setting === 'metal') return { gpu: false, note: null, problem: 'gpu: metal is only available on macOS' };
  if (setting === 'auto') {
    if (installed.cuda || installed.vulkan) return { gpu: 'auto', note: null, problem: null };
    const note =
      builds.cuda.length === 0
        ? `no GPU build of llama.cpp exists for ${platform}-${arch}`
        : `the CUDA and Vulkan builds of llama.cpp are not installed (${KEEP_GPU_BUILDS} keeps them)`;
    return { gpu: false, note, problem: null };
  }
  if (installed[setting]) return { gpu: setting, note: null, problem: null };
  const problem =
    builds[setting].length === 0
      ? `gpu: ${setting}, but llama.cpp has no ${setting} build for ${platform}-${arch}`
      : `gpu: ${setting}, but its build of llama.cpp (${builds[setting].join(' or ')}) is not installed; reinstall with: ${KEEP_GPU_BUILDS}`;
  return { gpu: false, note: null, problem };
}

/** Whether a package resolves from node-llama-cpp's own location, as its loader imports it. */
export function isPackageInstalled(packageName: string): boolean {
  try {
    createRequire(createRequire(import.meta.url).resolve('node-llama-cpp')).resolve(packageName);
    return true;
  } catch {
    return false;
  }
}
