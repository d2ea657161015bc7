/**
 * `GET /dashboard/projects/{p}/workloads/{w}`: a workload's numbers over the
 * window (from the StatsService, as the API reads them), its charts, the
 * per-model breakdown, its route and evidence, failures and recent calls.
 */
import type { Trace } from '../store/store.js';
import type { TimeBucket, WorkloadStats } from '../tracking/stats-service.js';
import { renderFailures, renderRecentTraces } from './activity-panel.js';
import { formatCount, formatMs, formatRate, formatUsd } from './format.js';
import { dashboardPath, html, layout, type SafeHtml } from './html.js';
import { renderRoutePanel, type WorkloadRoutes } from './route-panel.js';
import { WINDOWS, windowPicker, type WindowName } from './time-window.js';
import { chartData, renderCharts } from './workload-charts.js';

export interface WorkloadPageData {
  account: { name: string; keyPrefix: string };
  project: string;
  workload: string;
  window: WindowName;
  stats: WorkloadStats;
  series: TimeBucket[];
  routes: WorkloadRoutes;
  /** Newest first, in the window. */
  recent: Trace[];
  /** Newest failed calls in the window, newest first. */
  failed: Trace[];
}

function card(label: string, value: string, field: string, sub?: SafeHtml | string): SafeHtml {
  return html`<div class="card"><div class="label">${label}</div><div class="value" data-field="${field}">${value}</div>${sub === undefined ? null : html`<div class="sub">${sub}</div>`}</div>`;
}

function renderModels(stats: WorkloadStats): SafeHtml {
  if (stats.models.length === 0) return html`<p class="empty">No call in this window.</p>`;
  return html`<div class="table"><table id="models">
<thead><tr><th>Served model</th><th class="num">Calls</th><th class="num">Errors</th><th class="num">Tokens in</th><th class="num">Tokens out</th><th class="num">Cost</th><th class="num">Latency p50</th><th class="num">Latency p95</th><th class="num">TTFT p50</th></tr></thead>
<tbody>${stats.models.map(
    (model) => html`<tr data-model="${model.model}">
<td>${model.model === '' ? html`<span class="muted">(none chosen)</span>` : model.model}</td>
<td class="num" data-field="calls">${formatCount(model.calls)}</td>
<td class="num${model.errors > 0 ? ' bad' : ''}" data-field="errors">${formatCount(model.errors)}</td>
<td class="num">${formatCount(model.promptTokens)}</td>
<td class="num">${formatCount(model.completionTokens)}</td>
<td class="num" data-field="cost">${formatUsd(model.costUsd)}</td>
<td class="num">${formatMs(model.latencyMs.p50)}</td>
<td class="num">${formatMs(model.latencyMs.p95)}</td>
<td class="num">${formatMs(model.ttftMs.p50)}</td>
</tr>`,
  )}</tbody></table></div>`;
}

export function renderWorkloadPage(data: WorkloadPageData): SafeHtml {
  const { stats } = data;
  const path = dashboardPath('projects', data.project, 'workloads', data.workload);
  return layout(
    { title: `${data.project} / ${data.workload}`, account: data.account, charts: true, crumbs: [{ label: data.project }, { label: data.workload }] },
    html`<div class="heading"><h1>${data.project} / ${data.workload} <span class="muted">· last ${WINDOWS[data.window].label}, production</span></h1>${windowPicker(data.window, path)}</div>
<section class="cards" id="summary">
  ${card('Calls', formatCount(stats.calls), 'calls')}
  ${card('Errors', formatCount(stats.errors), 'errors', html`<span data-field="error-rate">${formatRate(stats.errorRate)}</span> of calls`)}
  ${card('Cost', formatUsd(stats.costUsd), 'cost', stats.calls === 0 ? undefined : `${formatUsd(stats.costUsd / stats.calls)} per call`)}
  ${card('Latency p50', formatMs(stats.latencyMs.p50), 'latency-p50', `p95 ${formatMs(stats.latencyMs.p95)} · p99 ${formatMs(stats.latencyMs.p99)}`)}
  ${card('TTFT p50', formatMs(stats.ttftMs.p50), 'ttft-p50', `p95 ${formatMs(stats.ttftMs.p95)} · streams`)}
  ${card('Tokens in', formatCount(stats.promptTokens), 'prompt-tokens', `${formatCount(stats.completionTokens)} out`)}
</section>
<h2>Over time</h2>
${renderCharts(chartData(data.series))}
<h2>By served model</h2>
${renderModels(stats)}
${renderRoutePanel(data.routes)}
${renderFailures(stats, data.failed)}
${renderRecentTraces(data.recent)}`,
  );
}
