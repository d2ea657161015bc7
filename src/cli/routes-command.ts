import { apiOptions, apiOptionsHelp, createApiClient, type ApiClient, projectOf } from './api-client.js';
import { parseCommand } from './parse-command.js';
import { formatTable } from './format-table.js';

export const routesUsage = `Usage: taskgate routes [--project P] [--workload W] [--json] [options]

Which model serves each workload's requested models, the candidates as the
router judged them, in its order (n evaluated, k passed, the lower confidence
bound, engine errors, latency at the contract's percentile, cost per call,
certified share of the calls), the savings so far, what evaluating cost and
the net; then per route its phase (requested, exploring, split, certified,
cooling down, unmonitored, pinned) with its shares and savings, and how it
explores and how its serving model is watched. Without --workload, every
workload of the project.

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
    phase: string;
    served_model: string;
    router_choice: string;
    pinned_model: string | null;
    split: {
      shares: Array<{
        model: string;
        share: number;
        lower_bound_diff: number;
        samples: number;
        pooled?: { workloads: number; samples: number } | null;
        policy?: { epoch: number; routed_share: number } | null;
      }>;
    } | null;
    served_share: number;
    verdicts_from: 'router' | 'evidence';
    candidates: Array<{
      model: string;
      state: string;
      share: number | null;
      evaluated: number;
      passed: number;
      errors: number;
      lower_bound: number | null;
      cost_per_call_usd: number;
      latency_ms: number | null;
      cooling_down_until: number | null;
    }>;
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
  const { values, help } = parseCommand(
    argv,
    { ...apiOptions, project: { type: 'string' }, workload: { type: 'string' }, json: { type: 'boolean' } },
    routesUsage,
  );
  if (help) return void process.stdout.write(`${routesUsage}\n`);
  const project = projectOf(values);
  const client = createApiClient(values, environment);
  const workloads = values.workload === undefined ? await workloadsOf(client, project) : [values.workload];
  const views: RoutesView[] = [];
  for (const workload of workloads) {
    views.push(
      (await client.request(
        'GET',
        `/projects/${encodeURIComponent(project)}/workloads/${encodeURIComponent(workload)}/routes`,
      )) as unknown as RoutesView,
    );
  }
  if (values.json === true) return void process.stdout.write(`${JSON.stringify(views, null, 2)}\n`);
  process.stdout.write(`${formatRoutes(views)}\n`);
}

async function workloadsOf(client: ApiClient, project: string): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor === null ? '?limit=100' : `?limit=100&cursor=${encodeURIComponent(cursor)}`;
    const page = (await client.request('GET', `/projects/${encodeURIComponent(project)}/workloads${query}`)) as {
      data: Array<{ name: string }>;
      next_cursor: string | null;
    };
    names.push(...page.data.map((workload) => workload.name));
    cursor = page.next_cursor;
  } while (cursor !== null);
  return names;
}

/**
 * One row per candidate under its route, in the router's order; the route's
 * own row says what serves and what it saved, cost to evaluate, and netted.
 * Below the table, per route a line with its phase, shares and savings and a
 * line on how it explores and how its serving model is watched; then the
 * judges' own measured error.
 */
export function formatRoutes(views: readonly RoutesView[]): string {
  const rows = [
    [
      'WORKLOAD',
      'REQUESTED',
      'SERVED',
      'CANDIDATE',
      'STATE',
      'N',
      'K',
      'LOWER',
      'ERRORS',
      'LATENCY MS',
      '$/CALL',
      'SHARE',
      'ROUTED CALLS',
      'SAVED $',
      'EVAL $',
      'NET $',
    ],
  ];
  const notes: string[] = [];
  for (const view of views) {
    if (view.routes.length === 0) rows.push([view.workload, '-', '-', '(no evidence yet)', ...Array<string>(12).fill('')]);
    for (const route of view.routes) {
      const served = route.pinned_model === null ? route.served_model : `${route.served_model} (pinned)`;
      rows.push([
        view.workload,
        route.requested_model,
        served,
        ...Array<string>(9).fill(''),
        String(route.routed_calls),
        route.savings_usd.toFixed(4),
        route.eval_spend_usd.toFixed(4),
        route.net_savings_usd.toFixed(4),
      ]);
      for (const candidate of route.candidates) {
        const latency = candidate.latency_ms === null ? '-' : String(Math.round(candidate.latency_ms));
        const lower = candidate.lower_bound === null ? '-' : candidate.lower_bound.toFixed(3);
        const share = candidate.share === null || candidate.share === 0 ? '' : percent(candidate.share);
        rows.push([
          '',
          '',
          '',
          candidate.model,
          candidate.state,
          String(candidate.evaluated),
          String(candidate.passed),
          lower,
          String(candidate.errors),
          latency,
          candidate.cost_per_call_usd.toPrecision(3),
          share,
          '',
          '',
          '',
          '',
        ]);
      }
      notes.push(phaseNote(view, route), routeNote(view, route));
    }
    const judges = view.judges.map(
      (judge) =>
        `${judge.model}${judge.same_family ? ' (same family as a candidate)' : ''}: ${judge.false_losses} of ${judge.self_checks} self-checks wrong`,
    );
    if (judges.length > 0) notes.push(`${view.workload}: judges ${judges.join('; ')}`);
  }
  return [formatTable(rows), '', ...notes].join('\n').trimEnd();
}

type RouteView = RoutesView['routes'][number];

/** "34%", "2.5%": shares of calls. */
function percent(share: number): string {
  return `${(share * 100).toFixed(share < 0.1 ? 1 : 0)}%`;
}

/** "34%" of all calls, or "62% of the calls policy #2 picks (it picks 40% of calls)" for a share of a per-call policy's picks. */
function shareOf(entry: NonNullable<RouteView['split']>['shares'][number]): string {
  return entry.policy == null
    ? percent(entry.share)
    : `${percent(entry.share)} of the calls policy #${entry.policy.epoch} picks (it picks ${percent(entry.policy.routed_share)} of calls)`;
}

