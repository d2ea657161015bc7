#!/usr/bin/env node
/** The `taskgate` command. Problems go to stderr with a non-zero exit; stdout carries only what was asked for. */
import { readFileSync } from 'node:fs';
import { missingHeapTuningFlags } from '../server/heap-tuning.js';
import { CliError, UsageError } from './cli-error.js';
import { asksForHelp } from './parse-command.js';

const usage = `Usage: taskgate <command> [options]

taskgate is a self-hosted, OpenAI-compatible LLM gateway.

Commands:
  serve    serve the API (POST /v1/chat/completions); --workers N for N processes
  migrate  bring the store's schema up to date, then exit
  keys     create, list and revoke API keys
  models   fetch and list model files for the built-in CPU engine
  routes   which model serves each workload, and the evidence
  evals    get and set a workload's eval contract
  stats    calls, errors, cost and latency of workloads
  traces   the latest calls of a workload (--follow to tail)

Run "taskgate <command> --help" for a command's options, "taskgate --version" for the version.`;

async function run(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (asksForHelp(command)) {
    process.stdout.write(`${usage}\n`);
    return;
  }
  if (command === '--version' || command === '-v' || command === 'version') {
    process.stdout.write(`taskgate ${packageVersion()}\n`);
    return;
  }
  // Each command loads only what it needs: `keys` and `models` start without the server and llama.cpp.
  if (command === 'serve') {
    // V8 takes these only as a process starts: without them, serve from a child process that has them.
    const missing = missingHeapTuningFlags(process.execArgv);
    if (missing.length > 0) return (await import('./relaunch-with-flags.js')).relaunchWithFlags(missing);
    return (await import('./serve-command.js')).serveCommand(rest, process.env);
  }
  if (command === 'migrate') return (await import('./migrate-command.js')).migrateCommand(rest, process.env);
  if (command === 'keys') return (await import('./keys-command.js')).keysCommand(rest, process.env);
  if (command === 'models') return (await import('./models-command.js')).modelsCommand(rest, process.env);
  if (command === 'routes') return (await import('./routes-command.js')).routesCommand(rest, process.env);
  if (command === 'evals') return (await import('./evals-command.js')).evalsCommand(rest, process.env);
  if (command === 'stats') return (await import('./stats-command.js')).statsCommand(rest, process.env);
  if (command === 'traces') return (await import('./traces-command.js')).tracesCommand(rest, process.env);
  throw new UsageError(`Unknown command "${command}"`, usage);
}

/** The version in package.json, two folders up from dist/cli/ (and from src/cli/ under vitest). */
function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return manifest.version;
}

run(process.argv.slice(2)).catch(async (error: unknown) => {
  // Loaded only for a failure: what `serve` relaunching itself keeps in memory stays small.
  const isConfigError = await import('../config/load-config.js').then(
    ({ ConfigError }) => error instanceof ConfigError,
    () => false,
  );
  if (error instanceof CliError || (isConfigError && error instanceof Error)) {
    process.stderr.write(`taskgate: ${error.message}\n`);
    process.exitCode = error instanceof CliError ? error.exitCode : 1;
  } else {
    // Not a problem we know how to explain: one line, and the stack only when asked for.
    const message = error instanceof Error ? error.message : String(error);
    const stack =
      process.env.TASKGATE_DEBUG === '1' && error instanceof Error ? `\n${error.stack}` : ' (TASKGATE_DEBUG=1 shows where it happened)';
    process.stderr.write(`taskgate: ${message}${stack}\n`);
    process.exitCode = 1;
  }
});
