/**
 * The workload page's route section: which model serves each requested model
 * and why (the route's phase, and the share of calls each model serves),
 * from the same JSON `GET /v1/projects/{p}/workloads/{w}/routes` serves (so
 * the page and the API cannot disagree).
 */
import type { createRoutingHandlers } from '../server/routing-handlers.js';
import type { RouteCertificate } from '../store/routing-store.js';
import { renderTable } from './data-table.js';
import { formatCount, formatMs, formatRatio, formatTime, formatUsd } from './format.js';
import { html, type SafeHtml } from './html.js';

export type WorkloadRoutes = Awaited<ReturnType<ReturnType<typeof createRoutingHandlers>['getRoutes']>>;
type RouteView = WorkloadRoutes['routes'][number];
type Candidate = RouteView['candidates'][number];
type RouteChange = WorkloadRoutes['history'][number];

function certificateText(certificate: RouteCertificate | null): SafeHtml {
  if (certificate === null) return html`<span class="muted">none</span>`;
  if (certificate.qualityBar !== undefined) {
    return html`<span class="mono">${certificate.model}: ${certificate.evaluated} paired samples, ${certificate.passed} not worse; quality ≥ ${certificate.qualityBar} × the requested model's (bound ${formatBound(certificate.lower)}) at ${certificate.confidence} confidence, contract v${certificate.contractVersion}, ${formatTime(certificate.at)}</span>`;
  }
  return html`<span class="mono">n=${certificate.evaluated} k=${certificate.passed} lower=${formatRatio(certificate.lower)} ≥ ${certificate.passRate} at ${certificate.confidence} confidence, contract v${certificate.contractVersion}, ${formatTime(certificate.at)}</span>`;
}

/** "34%", "2.5%": a share of calls. */
function formatShare(share: number): string {
  return `${(share * 100).toFixed(share < 0.1 ? 1 : 0)}%`;
}

function formatBound(value: number): string {
  return value.toFixed(3);
}

const PHASES: Record<RouteView['phase'], string> = {
  requested: 'requested model',
  exploring: 'exploring',
  split: 'split',
  certified: 'certified',
  cooling_down: 'cooling down',
  unmonitored: 'unmonitored',
  pinned: 'pinned',
};

/** Who serves which share of the calls, and why the route is in its phase. */
function servesText(route: RouteView): string {
  const cooling = route.candidates.filter((candidate) => candidate.cooling_down_until !== null).map((candidate) => candidate.model);
  switch (route.phase) {
    case 'split': {
      const shares = (route.split?.shares ?? []).map((entry) => {
        const share =
          entry.policy === null
            ? formatShare(entry.share)
            : `${formatShare(entry.share)} of the calls per-call policy #${entry.policy.epoch} picks (it picks ${formatShare(entry.policy.routed_share)} of the calls)`;
        return entry.pooled === null
          ? `${share} → ${entry.model} (E[c − r] ≥ ${formatBound(entry.lower_bound_diff)} on ${formatCount(entry.samples)} paired samples)`
          : `${share} → ${entry.model} (on the prior of ${formatCount(entry.pooled.workloads)} workloads of the project, ${formatCount(entry.pooled.samples)} paired samples; ${formatCount(entry.samples)} of its own)`;
      });
      return [...shares, `${formatShare(route.served_share)} → ${route.router_choice}`].join('; ');
    }
    case 'pinned':
      return `every call → ${route.served_model}, pinned by a person (the router's choice: ${route.router_choice})`;
    case 'cooling_down':
      return `every call → ${route.router_choice}; ${cooling.join(', ')} demoted, cooling down`;
    case 'unmonitored':
      return `every call → ${route.router_choice}; ${cooling.join(', ')} could not be checked and sits out until monitoring can resume`;
    case 'exploring':
      return `every call → ${route.router_choice}, while cheaper models are tested`;
    case 'certified':
      return `every call → ${route.router_choice}, certified`;
    case 'requested':
      return `every call → ${route.router_choice}, nothing under test`;
  }
}

