import { apiOptions, apiOptionsHelp, createApiClient, projectOf } from './api-client.js';
import { formatTable } from './format-table.js';
import { parseCommand } from './parse-command.js';

export const statsUsage = `Usage: taskgate stats [--project P] [--workload W] [--since 24h] [--env production|staging|all] [--json] [options]

Calls, error rate, cost, p50/p95 latency and time to first token, the top
failure classes and the per-model breakdown of a workload; without
--workload, one line per workload of the project. Cost is at catalog prices;
beside it, the measured cost of calls on engines with a cost_per_hour (their
share of the engine's busy time), per call and per million tokens.

Options:
  --project P      project (default: default)
  --workload W     one workload
  --since T        30m, 24h, 7d, epoch seconds or an ISO time (default 24h)
  --until T        end of the window (default now)
  --env E          production (default), staging or all
  --json           the API's JSON, for scripts
${apiOptionsHelp}
  -h, --help       show this help`;

interface Percentiles {
  p50: number | null;
  p95: number | null;
}

interface StatsView {
  calls: number;
  errors: number;
  error_rate: number;
  cost_usd: number;
  cost_per_call_usd: number | null;
  cost_per_million_tokens_usd: number | null;
  measured: { calls: number; cost_usd: number; cost_per_call_usd: number; cost_per_million_tokens_usd: number | null } | null;
  prompt_tokens: number;
  completion_tokens: number;
  latency_ms: Percentiles;
  ttft_ms: Percentiles;
}

export async function statsCommand(argv: string[], environment: NodeJS.ProcessEnv): Promise<void> {
  const options = {
    ...apiOptions,
    project: { type: 'string' },
    workload: { type: 'string' },
    since: { type: 'string' },
    until: { type: 'string' },
    env: { type: 'string' },
    json: { type: 'boolean' },
  } as const;
  const { values, help } = parseCommand(argv, options, statsUsage);
  if (help) return void process.stdout.write(`${statsUsage}\n`);
  const client = createApiClient(values, environment);
  const projectName = projectOf(values);
  const project = encodeURIComponent(projectName);
  const query = new URLSearchParams({
    since: values.since ?? '24h',
    env: values.env ?? 'production',
    ...(values.until === undefined ? {} : { until: values.until }),
  });
  if (values.workload === undefined) {
    const list = (await client.request('GET', `/projects/${project}/workloads?limit=100&${query}`)) as {
      data: Array<{ name: string; calls: number; errors: number; error_rate: number; cost_usd: number }>;
    };
    if (values.json === true) return void process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
    const rows = [['WORKLOAD', 'CALLS', 'ERRORS', 'ERROR RATE', 'COST $']];
    for (const workload of list.data)
      rows.push([
        workload.name,
        String(workload.calls),
        String(workload.errors),
        percent(workload.error_rate),
        workload.cost_usd.toFixed(4),
      ]);
    return void process.stdout.write(`${formatTable(rows)}\n`);
  }
  const view = (await client.request('GET', `/projects/${project}/workloads/${encodeURIComponent(values.workload)}?${query}`)) as {
    stats: StatsView & { failures: Record<string, number> };
    models: Array<StatsView & { model: string }>;
  };
  if (values.json === true) return void process.stdout.write(`${JSON.stringify(view, null, 2)}\n`);
  const { stats } = view;
  const failures = Object.entries(stats.failures)
    .sort((left, right) => right[1] - left[1])
    .slice(0, 5);
  const lines = [
    `${values.workload} (${projectName}), ${values.env ?? 'production'}, since ${values.since ?? '24h'}`,
    `  calls ${stats.calls}   errors ${stats.errors} (${percent(stats.error_rate)})   cost $${stats.cost_usd.toFixed(4)}${measuredNote(stats)}   tokens ${stats.prompt_tokens} in / ${stats.completion_tokens} out`,
    `  latency p50 ${milliseconds(stats.latency_ms.p50)}  p95 ${milliseconds(stats.latency_ms.p95)}   ttft p50 ${milliseconds(stats.ttft_ms.p50)}  p95 ${milliseconds(stats.ttft_ms.p95)}`,
    `  top failures: ${failures.length === 0 ? 'none' : failures.map(([name, count]) => `${name} ${count}`).join(', ')}`,
    '',
  ];
  const rows = [['MODEL', 'CALLS', 'ERROR RATE', 'COST $', '$/1M CATALOG', '$/1M MEASURED', 'P50 MS', 'P95 MS', 'TTFT P50']];
  for (const model of view.models) {
    rows.push([
      model.model || '(none)',
      String(model.calls),
      percent(model.error_rate),
      model.cost_usd.toFixed(4),
      dollars(model.cost_per_million_tokens_usd),
      dollars(model.measured?.cost_per_million_tokens_usd ?? null),
      milliseconds(model.latency_ms.p50),
      milliseconds(model.latency_ms.p95),
      milliseconds(model.ttft_ms.p50),
    ]);
  }
  process.stdout.write(`${lines.join('\n')}\n${formatTable(rows)}\n`);
}

/** `(measured $…, $… a call)` after the catalog cost, when some calls ran on priced engines. */
function measuredNote(stats: StatsView): string {
  if (stats.measured === null) return '';
  return ` (measured $${stats.measured.cost_usd.toFixed(4)} over ${stats.measured.calls} calls, $${stats.measured.cost_per_call_usd.toFixed(6)} a call; catalog $${(stats.cost_per_call_usd ?? 0).toFixed(6)})`;
}

function dollars(value: number | null): string {
  return value === null ? '-' : value.toFixed(4);
}

function percent(rate: number): string {
  return `${(rate * 100).toFixed(1)}%`;
}

function milliseconds(value: number | null): string {
  return value === null ? '-' : value < 10 ? value.toFixed(1) : String(Math.round(value));
}
