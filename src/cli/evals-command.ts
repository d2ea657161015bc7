import { readFileSync } from 'node:fs';
import { apiOptions, apiOptionsHelp, createApiClient, projectOf } from './api-client.js';
import { CliError, UsageError } from './cli-error.js';
import { asksForHelp, parseCommand } from './parse-command.js';

export const evalsUsage = `Usage: taskgate evals <get|set> --workload W [--project P] [options]

The eval contract of a workload: what a cheaper model's replies must pass
before it may serve the workload (see docs/routing.md).

Commands:
  get   print the contract in force (the default one when none was set):
        the JSON that "set --file" takes, so get, edit, set round-trips;
        what its quality bar means goes to stderr
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
  const { values, help } = parseCommand(
    rest,
    { ...apiOptions, project: { type: 'string' }, workload: { type: 'string' }, file: { type: 'string' } },
    evalsUsage,
  );
  if (help) return void process.stdout.write(`${evalsUsage}\n`);
  if (values.workload === undefined) throw new UsageError('--workload is required', evalsUsage);
  const path = `/projects/${encodeURIComponent(projectOf(values))}/workloads/${encodeURIComponent(values.workload)}/eval`;
  const client = createApiClient(values, environment);
  if (subcommand === 'get') {
    // The contract alone on stdout, exactly what `set --file` takes back; where it stands on stderr.
    const found = await client.request('GET', path);
    process.stderr.write(
      `taskgate: ${found.default === true ? 'the default contract (none set)' : `contract version ${String(found.version)}`} of ${values.workload}\n`,
    );
    if (typeof found.semantics_detail === 'string') process.stderr.write(`taskgate: ${found.semantics_detail}\n`);
    process.stdout.write(`${JSON.stringify(found.contract, null, 2)}\n`);
    return;
  }
  const text = values.file === undefined ? readFileSync(0, 'utf8') : readFileSync(values.file, 'utf8');
  let contract: unknown;
  try {
    contract = JSON.parse(text);
  } catch (error) {
    throw new CliError(`the contract is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  // What the API's GET returns (the contract in an envelope) is taken too.
  if (isEnvelope(contract)) contract = contract.contract;
  const stored = await client.request('PUT', path, contract);
  process.stdout.write(`${JSON.stringify(stored, null, 2)}\n`);
}

function isEnvelope(value: unknown): value is { object: 'eval_contract'; contract: unknown } {
  return typeof value === 'object' && value !== null && (value as { object?: unknown }).object === 'eval_contract' && 'contract' in value;
}
