/**
 * The engines the config declares, built at the composition root.
 *
 * A `llama-cpp` engine serves the models whose replicas name it; each replica
 * says which GGUF file (`configuredModelFiles`), how many sequences and how
 * long a context.
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { ModelDownloadingError, ModelNotDownloadedError } from '../api/errors.js';
import type { Settings } from '../config/load-config.js';
import type { Logger } from '../log/logger.js';
import { configuredModelFiles } from '../models/configured-model-files.js';
import type { ModelDownloads } from '../models/model-downloads.js';
import { missingModelMessage, modelsDirectoryOf } from '../models/model-files.js';
import type { Engine } from './engine.js';
import type { LlamaCppModel } from './llama-cpp/llama-cpp-engine.js';
import type { LlamaRuntime } from './llama-cpp/llama-runtime.js';
import { createOpenAIEngine } from './openai-engine.js';

/**
 * llama.cpp threads when the config does not say: every CPU but one, which
 * Node keeps for HTTP, sampling and detokenizing. llama.cpp's threads spin
 * while they wait for each other, so any that must share a CPU with the event
 * loop slow every step: on 2 vCPUs, 2 threads decode a single call 2.5 times
 * slower than 1 (docs/benchmarks.md, "CPU engine").
 */
export function defaultThreads(): number {
  return Math.max(1, availableParallelism() - 1);
}

/** Sequences per model when the config does not say: a few calls batched together use a CPU best. */
export const DEFAULT_SEQUENCES = 4;
/** What a call to a model still downloading is told to wait before retrying. */
const DOWNLOAD_RETRY_SECONDS = 10;

/** Tokens per sequence when the config does not say (memory is sequences × context × the model's KV size per token). */
export const DEFAULT_CONTEXT_SIZE = 4096;

export interface ConfiguredEngines {
  engines: Engine[];
  /** Closes the engines, then the llama.cpp binding if one was loaded. */
  close(): Promise<void>;
}

/** `downloads`: model files being fetched right now, so their calls hear "downloading" rather than "not downloaded". */
export async function createEngines(settings: Settings, logger: Logger, downloads?: ModelDownloads): Promise<ConfiguredEngines> {
  const engineConfigs = settings.config.engines;
  // node-llama-cpp takes ~0.3 s to import: only a config with a CPU engine pays for it.
  const cpu = engineConfigs.some((engine) => engine.type === 'llama-cpp')
    ? { ...(await import('./llama-cpp/llama-cpp-engine.js')), ...(await import('./llama-cpp/llama-runtime.js')) }
    : null;
  let runtime: LlamaRuntime | null = null;
  const engines = engineConfigs.map((engine): Engine => {
    const engineLogger = logger.child({ engine: engine.id });
    if (engine.type === 'openai') {
      return createOpenAIEngine(
        {
          id: engine.id,
          baseUrl: engine.base_url,
          apiKey: engine.api_key,
          maxConcurrency: engine.max_concurrency,
          maxQueue: engine.max_queue,
          queueTimeoutMs: engine.queue_timeout_ms,
          transport: engine.transport,
          connectTimeoutMs: engine.connect_timeout_ms,
          firstByteTimeoutMs: engine.timeout_ms,
          idleTimeoutMs: engine.idle_timeout_ms,
          headers: engine.headers,
        },
        engineLogger,
      );
    }
    runtime ??= cpu!.createLlamaRuntime({
      threads: engine.threads ?? defaultThreads(),
      gpu: engine.gpu,
      logger: logger.child({ engine: 'llama.cpp' }),
    });
    return cpu!.createLlamaCppEngine({
      id: engine.id,
      runtime,
      maxQueue: engine.max_queue,
      models: llamaCppModels(engine.id, settings, downloads),
      logger: engineLogger,
    });
  });
  return {
    engines,
    async close() {
      await Promise.all(engines.map((engine) => engine.close()));
      await runtime?.close();
    },
  };
}

function llamaCppModels(engineId: string, settings: Settings, downloads: ModelDownloads | undefined): LlamaCppModel[] {
  const modelsDirectory = modelsDirectoryOf(settings.dataDirectory);
  return configuredModelFiles(settings)
    .filter((file) => file.engineId === engineId)
    .map(({ model, replica, path, catalog }) => ({
      name: replica.name ?? model.id,
      file: path,
      contextSize: replica.context_size ?? Math.min(model.context_window, DEFAULT_CONTEXT_SIZE),
      sequences: replica.sequences ?? DEFAULT_SEQUENCES,
      missingFile() {
        const downloading = downloads?.describe(path);
        if (downloading !== undefined)
          return new ModelDownloadingError(
            `The model file of '${model.id}' is ${downloading}; retry when it is done.`,
            DOWNLOAD_RETRY_SECONDS,
          );
        return new ModelNotDownloadedError(
          catalog === null
            ? `The model file of '${model.id}' is missing: ${path} (served_by file in the config) does not exist.`
            : `${missingModelMessage(modelsDirectory, model)}${pullDirectoryFlag(settings)}`,
        );
      },
    }));
}

/** The pull command must write where this server reads: name the data dir unless it is the default. */
function pullDirectoryFlag(settings: Settings): string {
  return settings.dataDirectory === resolve('.taskgate') ? '' : ` --data-dir ${settings.dataDirectory}`;
}
