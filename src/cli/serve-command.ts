import { availableParallelism } from 'node:os';
import { loadSettings, type Settings } from '../config/load-config.js';
import { createLogger } from '../log/logger.js';
import { startTaskgate } from '../main.js';
import { createModelDownloads } from '../models/model-downloads.js';
import { describeStoreLocation } from '../store/open-store.js';
import { CliError, UsageError } from './cli-error.js';
import { checkDataDirectory } from './data-directory.js';
import { pullOnFirstStart } from './first-start-pull.js';
import { parseCommand, parseInteger } from './parse-command.js';
import { onStopSignal, stopAndExit } from '../process/stop-and-exit.js';
import { logListening, printCreatedAdminKey } from './start-notices.js';

export const serveUsage = `Usage: taskgate serve [--config FILE] [--port N] [--host H] [--data-dir DIR] [--workers N] [--no-pull]

Serves the OpenAI-compatible API (POST /v1/chat/completions and friends).

Options:
  --config FILE    YAML config naming engines and models (env TASKGATE_CONFIG);
                   without one, the default catalog on the built-in CPU engine
  --port N         port to listen on (env PORT; default 8080)
  --host H         address to bind (default 127.0.0.1: this machine only;
                   0.0.0.0 for every interface)
  --data-dir DIR   the SQLite store and models/ (env TASKGATE_DATA_DIR; default ./.taskgate)
  --workers N      serve from N worker processes behind the one port (default 1:
                   this process alone); 0 or "auto" for one per core. The
                   primary migrates, makes the admin key and fetches the first
                   model once, restarts a worker that dies, and sums /metrics;
                   rate limits stay one budget per key across the workers
  --no-pull        on a first start with no model on disk, do not fetch the
                   recommended one (env TASKGATE_OFFLINE=1 does the same)
  -h, --help       show this help

Environment:
  TASKGATE_ADMIN_KEY      bootstrap admin key of account "default" (20+ printable characters);
                          without it the first start creates one, once it listens, and prints it once.
  TASKGATE_MODEL_MIRROR   fetch catalog model files from this mirror
  TASKGATE_MODEL_CATALOG  a JSON file of models to use instead of the built-in catalog`;

export async function serveCommand(argv: string[], environment: NodeJS.ProcessEnv): Promise<void> {
  const { values, help } = parseCommand(
    argv,
    {
      config: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      workers: { type: 'string' },
      'no-pull': { type: 'boolean' },
    },
    serveUsage,
  );
  if (help) {
    process.stdout.write(`${serveUsage}\n`);
    return;
  }
  const workers = parseWorkers(values.workers);
  const settings = loadSettings(
    {
      configPath: values.config,
      port: parseInteger(values.port, '--port', serveUsage, 0, 65_535),
      host: values.host,
      dataDirectory: values['data-dir'],
    },
    environment,
  );
  checkDataDirectory(settings.dataDirectory);
  const logger = createLogger({ level: settings.config.logging.level });
  const noPull = values['no-pull'] === true;
  const mirror = environment.TASKGATE_MODEL_MIRROR || undefined;
  if (workers > 1) return (await import('./serve-workers.js')).serveWorkers({ settings, logger, workers, noPull, mirror });
  const downloads = createModelDownloads();
  let gateway: Awaited<ReturnType<typeof startTaskgate>>;
  try {
    gateway = await startTaskgate(settings, logger, { downloads });
  } catch (error) {
    throw explainStartFailure(error, settings) ?? error;
  }
  const pulling = new AbortController();
  // Handlers first: a SIGTERM that follows the start-up line must already find them.
  onStopSignal((signal) => {
    pulling.abort();
    stopAndExit(gateway, logger, { signal });
  });
  logListening(logger, settings, { baseUrl: gateway.baseUrl, metricsUrl: gateway.metricsUrl });
  if (gateway.createdAdminKey !== null) printCreatedAdminKey(gateway.createdAdminKey);
  await pullOnFirstStart({ settings, downloads, noPull, mirror, stderr: process.stderr, signal: pulling.signal });
}

/** `--workers`: a count, with 0 and "auto" meaning one per core; 1 when absent. */
function parseWorkers(text: string | undefined): number {
  if (text === undefined) return 1;
  if (text === 'auto' || text === '0') return availableParallelism();
  if (!/^\d+$/.test(text) || Number(text) > 1_024)
    throw new UsageError(
      `--workers must be a number of processes from 1 to 1024, or 0 or "auto" for one per core; got "${text}"`,
      serveUsage,
    );
  return Number(text);
}

/** The start failures a person can fix, as one line saying what to do; undefined for anything else. */
export function explainStartFailure(
  error: unknown,
  settings: Pick<Settings, 'host' | 'port' | 'store' | 'dataDirectory'>,
): CliError | undefined {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const address = `${settings.host}:${settings.port}`;
  if (code === 'EADDRINUSE')
    return new CliError(
      `cannot listen on ${address}: the port is in use (another taskgate?). Stop that process, or choose another port with --port N (or PORT).`,
    );
  // A worker of `serve --workers` reports the primary's bind as `bind`.
  const syscall = (error as { syscall?: string }).syscall;
  if (code === 'EACCES' && (syscall === 'listen' || syscall === 'bind'))
    return new CliError(
      `cannot listen on ${address}: permission denied (ports below 1024 need privileges). Choose another port with --port N.`,
    );
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return new CliError(
      `cannot listen on ${address}: ${settings.host} is not an address of this machine. Give one with --host (127.0.0.1, or 0.0.0.0 for every interface).`,
    );
  if (code === 'EACCES' || code === 'EROFS' || code === 'ENOTDIR' || code === 'EPERM') {
    return new CliError(
      `cannot write the data directory ${settings.dataDirectory} (${code}). Check its permissions, or choose another with --data-dir.`,
    );
  }
  if (typeof code === 'string' && code.startsWith('SQLITE_')) {
    return new CliError(
      `cannot use the database ${describeStoreLocation(settings.store)} (${code}: ${(error as Error).message}). Is it a taskgate database, and writable? Choose another data directory with --data-dir.`,
    );
  }
  return undefined;
}