/**
 * The route's phase, what serves which share of the calls, and what it saved
 * net of evaluating: "w big: split: 34% → mixtral (E[c−r] ≥ -0.021, 412
 * samples); 66% → gpt-4; saved $1.2000 − eval spend $0.3000 = net $0.9000".
 */
export function phaseNote(view: Pick<RoutesView, 'workload'>, route: RouteView): string {
  const cooling = route.candidates
    .filter((candidate) => candidate.cooling_down_until !== null)
    .map(
      (candidate) =>
        `${candidate.model} until ${new Date(candidate.cooling_down_until! * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    );
  const whole = (model: string) => `${model} serves every call`;
  const phases: Record<string, string> = {
    requested: `requested: ${whole(route.router_choice)}, nothing under test`,
    exploring: `exploring: ${whole(route.router_choice)} while candidates are tested`,
    split: `split: ${[...(route.split?.shares ?? []).map((entry) => `${shareOf(entry)} → ${entry.model} (${entry.pooled == null ? `E[c−r] ≥ ${entry.lower_bound_diff.toFixed(3)}, ${entry.samples} samples` : `prior of ${entry.pooled.workloads} workloads, ${entry.pooled.samples} samples; ${entry.samples} of its own`})`), `${percent(route.served_share)} → ${route.router_choice}`].join('; ')}`,
    certified: `certified: ${whole(route.router_choice)}`,
    cooling_down: `cooling down: ${whole(route.router_choice)}; demoted ${cooling.join(', ')}`,
    unmonitored: `unmonitored: ${whole(route.router_choice)}; waiting to check ${cooling.join(', ')}`,
    pinned: `pinned: ${whole(route.served_model)} (the router's choice: ${route.router_choice}${route.split === null ? '' : ` with shares to ${route.split.shares.map((entry) => entry.model).join(', ')}`})`,
  };
  const phase = phases[route.phase] ?? route.phase;
  const judged =
    route.verdicts_from === 'evidence' && route.candidates.length > 0
      ? ' (candidates judged from the evidence: the router has not decided on it yet)'
      : '';
  const savings = `saved $${route.savings_usd.toFixed(4)} − eval spend $${route.eval_spend_usd.toFixed(4)} = net $${route.net_savings_usd.toFixed(4)}`;
  return `${view.workload} ${route.requested_model}: ${phase}; ${savings}${judged}`;
}

function routeNote(view: RoutesView, route: RouteView): string {
  const { exploration, monitoring } = route;
  const rate =
    exploration.sample_rate === null
      ? 'not planned yet'
      : `${(exploration.sample_rate * 100).toPrecision(3)}% of calls${exploration.auto ? ' (auto)' : ''}`;
  const exploring = exploration.exploring.length === 0 ? 'nothing worth testing' : `testing ${exploration.exploring.join(', ')} on ${rate}`;
  const limit =
    route.latency.limit_ms === null ? '' : `; latency limit p${route.latency.percentile} ${Math.round(route.latency.limit_ms)} ms`;
  const watch =
    route.served_model === route.requested_model
      ? ''
      : `; ${monitoring.unchecked_calls} calls since the last check${monitoring.problem === null ? '' : ` (${monitoring.problem})`}`;
  const dropped = route.dropped_samples > 0 ? `; ${route.dropped_samples} samples dropped` : '';
  return `${view.workload} ${route.requested_model}: ${exploring}${limit}${watch}${dropped}; eval spend today $${view.eval_spend_today_usd.toFixed(4)} of $${view.daily_budget_usd}`;
}
