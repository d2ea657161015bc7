/**
 * `taskgate serve --workers N` (N ≥ 2), the primary's part: what a gateway
 * does once, whatever its number of workers, happens here, once; the workers
 * serve (`cluster/worker-fleet.ts`, `cluster/worker-main.ts`).
 *
 *   1. migrate the store, and put the operator's `TASKGATE_ADMIN_KEY` in place;
 *   2. fork the workers; a start that fails in any worker (port in use) stops
 *      the others and says why in one line, as a lone process does;
 *   3. serve `server.metrics`, if configured, with the sum over the workers;
 *   4. once every worker listens: the start-up line, then the bootstrap admin
 *      key, made and printed once (workers make none);
 *   5. the first start's model download, once; workers answer calls to that
 *      model with 503 `model_downloading` meanwhile.
 *
 * SIGTERM or SIGINT stops every worker (each finishes its calls in flight),
 * then the primary exits: 0 when every worker stopped cleanly.
 */
import { ensureBootstrapAdminKey } from '../auth/key-issuer.js';
import { startWorkerFleet, type WorkerFleet } from '../cluster/worker-fleet.js';
import type { Settings } from '../config/load-config.js';
import { errorFields, type Logger } from '../log/logger.js';
import { listen, type HttpServer } from '../server/http-server.js';
import { createMetricsApp } from '../server/metrics-app.js';
import { openStore } from '../store/open-store.js';
import { withStoreErrors } from '../store/store-errors.js';
import { pullOnFirstStart } from './first-start-pull.js';
import { explainStartFailure } from './serve-command.js';
import { baseUrlOf, logListening, printCreatedAdminKey } from './start-notices.js';
import { onStopSignal } from '../process/stop-and-exit.js';

export interface ServeWorkersOptions {
  settings: Settings;
  logger: Logger;
  workers: number;
  /** `--no-pull`. */
  noPull: boolean;
  /** `TASKGATE_MODEL_MIRROR`. */
  mirror: string | undefined;
}

export async function serveWorkers(options: ServeWorkersOptions): Promise<void> {
  const { settings, logger } = options;
  const store = withStoreErrors(await openStore(settings.store));
  let fleet: WorkerFleet;
  try {
    await store.migrate();
    if (settings.adminKey !== null) await ensureBootstrapAdminKey(store, settings.adminKey);
    fleet = await startWorkerFleet({ settings, workers: options.workers, logger });
  } catch (error) {
    await store.close();
    throw explainStartFailure(error, settings) ?? error;
  }

  let metricsServer: HttpServer | null = null;
  const metricsAddress = settings.config.server.metrics;
  try {
    if (metricsAddress !== null) metricsServer = await listen(createMetricsApp(fleet.metrics), metricsAddress);
  } catch (error) {
    await fleet.stop();
    await store.close();
    throw explainStartFailure(error, { ...settings, ...metricsAddress }) ?? error;
  }

  const pulling = new AbortController();
  onStopSignal((signal) => {
    pulling.abort();
    logger.info('stopping: every worker finishes its calls in flight', { signal, workers: fleet.pids().length });
    (async () => {
      await metricsServer?.stop(0);
      return fleet.stop();
    })().then(
      (clean) => {
        if (clean) logger.info('stopped');
        else logger.error('stopped, but some worker did not stop cleanly (its log says why)');
        process.exit(clean ? 0 : 1);
      },
      (error: unknown) => {
        logger.error('shutdown failed', errorFields(error));
        process.exit(1);
      },
    );
  });

  logListening(logger, settings, {
    baseUrl: baseUrlOf(settings.host, fleet.port),
    metricsUrl: metricsServer === null || metricsAddress === null ? null : `http://${metricsAddress.host}:${metricsServer.port}/metrics`,
    workers: options.workers,
  });
  // Made only now that every worker listens: a start that fails never prints a key it then loses.
  try {
    const createdAdminKey = settings.adminKey === null ? await ensureBootstrapAdminKey(store, null) : null;
    if (createdAdminKey !== null) printCreatedAdminKey(createdAdminKey);
  } finally {
    // The workers have stores of their own; the primary needs its no more.
    await store.close();
  }
  await pullOnFirstStart({
    settings,
    downloads: fleet.downloads,
    noPull: options.noPull,
    mirror: options.mirror,
    stderr: process.stderr,
    signal: pulling.signal,
  });
}
