import { loadSettings, type Settings } from '../config/load-config.js';
import { createLogger } from '../log/logger.js';
import { startTaskgate } from '../main.js';
import { createModelDownloads } from '../models/model-downloads.js';
import { describeStoreLocation } from '../store/open-store.js';
import { CliError } from './cli-error.js';
import { commandName } from './command-name.js';
import { checkDataDirectory, describeDataDirectory } from './data-directory.js';
import { pullOnFirstStart } from './first-start-pull.js';
import { parseCommand, parseInteger } from './parse-command.js';

export const serveUsage = `Usage: taskgate serve [--config FILE] [--port N] [--host H] [--data-dir DIR] [--no-pull]

Serves the OpenAI-compatible API (POST /v1/chat/completions and friends).

Options:
  --config FILE    YAML config naming engines and models (env TASKGATE_CONFIG);
                   without one, the default catalog on the built-in CPU engine
  --port N         port to listen on (env PORT; default 8080)
  --host H         address to bind (default 127.0.0.1: this machine only;
                   0.0.0.0 for every interface)
  --data-dir DIR   the SQLite store and models/ (env TASKGATE_DATA_DIR; default ./.taskgate)
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
    { config: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' }, 'data-dir': { type: 'string' }, 'no-pull': { type: 'boolean' } },
    serveUsage,
  );
  if (help) {
    process.stdout.write(`${serveUsage}\n`);
    return;
  }
  const settings = loadSettings(
    { configPath: values.config, port: parseInteger(values.port, '--port', serveUsage, 0, 65_535), host: values.host, dataDirectory: values['data-dir'] },
    environment,
  );
  checkDataDirectory(settings.dataDirectory);
  const logger = createLogger({ level: settings.config.logging.level });
  const downloads = createModelDownloads();
  let gateway: Awaited<ReturnType<typeof startTaskgate>>;
  try {
    gateway = await startTaskgate(settings, logger, { downloads });
  } catch (error) {
    throw explainStartFailure(error, settings) ?? error;
  }
  const pulling = new AbortController();
  // Handlers first: a SIGTERM that follows the start-up line must already find them.
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    pulling.abort();
    logger.info('stopping: finishing calls in flight', { signal });
    gateway.stop().then(
      () => {
        const stats = gateway.traces.stats();
        logger.info('stopped', { traces_written: stats.written, traces_dropped: stats.dropped });
        process.exit(0);
      },
      (error: unknown) => {
        logger.error('shutdown failed', { error: String(error) });
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  logger.info('taskgate listening', {
    url: gateway.baseUrl,
    ...(gateway.metricsUrl === null ? {} : { metrics_url: gateway.metricsUrl }),
    config: settings.configPath ?? '(built-in default)',
    data_directory: describeDataDirectory(settings),
    store: describeStoreLocation(settings.store),
    models: settings.config.models.length,
    engines: settings.config.engines.length,
  });
  if (gateway.createdAdminKey !== null) {
    process.stdout.write(
      `\nCreated the admin key of account "default". It is shown only this once; keep it (lost, it is replaced by "${commandName()} keys create --env production --role admin"):\n${gateway.createdAdminKey}\n\n`,
    );
  }
  await pullOnFirstStart({ settings, downloads, noPull: values['no-pull'] === true, mirror: environment.TASKGATE_MODEL_MIRROR || undefined, stderr: process.stderr, signal: pulling.signal });
}

/** The start failures a person can fix, as one line saying what to do; undefined for anything else. */
export function explainStartFailure(error: unknown, settings: Pick<Settings, 'host' | 'port' | 'store' | 'dataDirectory'>): CliError | undefined {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const address = `${settings.host}:${settings.port}`;
  if (code === 'EADDRINUSE') return new CliError(`cannot listen on ${address}: the port is in use (another taskgate?). Stop that process, or choose another port with --port N (or PORT).`);
  if (code === 'EACCES' && (error as { syscall?: string }).syscall === 'listen') return new CliError(`cannot listen on ${address}: permission denied (ports below 1024 need privileges). Choose another port with --port N.`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new CliError(`cannot listen on ${address}: ${settings.host} is not an address of this machine. Give one with --host (127.0.0.1, or 0.0.0.0 for every interface).`);
  if (code === 'EACCES' || code === 'EROFS' || code === 'ENOTDIR' || code === 'EPERM') {
    return new CliError(`cannot write the data directory ${settings.dataDirectory} (${code}). Check its permissions, or choose another with --data-dir.`);
  }
  if (typeof code === 'string' && code.startsWith('SQLITE_')) {
    return new CliError(`cannot use the database ${describeStoreLocation(settings.store)} (${code}: ${(error as Error).message}). Is it a taskgate database, and writable? Choose another data directory with --data-dir.`);
  }
  return undefined;
}
