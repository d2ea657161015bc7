/**
 * What `npm ci` installs: node-llama-cpp with its real packages (never another
 * package under a GPU build's name, which would silently hide the GPU from
 * users who have one), and then, by the postinstall script, only the CPU
 * build kept unless `TASKGATE_GPU_BUILDS=1` asks for the GPU ones.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { temporaryDirectory } from './helpers/temporary-directory.js';

interface LockedPackage {
  name?: string;
  version: string;
  optional?: boolean;
}

describe('the install', () => {
  it('locks every package under its own name: no substitutes for the llama.cpp builds', () => {
    const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
      overrides?: Record<string, string>;
      scripts: Record<string, string>;
    };
    expect(Object.keys(manifest.overrides ?? {}).filter((name) => name.startsWith('@node-llama-cpp/'))).toEqual([]);
    const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, LockedPackage> };
    const substituted = Object.entries(lock.packages).filter(
      ([path, entry]) => path !== '' && entry.name !== undefined && !path.endsWith(`node_modules/${entry.name}`),
    );
    expect(substituted.map(([path, entry]) => `${path} is ${entry.name}`)).toEqual([]);
    expect(lock.packages['node_modules/@node-llama-cpp/linux-x64-cuda']).toMatchObject({ version: '3.21.1', optional: true });
    expect(manifest.scripts.postinstall).toBe('node scripts/remove-gpu-builds.mjs');
  });

  it('removes the GPU builds after install, keeping the CPU one, unless TASKGATE_GPU_BUILDS=1', () => {
    const layout = () => {
      const root = temporaryDirectory('taskgate-install-');
      for (const name of ['linux-x64', 'linux-x64-cuda', 'linux-x64-cuda-ext', 'linux-x64-vulkan']) {
        mkdirSync(join(root, 'node_modules', '@node-llama-cpp', name, 'bins'), { recursive: true });
        writeFileSync(join(root, 'node_modules', '@node-llama-cpp', name, 'bins', 'library.so'), Buffer.alloc(1_500_000));
      }
      return root;
    };
    const run = (root: string, environment: Record<string, string> = {}) =>
      spawnSync(process.execPath, [resolve('scripts/remove-gpu-builds.mjs'), root], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '', ...environment },
      });
    const builds = (root: string) => readdirSync(join(root, 'node_modules', '@node-llama-cpp')).sort();

    const pruned = layout();
    const result = run(pruned);
    expect(result.status).toBe(0);
    expect(builds(pruned)).toEqual(['linux-x64']);
    expect(result.stdout).toBe(
      'taskgate: removed the GPU builds of llama.cpp (linux-x64-cuda, linux-x64-cuda-ext, linux-x64-vulkan; 5 MB); the CPU engine runs on the CPU. To keep them for CUDA or Vulkan: TASKGATE_GPU_BUILDS=1 npm ci\n',
    );

    const kept = layout();
    expect(run(kept, { TASKGATE_GPU_BUILDS: '1' }).stdout).toBe('');
    expect(builds(kept)).toEqual(['linux-x64', 'linux-x64-cuda', 'linux-x64-cuda-ext', 'linux-x64-vulkan']);
    // Nothing to do where node-llama-cpp is not installed.
    expect(run(temporaryDirectory('taskgate-install-')).status).toBe(0);
  });
});
