/**
 * `GET /dashboard`: every workload of the account with its calls, errors and
 * cost in the window, most expensive first; then the engines, with how busy
 * each has been over the last minutes (as this process sees them).
 */
import type { EngineLoad } from '../engines/engine-meter.js';
import type { WorkloadSummary } from '../tracking/stats-service.js';
import { renderTable } from './data-table.js';
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
  /** The configured engines' load in this process. */
  engines: EngineLoad[];
}

/** A busy fraction: light loads keep a second decimal, so an engine in use never reads 0%. */
function formatUtilisation(value: number): string {
  return value === 0 ? '0%' : `${(value * 100).toFixed(value < 0.1 ? 2 : 1)}%`;
}

function renderEngines(engines: EngineLoad[]): SafeHtml | null {
  if (engines.length === 0) return null;
  return html`<h2>Engines <span class="muted">· this process, last 5 minutes</span></h2>
${renderTable<EngineLoad>({
  id: 'engines',
  rows: engines,
  rowAttributes: (engine) => html` data-engine="${engine.engineId}"`,
  columns: [
    { label: 'Engine', cell: (engine) => engine.engineId },
    { label: 'Utilisation', kind: 'number', field: 'utilisation', cell: (engine) => formatUtilisation(engine.utilisation) },
    { label: 'In flight', kind: 'number', field: 'in-flight', cell: (engine) => formatCount(engine.inFlight) },
    {
      label: 'Cost per hour',
      kind: 'number',
      field: 'cost-per-hour',
      cell: (engine) => (engine.costPerHour === null ? html`<span class="muted">—</span>` : formatUsd(engine.costPerHour)),
    },
  ],
})}`;
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
      : renderTable<WorkloadSummary>({
          id: 'workloads',
          rows,
          rowAttributes: (row) => html` data-project="${row.project}" data-workload="${row.workload}"`,
          columns: [
            { label: 'Project', cell: (row) => row.project },
            {
              label: 'Workload',
              cell: (row) =>
                html`<a href="${dashboardPath('projects', row.project, 'workloads', row.workload) + since}">${row.workload}</a>`,
            },
            { label: 'Calls', kind: 'number', field: 'calls', cell: (row) => formatCount(row.calls) },
            {
              label: 'Errors',
              kind: 'number',
              field: 'errors',
              tone: (row) => (row.errors > 0 ? 'bad' : undefined),
              cell: (row) => formatCount(row.errors),
            },
            { label: 'Error rate', kind: 'number', field: 'error-rate', cell: (row) => formatRate(row.errorRate) },
            { label: 'Cost', kind: 'number', field: 'cost', cell: (row) => formatUsd(row.costUsd) },
          ],
        });

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
${table}
${renderEngines(data.engines)}`,
  );
}
