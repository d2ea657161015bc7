import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chooseGpu, gpuBuildPackages } from './gpu-choice.js';

const none = () => false;
const only =
  (...names: string[]) =>
  (name: string) =>
    names.includes(name);

describe('chooseGpu', () => {
  it('runs on the CPU, and says how to get CUDA or Vulkan, when their builds are not installed', () => {
    expect(chooseGpu('auto', 'linux', 'x64', none)).toEqual({
      gpu: false,
      note: 'the CUDA and Vulkan builds of llama.cpp are not installed (TASKGATE_GPU_BUILDS=1 npm ci keeps them)',
      problem: null,
    });
    expect(chooseGpu('auto', 'linux', 'arm64', none).note).toBe('no GPU build of llama.cpp exists for linux-arm64');
  });

  it('lets node-llama-cpp pick the GPU when a GPU build is installed', () => {
    expect(chooseGpu('auto', 'linux', 'x64', only('@node-llama-cpp/linux-x64-vulkan')).gpu).toBe('auto');
    expect(chooseGpu('cuda', 'win32', 'x64', only('@node-llama-cpp/win-x64-cuda')).gpu).toBe('cuda');
    expect(chooseGpu('auto', 'darwin', 'arm64', none).gpu).toBe('auto');
  });

  it('refuses a GPU that is asked for but cannot be had, naming the way to get it', () => {
    expect(chooseGpu('cuda', 'linux', 'x64', only('@node-llama-cpp/linux-x64-vulkan')).problem).toBe(
      'gpu: cuda, but its build of llama.cpp (@node-llama-cpp/linux-x64-cuda or @node-llama-cpp/linux-x64-cuda-ext) is not installed; reinstall with: TASKGATE_GPU_BUILDS=1 npm ci',
    );
    expect(chooseGpu('metal', 'linux', 'x64', none).problem).toBe('gpu: metal is only available on macOS');
    expect(chooseGpu('vulkan', 'darwin', 'arm64', none).problem).toContain('not available on macOS');
  });

  it('stays on the CPU when told to, whatever is installed', () => {
    expect(chooseGpu(false, 'linux', 'x64', () => true)).toMatchObject({ gpu: false, problem: null });
  });

  it('names the same packages node-llama-cpp lists as its optional dependencies', () => {
    const { optionalDependencies } = JSON.parse(readFileSync(join('node_modules', 'node-llama-cpp', 'package.json'), 'utf8')) as {
      optionalDependencies: Record<string, string>;
    };
    for (const platform of ['linux', 'win32'] as const) {
      for (const name of [...gpuBuildPackages(platform, 'x64').cuda, ...gpuBuildPackages(platform, 'x64').vulkan])
        expect(Object.keys(optionalDependencies)).toContain(name);
    }
  });
});
