/**
 * The primary of `taskgate serve --workers N`: forks N workers (node:cluster)
 * that each run the whole gateway (`worker-main.ts`) on the same host and
 * port (the primary holds the socket and hands connections out in turn),
 * and keeps N of them running. What must happen once per gateway stays here:
 * the budgets of the memory rate limiter (`limits/cluster/`), the sum of the
 * workers' metrics (`fleet-metrics.ts`) and the state of the first start's
 * model download (`fleet-downloads.ts`). Migrating and the admin key are the
 * caller's, before and after `startWorkerFleet` (`cli/serve-workers.ts`).
 *
 * A worker that dies is replaced in its slot after a backoff
 * (`restart-delay.ts`), logged. `stop` asks every worker to finish its calls
 * in flight and exit, as SIGTERM does to a lone process.
 */
import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import type { Settings } from '../config/load-config.js';
import { createClusterLimitsHost } from '../limits/cluster/cluster-limits-host.js';
import type { Logger } from '../log/logger.js';
import type { ModelDownloads } from '../models/model-downloads.js';
import { missingHeapTuningFlags } from '../server/heap-tuning.js';
import type { Metrics } from '../tracking/metrics.js';
import { createFleetDownloads } from './fleet-downloads.js';
import { createFleetMetrics } from './fleet-metrics.js';
import { asToPrimary, type ToWorker } from './fleet-messages.js';
import { channelToWorker } from '../ipc/message-channel.js';
import { quickDeathsAfter, restartDelayMs } from './restart-delay.js';

/** A worker could not start; `code` and `syscall` are its error's, so the CLI explains it as it does a lone process's (port in use…). */
export class WorkerStartError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly syscall: string | undefined,
  ) {
    super(message);
    this.name = 'WorkerStartError';
  }
}

export interface WorkerFleetOptions {
  settings: Settings;
  /** How many workers, 2 or more. */
  workers: number;
  logger: Logger;
}

export interface WorkerFleet {
  /** The port every worker listens on (the one chosen, when the settings say 0). */
  readonly port: number;
  /** The first start's download, as every worker sees it: the primary's pull writes here. */
  readonly downloads: ModelDownloads;
  /** Every worker's metrics, summed: what the primary serves on `server.metrics`. */
  readonly metrics: Metrics;
  /** The process ids of the workers alive now. */
  pids(): number[];
  /** Asks every worker to finish its calls in flight and exit; resolves true when all exited cleanly. */
  stop(): Promise<boolean>;
}

interface Slot {
  readonly index: number;
  worker: Worker | null;
  startedAt: number;
  quickDeaths: number;
  restart: NodeJS.Timeout | null;
  /** Resolves when the current worker exited: whether it exited cleanly. */
  exited: Promise<boolean>;
  /** Asks the current worker to stop; null when there is none. */
  stop: (() => void) | null;
}

/** Room beyond the configured shutdown grace for a worker to flush its traces and close. */
const exitMarginMs = 10_000;

