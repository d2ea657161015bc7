/**
 * `GET /dashboard/projects/{p}/workloads/{w}`: a workload's numbers over the
 * window (from the StatsService, as the API reads them), its charts, the
 * per-model breakdown, its route and evidence, failures and recent calls.
 */
import type { Trace } from '../store/store.js';
import type { MeasuredCost, ModelStats, TimeBucket, WorkloadStats } from '../tracking/stats-service.js';
import { renderFailures, renderRecentTraces } from './activity-panel.js';
import { renderTable } from './data-table.js';
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
  return renderTable<ModelStats>({
    id: 'models',
    // Ten columns with the measured cost: stacked below 1000 px.
    breadth: 'wide',
    rows: stats.models,
    rowAttributes: (model) => html` data-model="${model.model}"`,
    columns: [
      {
        label: 'Served model',
        kind: 'long',
        cell: (model) => (model.model === '' ? html`<span class="muted">(none chosen)</span>` : model.model),
      },
      { label: 'Calls', kind: 'number', field: 'calls', cell: (model) => formatCount(model.calls) },
      {
        label: 'Errors',
        kind: 'number',
        field: 'errors',
        tone: (model) => (model.errors > 0 ? 'bad' : undefined),
        cell: (model) => formatCount(model.errors),
      },
      { label: 'Tokens in', kind: 'number', cell: (model) => formatCount(model.promptTokens) },
      { label: 'Tokens out', kind: 'number', cell: (model) => formatCount(model.completionTokens) },
      { label: 'Cost', kind: 'number', field: 'cost', cell: (model) => formatUsd(model.costUsd) },
      {
        label: 'Measured',
        kind: 'number',
        field: 'measured-cost',
        cell: (model) => (model.measured === null ? html`<span class="muted">—</span>` : formatUsd(model.measured.costUsd)),
      },
      { label: 'Latency p50', kind: 'number', cell: (model) => formatMs(model.latencyMs.p50) },
      { label: 'Latency p95', kind: 'number', cell: (model) => formatMs(model.latencyMs.p95) },
      { label: 'TTFT p50', kind: 'number', cell: (model) => formatMs(model.ttftMs.p50) },
    ],
  });
}

/** The measured cost beside the catalog's: what the calls on engines with a `cost_per_hour` cost by their engine time. */
function measuredCard(measured: MeasuredCost | null): SafeHtml {
  if (measured === null) return card('Measured cost', '—', 'measured-cost', 'no engine with a cost_per_hour');
  const perMillion = measured.costPerMillionTokensUsd === null ? '' : ` · ${formatUsd(measured.costPerMillionTokensUsd)} per 1M tokens`;
  return card('Measured cost', formatUsd(measured.costUsd), 'measured-cost', `${formatUsd(measured.costPerCallUsd)} per call${perMillion}`);
}

export function renderWorkloadPage(data: WorkloadPageData): SafeHtml {
  const { stats } = data;
  const path = dashboardPath('projects', data.project, 'workloads', data.workload);
  return layout(
    {
      title: `${data.project} / ${data.workload}`,
      account: data.account,
      charts: true,
      crumbs: [{ label: data.project }, { label: data.workload }],
    },
    html`<div class="heading"><h1>${data.project} / ${data.workload} <span class="muted">· last ${WINDOWS[data.window].label}, production</span></h1>${windowPicker(data.window, path)}</div>
<section class="cards" id="summary">
  ${card('Calls', formatCount(stats.calls), 'calls')}
  ${card('Errors', formatCount(stats.errors), 'errors', html`<span data-field="error-rate">${formatRate(stats.errorRate)}</span> of calls`)}
  ${card('Catalog cost', formatUsd(stats.costUsd), 'cost', stats.calls === 0 ? undefined : `${formatUsd(stats.costUsd / stats.calls)} per call`)}
  ${measuredCard(stats.measured)}
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
