/**
 * The workload page's route section: which model serves each requested model
 * and why, from the same JSON `GET /v1/projects/{p}/workloads/{w}/routes`
 * serves (so the page and the API cannot disagree).
 */
import type { createRoutingHandlers } from '../server/routing-handlers.js';
import type { RouteCertificate } from '../store/routing-store.js';
import { formatCount, formatMs, formatRatio, formatTime, formatUsd } from './format.js';
import { html, type SafeHtml } from './html.js';

export type WorkloadRoutes = Awaited<ReturnType<ReturnType<typeof createRoutingHandlers>['getRoutes']>>;
type RouteView = WorkloadRoutes['routes'][number];

function certificateText(certificate: RouteCertificate | null): SafeHtml {
  if (certificate === null) return html`<span class="muted">none</span>`;
  return html`<span class="mono">n=${certificate.evaluated} k=${certificate.passed} lower=${formatRatio(certificate.lower)} ≥ ${certificate.passRate} at ${certificate.confidence} confidence, contract v${certificate.contractVersion}, ${formatTime(certificate.at)}</span>`;
}

function renderRoute(route: RouteView): SafeHtml {
  const candidates =
    route.candidates.length === 0
      ? html`<p class="empty">No candidate evaluated yet: the router replays a sample of this workload's calls on cheaper models and lists them here.</p>`
      : html`<div class="table"><table>
<thead><tr><th>Candidate</th><th>State</th><th class="num">n</th><th class="num">k</th><th class="num">Errors</th><th class="num">Pass rate</th><th class="num">Lower bound</th><th class="num">Upper bound</th><th class="num">Cost per call</th><th class="num">Mean latency</th></tr></thead>
<tbody>${route.candidates.map(
          (candidate) => html`<tr>
<td>${candidate.model}</td>
<td><span class="${`badge ${candidate.state}`}">${candidate.state.replace('_', ' ')}</span></td>
<td class="num">${formatCount(candidate.evaluated)}</td>
<td class="num">${formatCount(candidate.passed)}</td>
<td class="num">${formatCount(candidate.errors)}</td>
<td class="num">${formatRatio(candidate.pass_rate)}</td>
<td class="num">${formatRatio(candidate.lower_bound)}</td>
<td class="num">${formatRatio(candidate.upper_bound)}</td>
<td class="num">${formatUsd(candidate.cost_per_call_usd)}</td>
<td class="num">${formatMs(candidate.mean_latency_ms)}</td>
</tr>`,
        )}</tbody></table></div>`;
  return html`<div class="route panel" data-requested="${route.requested_model}">
<div class="route-head">
  <span class="arrow"><strong>${route.requested_model}</strong> → <strong data-field="served-model">${route.served_model}</strong></span>
  ${route.pinned_model === null ? null : html`<span class="badge pinned">pinned (router's choice: ${route.router_choice})</span>`}
  <span class="muted">${formatCount(route.calls)} calls, ${formatCount(route.routed_calls)} routed to a cheaper model, savings <strong>${formatUsd(route.savings_usd)}</strong></span>
</div>
<dl class="facts"><dt>Certificate</dt><dd>${certificateText(route.certificate)}</dd></dl>
<h3>Candidates</h3>
${candidates}
</div>`;
}

export function renderRoutePanel(routes: WorkloadRoutes): SafeHtml {
  const history =
    routes.history.length === 0
      ? html`<p class="empty">No route change yet.</p>`
      : html`<div class="table"><table>
<thead><tr><th>When</th><th>Requested</th><th>From</th><th>To</th><th>Reason</th><th>Detail</th></tr></thead>
<tbody>${routes.history.map(
          (change) => html`<tr><td>${formatTime(change.at * 1000)}</td><td>${change.requested_model}</td><td>${change.from_model}</td><td>${change.to_model}</td><td>${change.reason.replace('_', ' ')}</td><td class="wrap">${change.detail ?? ''}</td></tr>`,
        )}</tbody></table></div>`;
  return html`<section id="route">
<h2>Route <span class="muted">· contract v${routes.contract_version}, pass rate ${routes.pass_rate} at ${routes.confidence} confidence, eval spend today ${formatUsd(routes.eval_spend_today_usd)} of ${formatUsd(routes.daily_budget_usd)}</span></h2>
${routes.routes.length === 0 ? html`<p class="empty">No route yet: every call is served by the model it asks for.</p>` : routes.routes.map(renderRoute)}
<h3>Route history</h3>
${history}
</section>`;
}
