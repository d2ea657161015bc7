import { apiOptions, apiOptionsHelp, createApiClient, type ApiClient, projectOf } from './api-client.js';
import { parseCommand } from './parse-command.js';
import { formatTable } from './format-table.js';

export const routesUsage = `Usage: taskgate routes [--project P] [--workload W] [--json] [options]

Which model serves each workload's requested models, the candidates being
tested (n evaluated, k passed, the lower confidence bound, engine errors,
latency at the contract's percentile, cost per call), the savings so far,
what evaluating cost and the net; then how each route explores and how its
serving model is watched. Without --workload, every workload of the project.

Options:
  --project P      project (default: default)
  --workload W     one workload
  --json           the API's JSON, for scripts
${apiOptionsHelp}
  -h, --help       show this help`;

interface RoutesView {
  workload: string;
  pass_rate: number;
  eval_spend_today_usd: number;
  daily_budget_usd: number;
  judges: Array<{ model: string; same_family: boolean; self_checks: number; false_losses: number }>;
  routes: Array<{
    requested_model: string;
    served_model: string;
    pinned_model: string | null;
    candidates: Array<{ model: string; state: string; evaluated: number; passed: number; errors: number; lower_bound: number; cost_per_call_usd: number; latency_ms: number | null }>;
    latency: { percentile: number; limit_ms: number | null };
    routed_calls: number;
    savings_usd: number;
    eval_spend_usd: number;
    net_savings_usd: number;
    exploration: { sample_rate: number | null; auto: boolean; exploring: string[] };
    monitoring: { unchecked_calls: number; problem: string | null };
    dropped_samples: number;
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

/**
 * One row per candidate under its route; the route's own row says what
 * serves and what it saved, cost to evaluate, and netted. Below the table, a
 * line per route on how it explores and how its serving model is watched,
 * and the judges' own measured error.
 */
export function formatRoutes(views: readonly RoutesView[]): string {
  const rows = [['WORKLOAD', 'REQUESTED', 'SERVED', 'CANDIDATE', 'STATE', 'N', 'K', 'LOWER', 'ERRORS', 'LATENCY MS', '$/CALL', 'ROUTED CALLS', 'SAVED $', 'EVAL $', 'NET $']];
  const notes: string[] = [];
  for (const view of views) {
    if (view.routes.length === 0) rows.push([view.workload, '-', '-', '(no evidence yet)', ...Array<string>(11).fill('')]);
    for (const route of view.routes) {
      const served = route.pinned_model === null ? route.served_model : `${route.served_model} (pinned)`;
      rows.push([view.workload, route.requested_model, served, ...Array<string>(8).fill(''), String(route.routed_calls), route.savings_usd.toFixed(4), route.eval_spend_usd.toFixed(4), route.net_savings_usd.toFixed(4)]);
      for (const candidate of route.candidates) {
        const latency = candidate.latency_ms === null ? '-' : String(Math.round(candidate.latency_ms));
        rows.push(['', '', '', candidate.model, candidate.state, String(candidate.evaluated), String(candidate.passed), candidate.lower_bound.toFixed(3), String(candidate.errors), latency, candidate.cost_per_call_usd.toPrecision(3), '', '', '', '']);
      }
      notes.push(routeNote(view, route));
    }
    const judges = view.judges.map((judge) => `${judge.model}${judge.same_family ? ' (same family as a candidate)' : ''}: ${judge.false_losses} of ${judge.self_checks} self-checks wrong`);
    if (judges.length > 0) notes.push(`${view.workload}: judges ${judges.join('; ')}`);
  }
  return [formatTable(rows), '', ...notes].join('\n').trimEnd();
}

function routeNote(view: RoutesView, route: RoutesView['routes'][number]): string {
  const { exploration, monitoring } = route;
  const rate = exploration.sample_rate === null ? 'not planned yet' : `${(exploration.sample_rate * 100).toPrecision(3)}% of calls${exploration.auto ? ' (auto)' : ''}`;
  const exploring = exploration.exploring.length === 0 ? 'nothing worth testing' : `testing ${exploration.exploring.join(', ')} on ${rate}`;
  const limit = route.latency.limit_ms === null ? '' : `; latency limit p${route.latency.percentile} ${Math.round(route.latency.limit_ms)} ms`;
  const watch = route.served_model === route.requested_model ? '' : `; ${monitoring.unchecked_calls} calls since the last check${monitoring.problem === null ? '' : ` (${monitoring.problem})`}`;
  const dropped = route.dropped_samples > 0 ? `; ${route.dropped_samples} samples dropped` : '';
  return `${view.workload} ${route.requested_model}: ${exploring}${limit}${watch}${dropped}; eval spend today $${view.eval_spend_today_usd.toFixed(4)} of $${view.daily_budget_usd}`;
}
