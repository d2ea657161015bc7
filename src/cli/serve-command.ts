import { loadSettings } from '../config/load-config.js';
import { createLogger } from '../log/logger.js';
import { startTaskgate } from '../main.js';
import { parseCommand, parseInteger } from './parse-command.js';

export const serveUsage = `Usage: taskgate serve [--config FILE] [--port N] [--host H] [--data-dir DIR]

Serves the OpenAI-compatible API (POST /v1/chat/completions and friends).

Options:
  --config FILE    YAML config naming engines and models (env TASKGATE_CONFIG);
                   without one, the default catalog on the built-in CPU engine
  --port N         port to listen on (env PORT; default 8080)
  --host H         address to bind (default 0.0.0.0)
  --data-dir DIR   the SQLite store and models/ (env TASKGATE_DATA_DIR; default ./.taskgate)
  -h, --help       show this help

Environment:
  TASKGATE_ADMIN_KEY   bootstrap admin key of account "default" (20+ printable characters);
                       without it the first start creates one and prints it once.`;

export async function serveCommand(argv: string[], environment: NodeJS.ProcessEnv): Promise<void> {
  const { values, help } = parseCommand(
    argv,
    { config: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' }, 'data-dir': { type: 'string' } },
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
  const logger = createLogger({ level: settings.config.logging.level });
  const gateway = await startTaskgate(settings, logger);
  // Handlers first: a SIGTERM that follows the start-up line must already find them.
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
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
    config: settings.configPath ?? '(built-in default)',
    store: settings.sqlitePath,
    models: settings.config.models.length,
    engines: settings.config.engines.length,
  });
  if (gateway.createdAdminKey !== null) {
    process.stdout.write(`\nCreated the admin key of account "default". It is shown only this once; keep it:\n${gateway.createdAdminKey}\n\n`);
  }
}
