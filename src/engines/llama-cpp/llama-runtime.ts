/**
 * The process's one binding to llama.cpp, loaded on first use and shared by
 * every `llama-cpp` engine (llama.cpp divides its thread budget between the
 * contexts of one binding, which two bindings would not).
 *
 * Only prebuilt binaries that npm installed are used (`build: "never"`):
 * nothing is compiled or downloaded at start. The GPU builds are used only
 * when installed and the engine's `gpu` allows (`gpu-choice.ts`); the log
 * line at load says which build runs.
 *
 * Threads: node-llama-cpp's default is max(4, CPU cores), which on a 2-core
 * machine oversubscribes the cores and makes generation about a thousand times
 * slower. taskgate passes an explicit count (config `threads`, default
 * `os.availableParallelism() - 1`) both here and to every context.
 */
import { getLlama, LlamaLogLevel, type Llama } from 'node-llama-cpp';
import { EngineUnavailableError } from '../../api/errors.js';
import type { Logger } from '../../log/logger.js';
import { chooseGpu, isPackageInstalled, type GpuSetting } from './gpu-choice.js';

export interface LlamaRuntime {
  readonly threads: number;
  /** The binding, loaded once; rejects with `EngineUnavailableError` when no prebuilt binary works here. */
  load(): Promise<Llama>;
  close(): Promise<void>;
}

export function createLlamaRuntime(options: { threads: number; gpu: GpuSetting; logger: Logger }): LlamaRuntime {
  const { threads, logger } = options;
  let loading: Promise<Llama> | null = null;

  function forward(level: LlamaLogLevel, message: string): void {
    const text = message.trim();
    if (text.length === 0) return;
    if (level === LlamaLogLevel.fatal || level === LlamaLogLevel.error) logger.error('llama.cpp', { message: text });
    else if (level === LlamaLogLevel.warn) logger.warn('llama.cpp', { message: text });
    else logger.debug('llama.cpp', { message: text });
  }

  async function start(): Promise<Llama> {
    const choice = chooseGpu(options.gpu, process.platform, process.arch, isPackageInstalled);
    if (choice.problem !== null)
      throw new EngineUnavailableError(`The CPU engine cannot start: ${choice.problem}.`, undefined, 'engine_not_installed');
    let llama: Llama;
    try {
      llama = await getLlama({
        gpu: choice.gpu,
        build: 'never',
        skipDownload: true,
        progressLogs: false,
        maxThreads: threads,
        logLevel: LlamaLogLevel.warn,
        logger: forward,
      });
    } catch (error) {
      throw new EngineUnavailableError(
        `The CPU engine cannot load llama.cpp on this machine (${process.platform}-${process.arch}): ${error instanceof Error ? error.message : String(error)}. Reinstall with "npm ci" so the @node-llama-cpp/${process.platform}-${process.arch} package is present.`,
        error,
        'engine_not_installed',
      );
    }
    logger.info('llama.cpp loaded', {
      build: llama.gpu === false ? 'cpu' : llama.gpu,
      threads,
      ...(choice.note === null ? {} : { no_gpu_because: choice.note }),
    });
    return llama;
  }

  return {
    threads,
    load() {
      loading ??= start().catch((error: unknown) => {
        loading = null;
        throw error;
      });
      return loading;
    },
    async close() {
      if (loading === null) return;
      const llama = await loading.catch(() => null);
      loading = null;
      await llama?.dispose();
    },
  };
}
