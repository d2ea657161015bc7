import { readFileSync } from 'node:fs';
import { apiOptions, apiOptionsHelp, createApiClient } from './api-client.js';
import { CliError, UsageError } from './cli-error.js';
import { asksForHelp, parseCommand } from './parse-command.js';

export const evalsUsage = `Usage: taskgate evals <get|set> --workload W [--project P] [options]

The eval contract of a workload: what a cheaper model's replies must pass
before it may serve the workload (see docs/routing.md).

Commands:
  get   print the contract in force (the default one when none was set)
  set   store a new version from --file FILE, or from stdin; the workload's
        routes go back to the requested models until certified again

Options:
  --project P      project (default: default)
  --workload W     workload (required)
  --file FILE      the contract as JSON (set)
${apiOptionsHelp}
  -h, --help       show this help`;

export async function evalsCommand(argv: string[], environment: NodeJS.ProcessEnv): Promise<void> {
  const [subcommand, ...rest] = argv;
  if (asksForHelp(subcommand)) {
    process.stdout.write(`${evalsUsage}\n`);
    return;
  }
  if (subcommand !== 'get' && subcommand !== 'set') throw new UsageError(`Unknown evals command "${subcommand}"`, evalsUsage);
  const { values, help } = parseCommand(rest, { ...apiOptions, project: { type: 'string' }, workload: { type: 'string' }, file: { type: 'string' } }, evalsUsage);
  if (help) return void process.stdout.write(`${evalsUsage}\n`);
  if (values.workload === undefined) throw new UsageError('--workload is required', evalsUsage);
  const path = `/projects/${encodeURIComponent(values.project ?? 'default')}/workloads/${encodeURIComponent(values.workload)}/eval`;
  const client = createApiClient(values, environment);
  if (subcommand === 'get') {
    const found = await client.request('GET', path);
    process.stdout.write(`${JSON.stringify(found, null, 2)}\n`);
    return;
  }
  const text = values.file === undefined ? readFileSync(0, 'utf8') : readFileSync(values.file, 'utf8');
  let contract: unknown;
  try {
    contract = JSON.parse(text);
  } catch (error) {
    throw new CliError(`the contract is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  const stored = await client.request('PUT', path, contract);
  process.stdout.write(`${JSON.stringify(stored, null, 2)}\n`);
}
