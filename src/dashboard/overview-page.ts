/** `GET /dashboard`: every workload of the account with its calls, errors and cost in the window, most expensive first. */
import type { WorkloadSummary } from '../tracking/stats-service.js';
import { formatCount, formatRate, formatUsd } from './format.js';
import { dashboardPath, html, layout, type SafeHtml } from './html.js';
import { WINDOWS, windowPicker, type WindowName } from './time-window.js';

export interface OverviewData {
  account: { name: string; keyPrefix: string };
  window: WindowName;
  /** Workloads with calls in the window, most expensive first (as the StatsService orders them). */
  summaries: WorkloadSummary[];
  /** Every known workload, so those without calls in the window are listed too. */
  workloads: Array<{ project: string; workload: string }>;
}

export function renderOverviewPage(data: OverviewData): SafeHtml {
  const seen = new Set(data.summaries.map((row) => `${row.project}/${row.workload}`));
  const idle = data.workloads.filter((row) => !seen.has(`${row.project}/${row.workload}`));
  const rows: WorkloadSummary[] = [...data.summaries, ...idle.map((row) => ({ ...row, calls: 0, errors: 0, errorRate: 0, costUsd: 0 }))];
  const calls = data.summaries.reduce((sum, row) => sum + row.calls, 0);
  const errors = data.summaries.reduce((sum, row) => sum + row.errors, 0);
  const cost = data.summaries.reduce((sum, row) => sum + row.costUsd, 0);
  const since = `?since=${data.window}`;

  const table =
    rows.length === 0
      ? html`<p class="empty">No workloads yet. A workload appears with its first call to <code>POST /v1/chat/completions</code>.</p>`
      : html`<div class="table"><table id="workloads">
<thead><tr><th>Project</th><th>Workload</th><th class="num">Calls</th><th class="num">Errors</th><th class="num">Error rate</th><th class="num">Cost</th></tr></thead>
<tbody>${rows.map(
          (row) => html`<tr data-project="${row.project}" data-workload="${row.workload}">
<td>${row.project}</td>
<td><a href="${dashboardPath('projects', row.project, 'workloads', row.workload) + since}">${row.workload}</a></td>
<td class="num" data-field="calls">${formatCount(row.calls)}</td>
<td class="num${row.errors > 0 ? ' bad' : ''}" data-field="errors">${formatCount(row.errors)}</td>
<td class="num" data-field="error-rate">${formatRate(row.errorRate)}</td>
<td class="num" data-field="cost">${formatUsd(row.costUsd)}</td>
</tr>`,
        )}</tbody></table></div>`;

  return layout(
    { title: 'Overview', account: data.account },
    html`<div class="heading"><h1>Workloads <span class="muted">· last ${WINDOWS[data.window].label}, production</span></h1>${windowPicker(data.window, '/dashboard')}</div>
<section class="cards">
  <div class="card"><div class="label">Calls</div><div class="value" id="total-calls">${formatCount(calls)}</div></div>
  <div class="card"><div class="label">Errors</div><div class="value">${formatCount(errors)}</div><div class="sub">${formatRate(calls === 0 ? 0 : errors / calls)} of calls</div></div>
  <div class="card"><div class="label">Cost</div><div class="value" id="total-cost">${formatUsd(cost)}</div></div>
  <div class="card"><div class="label">Workloads</div><div class="value">${formatCount(rows.length)}</div><div class="sub">${formatCount(data.summaries.length)} with calls</div></div>
</section>
<h2>By workload</h2>
${table}`,
  );
}
