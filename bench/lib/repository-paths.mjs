/**
 * Where the benchmark finds what it starts: resolved from this file, so the
 * benchmark works from any working directory.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url));
export const taskgateEntry = join(repositoryRoot, 'dist', 'cli', 'main.js');
/** This build's serving heap flags (`src/server/heap-tuning.ts`), given to every taskgate the benchmark starts, whichever its build. */
export const heapTuningModule = join(repositoryRoot, 'dist', 'server', 'heap-tuning.js');
export const mockEngineEntry = join(repositoryRoot, 'bench', 'mock-engine.mjs');
export const bareProxyEntry = join(repositoryRoot, 'bench', 'bare-proxy.mjs');
export const otlpSinkEntry = join(repositoryRoot, 'bench', 'otlp-sink.mjs');
export const defaultResultsDirectory = join(repositoryRoot, 'bench', 'results');
