import { apiOptions, apiOptionsHelp, createApiClient, type ApiClient, projectOf } from './api-client.js';
import { parseCommand } from './parse-command.js';
import { formatTable } from './format-table.js';

export const routesUsage = `Usage: taskgate routes [--project P] [--workload W] [--json] [options]

Which model serves each workload's requested models, the candidates being
tested (n evaluated, k passed, the lower confidence bound, cost per call),
and the savings so far. Without --workload, every workload of the project.

Options:
  --project P      project (default: default)
  --workload W     one workload
  --json           the API's JSON, for scripts
${apiOptionsHelp}
  -h, --help       show this help`;

interface RoutesView {
  workload: string;
  pass_rate: number;
  routes: Array<{
    requested_model: string;
    served_model: string;
    pinned_model: string | null;
    candidates: Array<{ model: string; state: string; evaluated: number; passed: number; lower_bound: number; cost_per_call_usd: number }>;
    routed_calls: number;
    savings_usd: number;
  }>;
}

export async function routesCommand(argv: string[], environment: NodeJS.ProcessEnv): Promise<void> {
  const { values, help } = parseCommand(argv, { ...apiOptions, project: { type: 'string' }, workload: { type: 'string' }, json: { type: 'boolean' } }, routesUsage);
  if (help) return void process.stdout.write(`${routesUsage}\n`);
  const project = projectOf(values);
  const client = createApiClient(values, environment);
  const workloads = values.workload === undefined ? await workloadsOf(client, project) : [values.workload];
  const views: RoutesView[] = [];
  for (const workload of workloads) {
    views.push((await client.request('GET', `/projects/${encodeURIComponent(project)}/workloads/${encodeURIComponent(workload)}/routes`)) as unknown as RoutesView);
  }
  if (values.json === true) return void process.stdout.write(`${JSON.stringify(views, null, 2)}\n`);
  process.stdout.write(`${formatRoutes(views)}\n`);
}

async function workloadsOf(client: ApiClient, project: string): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor === null ? '?limit=100' : `?limit=100&cursor=${encodeURIComponent(cursor)}`;
    const page = (await client.request('GET', `/projects/${encodeURIComponent(project)}/workloads${query}`)) as { data: Array<{ name: string }>; next_cursor: string | null };
    names.push(...page.data.map((workload) => workload.name));
    cursor = page.next_cursor;
  } while (cursor !== null);
  return names;
}

/** One row per candidate under its route; the route's own row says what serves and what it saved. */
export function formatRoutes(views: readonly RoutesView[]): string {
  const rows = [['WORKLOAD', 'REQUESTED', 'SERVED', 'CANDIDATE', 'STATE', 'N', 'K', 'LOWER', '$/CALL', 'ROUTED CALLS', 'SAVED $']];
  for (const view of views) {
    if (view.routes.length === 0) rows.push([view.workload, '-', '-', '(no evidence yet)', '', '', '', '', '', '', '']);
    for (const route of view.routes) {
      const served = route.pinned_model === null ? route.served_model : `${route.served_model} (pinned)`;
      rows.push([view.workload, route.requested_model, served, '', '', '', '', '', '', String(route.routed_calls), route.savings_usd.toFixed(4)]);
      for (const candidate of route.candidates) {
        rows.push(['', '', '', candidate.model, candidate.state, String(candidate.evaluated), String(candidate.passed), candidate.lower_bound.toFixed(3), candidate.cost_per_call_usd.toPrecision(3), '', '']);
      }
    }
  }
  return formatTable(rows);
}