function renderRoute(route: RouteView): SafeHtml {
  const candidates =
    route.candidates.length === 0
      ? html`<p class="empty">No candidate evaluated yet: the router replays a sample of this workload's calls on cheaper models and lists them here.</p>`
      : renderTable<Candidate>({
          rows: route.candidates,
          breadth: 'medium',
          columns: [
            { label: 'Candidate', kind: 'long', cell: (candidate) => candidate.model },
            {
              label: 'State',
              kind: 'fixed',
              cell: (candidate) => html`<span class="${`badge ${candidate.state}`}">${candidate.state.replace('_', ' ')}</span>`,
            },
            {
              label: 'Share',
              kind: 'number',
              cell: (candidate) => (candidate.share === null || candidate.share === 0 ? '' : formatShare(candidate.share)),
            },
            { label: 'n', kind: 'number', cell: (candidate) => formatCount(candidate.evaluated) },
            { label: 'k', kind: 'number', cell: (candidate) => formatCount(candidate.passed) },
            { label: 'Errors', kind: 'number', cell: (candidate) => formatCount(candidate.errors) },
            { label: 'Pass rate', kind: 'number', cell: (candidate) => formatRatio(candidate.pass_rate) },
            { label: 'Lower bound', kind: 'number', cell: (candidate) => formatRatio(candidate.lower_bound) },
            { label: 'Upper bound', kind: 'number', cell: (candidate) => formatRatio(candidate.upper_bound) },
            { label: 'Cost per call', kind: 'number', cell: (candidate) => formatUsd(candidate.cost_per_call_usd) },
            { label: `Latency p${route.latency.percentile}`, kind: 'number', cell: (candidate) => formatMs(candidate.latency_ms) },
            { label: 'Why', kind: 'long', cell: (candidate) => candidate.reason ?? '' },
          ],
        });
  const { exploration, monitoring } = route;
  const rate =
    exploration.sample_rate === null
      ? 'no plan yet'
      : `${formatRatio(exploration.sample_rate)} of calls${exploration.auto ? ' (auto)' : ''}`;
  const watched =
    route.router_choice === route.requested_model
      ? 'the requested model serves itself'
      : `${formatCount(monitoring.unchecked_calls)} calls since its last check${monitoring.problem === null ? '' : ` (${monitoring.problem})`}`;
  return html`<div class="route panel" data-requested="${route.requested_model}">
<div class="route-head">
  <span class="arrow"><strong>${route.requested_model}</strong> → <strong data-field="served-model">${route.served_model}</strong></span>
  <span class="${`badge ${route.phase}`}" data-field="phase">${route.phase === 'pinned' ? `pinned (router's choice: ${route.router_choice})` : PHASES[route.phase]}</span>
  <span class="muted">${formatCount(route.calls)} calls, ${formatCount(route.routed_calls)} routed to a cheaper model, savings ${formatUsd(route.savings_usd)} − eval spend ${formatUsd(route.eval_spend_usd)} = <strong data-field="net-savings">${formatUsd(route.net_savings_usd)}</strong> net</span>
</div>
<dl class="facts">
<dt>Serves</dt><dd data-field="shares">${servesText(route)}</dd>
<dt>Certificate</dt><dd>${certificateText(route.certificate)}</dd>
<dt>Exploring</dt><dd data-field="exploration">${exploration.exploring.length === 0 ? 'nothing worth testing now' : `${exploration.exploring.join(', ')} on ${rate}`}</dd>
<dt>Monitoring</dt><dd data-field="monitoring">${watched}</dd>
<dt>Latency limit</dt><dd>${route.latency.limit_ms === null ? 'none' : `p${route.latency.percentile} ≤ ${formatMs(route.latency.limit_ms)} (the requested model: ${formatMs(route.latency.requested_model_ms)})`}</dd>
${route.dropped_samples > 0 ? html`<dt>Dropped samples</dt><dd>${formatCount(route.dropped_samples)} (the router could not keep up)</dd>` : null}
</dl>
<h3>Candidates <span class="muted">${route.verdicts_from === 'router' ? '· as the router judged them, cheapest first' : route.candidates.length === 0 ? '' : '· judged from the evidence: the router has not decided on this route yet'}</span></h3>
${candidates}
</div>`;
}

export function renderRoutePanel(routes: WorkloadRoutes): SafeHtml {
  const history =
    routes.history.length === 0
      ? html`<p class="empty">No route change yet.</p>`
      : renderTable<RouteChange>({
          rows: routes.history,
          columns: [
            { label: 'When', kind: 'fixed', cell: (change) => formatTime(change.at * 1000) },
            { label: 'Requested', cell: (change) => change.requested_model },
            { label: 'From', cell: (change) => change.from_model },
            { label: 'To', cell: (change) => change.to_model },
            { label: 'Reason', cell: (change) => change.reason.replace('_', ' ') },
            { label: 'Detail', kind: 'long', cell: (change) => change.detail ?? '' },
          ],
        });
  return html`<section id="route">
<h2>Route <span class="muted">· contract v${routes.contract_version}, pass rate ${routes.pass_rate} at ${routes.confidence} confidence, eval spend today ${formatUsd(routes.eval_spend_today_usd)} of ${formatUsd(routes.daily_budget_usd)}, net saving <span data-field="workload-net-savings">${formatUsd(routes.net_savings_usd)}</span></span></h2>
${routes.routes.length === 0 ? html`<p class="empty">No route yet: every call is served by the model it asks for.</p>` : routes.routes.map(renderRoute)}
${
  routes.judges.length === 0
    ? null
    : html`<h3>Judges</h3>${renderTable({
        rows: routes.judges,
        columns: [
          {
            label: 'Judge',
            kind: 'long',
            cell: (judge) => html`${judge.model}${judge.same_family ? html` <span class="badge">same family as a candidate</span>` : null}`,
          },
          { label: 'Self-checks', kind: 'number', cell: (judge) => formatCount(judge.self_checks) },
          { label: 'Wrong', kind: 'number', cell: (judge) => formatCount(judge.false_losses) },
          { label: 'Error rate', kind: 'number', cell: (judge) => formatRatio(judge.error_rate) },
        ],
      })}`
}
<h3>Route history</h3>
${history}
</section>`;
}
