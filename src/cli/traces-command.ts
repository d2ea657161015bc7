import { setTimeout as sleep } from 'node:timers/promises';
import { apiOptions, apiOptionsHelp, createApiClient, projectOf } from './api-client.js';
import { UsageError } from './cli-error.js';
import { parseCommand, parseInteger } from './parse-command.js';

export const tracesUsage = `Usage: taskgate traces --workload W [--project P] [--status ok|error|aborted] [--limit N] [--follow] [--json] [options]

The latest calls of a workload, newest last; --follow keeps printing new ones
(Ctrl-C stops).

Options:
  --project P      project (default: default)
  --workload W     workload (required)
  --status S       only calls with this status
  --model M        only calls served by this model
  --limit N        how many to show first (default 20, at most 100)
  --follow         poll for new calls every second
  --json           one JSON trace per line
${apiOptionsHelp}
  -h, --help       show this help`;

interface TraceLine {
  request_id: string;
  started_at: number;
  status: string;
  http_status: number;
  served_model: string | null;
  latency_ms: number;
  cost_usd: number;
  prompt_tokens: number;
  completion_tokens: number;
  error_class: string | null;
  environment: string;
}

export async function tracesCommand(argv: string[], environment: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<void> {
  const options = {
    ...apiOptions,
    project: { type: 'string' },
    workload: { type: 'string' },
    status: { type: 'string' },
    model: { type: 'string' },
    limit: { type: 'string' },
    follow: { type: 'boolean' },
    json: { type: 'boolean' },
  } as const;
  const { values, help } = parseCommand(argv, options, tracesUsage);
  if (help) return void process.stdout.write(`${tracesUsage}\n`);
  if (values.workload === undefined) throw new UsageError('--workload is required', tracesUsage);
  const limit = parseInteger(values.limit, '--limit', tracesUsage, 1, 100) ?? 20;
  const client = createApiClient(values, environment);
  const filter = new URLSearchParams({
    limit: String(limit),
    ...(values.status === undefined ? {} : { status: values.status }),
    ...(values.model === undefined ? {} : { model: values.model }),
  });
  const path = `/projects/${encodeURIComponent(projectOf(values))}/workloads/${encodeURIComponent(values.workload)}/traces?${filter}`;
  const print = (trace: TraceLine) => process.stdout.write(`${values.json === true ? JSON.stringify(trace) : formatTrace(trace)}\n`);
  const seen = new Set<string>();
  const stop = signal ?? abortOnInterrupt();
  for (let first = true; first || (values.follow === true && !stop.aborted); first = false) {
    if (!first) await sleep(1_000, undefined, { signal: stop }).catch(() => undefined);
    if (stop.aborted) break;
    const page = (await client.request('GET', path)) as { data: TraceLine[] };
    for (const trace of page.data.reverse()) {
      if (seen.has(trace.request_id)) continue;
      seen.add(trace.request_id);
      print(trace);
    }
  }
}

function abortOnInterrupt(): AbortSignal {
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort());
  return controller.signal;
}

function formatTrace(trace: TraceLine): string {
  const time = new Date(trace.started_at * 1000).toISOString().replace('T', ' ').slice(0, 19);
  const outcome = trace.status === 'ok' ? 'ok   ' : `${trace.status} ${trace.error_class ?? ''}`.trim();
  return `${time}  ${trace.request_id}  ${String(trace.http_status)}  ${(trace.served_model ?? '-').padEnd(24)}  ${Math.round(trace.latency_ms)} ms  $${trace.cost_usd.toFixed(6)}  ${trace.prompt_tokens}/${trace.completion_tokens} tok  ${trace.environment === 'staging' ? 'staging ' : ''}${outcome}`;
}
