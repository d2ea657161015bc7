#!/usr/bin/env node
/**
 * Runs after `npm ci` / `npm install` (postinstall). npm installs every
 * llama.cpp build that node-llama-cpp lists for this platform, CUDA and
 * Vulkan included: npm has no way to leave out one optional dependency short
 * of substituting another package under its name, which would hide the GPU
 * builds from users who want them. taskgate's CPU engine needs only the CPU
 * build, so this removes the GPU ones (about 620 MB on Linux x64) from
 * node_modules. `TASKGATE_GPU_BUILDS=1 npm ci` keeps them, and the engine's
 * `gpu: auto` then uses CUDA or Vulkan where the machine has it.
 */
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

const directory = join(process.argv[2] ?? process.cwd(), 'node_modules', '@node-llama-cpp');
const keep = process.env.TASKGATE_GPU_BUILDS === '1';

let names = [];
try {
  names = readdirSync(directory).filter((name) => /-(cuda|cuda-ext|vulkan)$/.test(name));
} catch {
  // No node-llama-cpp here (installed elsewhere, or not at all): nothing to do.
}
if (names.length > 0 && !keep) {
  let bytes = 0;
  for (const name of names) {
    bytes += sizeOf(join(directory, name));
    rmSync(join(directory, name), { recursive: true, force: true });
  }
  process.stdout.write(
    `taskgate: removed the GPU builds of llama.cpp (${names.join(', ')}; ${Math.round(bytes / 1e6)} MB); the CPU engine runs on the CPU. ` +
      'To keep them for CUDA or Vulkan: TASKGATE_GPU_BUILDS=1 npm ci\n',
  );
}

function sizeOf(path) {
  const stats = statSync(path);
  if (!stats.isDirectory()) return stats.size;
  return readdirSync(path).reduce((total, name) => total + sizeOf(join(path, name)), 0);
}