export async function startWorkerFleet(options: WorkerFleetOptions): Promise<WorkerFleet> {
  const { settings, logger } = options;
  // The primary serves `server.metrics` itself, with the sum; workers would each take a port for their own part.
  const workerSettings: Settings = { ...settings, config: { ...settings.config, server: { ...settings.config.server, metrics: null } } };
  const limits = settings.limits.type === 'memory' ? createClusterLimitsHost() : null;
  const slots: Slot[] = Array.from({ length: options.workers }, (_, index) => ({
    index,
    worker: null,
    startedAt: 0,
    quickDeaths: 0,
    restart: null,
    exited: Promise.resolve(true),
    stop: null,
  }));
  const listening = new Set<Worker>();
  const fleetMetrics = createFleetMetrics({
    workers: () => [...listening].map(channelToWorker),
    logger: logger.child({ part: 'metrics' }),
  });
  const broadcast = (message: ToWorker) => {
    for (const slot of slots) if (slot.worker !== null) channelToWorker(slot.worker).send(message);
  };
  const downloads = createFleetDownloads(broadcast);
  let port = settings.port;
  let stopping = false;
  /** Settles the first start: every worker listening, or the first failure. */
  let started: { resolve: () => void; reject: (error: Error) => void } | null = null;

  // Workers start with the primary's node options plus the serving heap flags (server/heap-tuning.ts), which V8 reads only at start.
  const execArgv = [...process.execArgv, ...missingHeapTuningFlags(process.execArgv)];
  cluster.setupPrimary({
    exec: fileURLToPath(new URL('./worker-main.js', import.meta.url)),
    args: [],
    execArgv,
    serialization: 'advanced',
  });

  function fork(slot: Slot): void {
    const worker = cluster.fork();
    const channel = channelToWorker(worker);
    slot.worker = worker;
    slot.startedAt = Date.now();
    let failure: WorkerStartError | null = null;
    let greeted = false;
    const detach = [
      fleetMetrics.attach(channel),
      ...(limits === null ? [] : [limits.attach(channel)]),
      channel.subscribe((raw) => {
        const message = asToPrimary(raw);
        if (message?.type === 'fleet:hello') {
          greeted = true;
          if (stopping) return void worker.process.kill('SIGTERM');
          channel.send({
            type: 'fleet:start',
            slot: slot.index,
            settings: workerSettings,
            downloads: downloads.entries(),
          } satisfies ToWorker);
        } else if (message?.type === 'fleet:listening') {
          port = message.port;
          listening.add(worker);
          logger.debug('worker listening', { worker: slot.index, pid: worker.process.pid });
          if (started !== null && slots.every((each) => each.worker !== null && listening.has(each.worker))) started.resolve();
        } else if (message?.type === 'fleet:start-failed') {
          failure = new WorkerStartError(message.message, message.code ?? undefined, message.syscall ?? undefined);
          if (started === null)
            logger.error('worker could not start', {
              worker: slot.index,
              pid: worker.process.pid,
              error_message: message.message,
              error_code: message.code,
            });
        }
      }),
    ];
    slot.stop = () => {
      if (!greeted || !channel.send({ type: 'fleet:stop' } satisfies ToWorker)) worker.process.kill('SIGTERM');
    };
    slot.exited = new Promise((resolve) => {
      worker.once('exit', (code, signal) => {
        for (const stop of detach) stop();
        listening.delete(worker);
        slot.worker = null;
        slot.stop = null;
        // SIGTERM ends a worker cleanly before it serves (it then has nothing in flight); later it exits 0 on its own.
        resolve(code === 0 || signal === 'SIGTERM');
        if (stopping) return;
        if (started !== null) {
          started.reject(
            failure ?? new WorkerStartError(`a worker exited before it listened (${signal ?? `exit code ${code}`})`, undefined, undefined),
          );
          return;
        }
        const livedMs = Date.now() - slot.startedAt;
        slot.quickDeaths = quickDeathsAfter(slot.quickDeaths, livedMs);
        const delayMs = restartDelayMs(slot.quickDeaths);
        logger.warn('worker died; starting another in its place', {
          worker: slot.index,
          pid: worker.process.pid,
          exit_code: code,
          signal,
          lived_ms: livedMs,
          restart_in_ms: delayMs,
        });
        slot.restart = setTimeout(() => {
          slot.restart = null;
          if (stopping) return;
          fleetMetrics.countRestart();
          fork(slot);
        }, delayMs);
      });
    });
  }

  async function stop(): Promise<boolean> {
    stopping = true;
    for (const slot of slots) {
      if (slot.restart !== null) clearTimeout(slot.restart);
      slot.restart = null;
      // A worker that has not asked for its start yet would miss the message; it, and one whose link is gone, gets the signal, which stops it the same way.
      slot.stop?.();
    }
    const deadline = setTimeout(() => {
      for (const slot of slots) {
        if (slot.worker === null) continue;
        logger.error('worker did not stop in time; killing it', { worker: slot.index, pid: slot.worker.process.pid });
        slot.worker.process.kill('SIGKILL');
      }
    }, settings.config.server.shutdown_timeout_ms + exitMarginMs);
    const clean = await Promise.all(slots.map((slot) => slot.exited));
    clearTimeout(deadline);
    await limits?.close();
    return clean.every(Boolean);
  }

  try {
    await new Promise<void>((resolve, reject) => {
      started = { resolve, reject };
      for (const slot of slots) fork(slot);
    });
  } catch (error) {
    await stop();
    throw error;
  } finally {
    started = null;
  }

  return {
    get port() {
      return port;
    },
    downloads,
    metrics: fleetMetrics.metrics,
    pids: () => slots.flatMap((slot) => (slot.worker?.process.pid === undefined ? [] : [slot.worker.process.pid])),
    stop,
  };
}
