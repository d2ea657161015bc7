/**
 * What `taskgate serve` says once it listens, the same for a lone process and
 * for the primary of `--workers N`: one log line with where it listens and
 * what it serves, and the bootstrap admin key, printed once on stdout.
 */
import type { Settings } from '../config/load-config.js';
import type { Logger } from '../log/logger.js';
import { describeStoreLocation } from '../store/open-store.js';
import { commandName } from './command-name.js';
import { describeDataDirectory } from './data-directory.js';

export function logListening(
  logger: Logger,
  settings: Settings,
  where: { baseUrl: string; metricsUrl: string | null; workers?: number },
): void {
  logger.info('taskgate listening', {
    url: where.baseUrl,
    ...(where.metricsUrl === null ? {} : { metrics_url: where.metricsUrl }),
    ...(where.workers === undefined ? {} : { workers: where.workers }),
    config: settings.configPath ?? '(built-in default)',
    data_directory: describeDataDirectory(settings),
    store: describeStoreLocation(settings.store),
    models: settings.config.models.length,
    engines: settings.config.engines.length,
  });
}

export function printCreatedAdminKey(key: string): void {
  process.stdout.write(
    `\nCreated the admin key of account "default". It is shown only this once; keep it (lost, it is replaced by "${commandName()} keys create --env production --role admin"):\n${key}\n\n`,
  );
}

/** The API's base URL for a listening address: a wildcard address is reached on loopback. */
export function baseUrlOf(host: string, port: number): string {
  const displayHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${displayHost.includes(':') ? `[${displayHost}]` : displayHost}:${port}/v1`;
}
