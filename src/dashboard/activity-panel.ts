/** The workload page's failures (grouped by class, with the latest examples) and recent calls, each linking to its trace. */
import type { Trace } from '../store/store.js';
import type { WorkloadStats } from '../tracking/stats-service.js';
import { renderTable, type Column } from './data-table.js';
import { formatCount, formatMs, formatTime, formatUsd } from './format.js';
import { dashboardPath, html, type SafeHtml } from './html.js';

const EXAMPLES_PER_CLASS = 3;

function traceLink(trace: Trace, label: string = trace.requestId): SafeHtml {
  return html`<a class="mono" href="${dashboardPath('traces', trace.requestId)}">${label}</a>`;
}

function modelText(trace: Trace): string {
  if (trace.servedModel === null) return trace.requestedModel ?? '—';
  if (trace.requestedModel === null || trace.requestedModel === trace.servedModel) return trace.servedModel;
  return `${trace.requestedModel} → ${trace.servedModel}`;
}

const when: Column<Trace> = { label: 'When', kind: 'fixed', cell: (trace) => formatTime(trace.startedAt) };
const request: Column<Trace> = { label: 'Request', kind: 'id', cell: (trace) => traceLink(trace) };
const model: Column<Trace> = { label: 'Model', kind: 'long', cell: modelText };

/** `failed`: the newest failed calls of the window (the examples); the counts come from the stats. */
export function renderFailures(stats: WorkloadStats, failed: readonly Trace[]): SafeHtml {
  if (stats.failures.length === 0)
    return html`<section id="failures"><h2>Failures</h2><p class="empty">No failed call in this window.</p></section>`;
  return html`<section id="failures"><h2>Failures</h2>${stats.failures.map((failure) => {
    const examples = failed.filter((trace) => trace.errorClass === failure.errorClass).slice(0, EXAMPLES_PER_CLASS);
    return html`<div class="failure" data-error-class="${failure.errorClass}">
<h3><span class="badge error">${failure.errorClass}</span> <span data-field="count">${formatCount(failure.count)}</span> <span class="muted">${failure.count === 1 ? 'call' : 'calls'}</span></h3>
${
  examples.length === 0
    ? html`<p class="muted">No recent example kept.</p>`
    : renderTable<Trace>({
        breadth: 'wide',
        rows: examples,
        // When and HTTP first: short, they share a line when rows are stacked.
        columns: [
          when,
          { label: 'HTTP', kind: 'number', cell: (trace) => trace.httpStatus },
          request,
          model,
          { label: 'Message', kind: 'long', cell: (trace) => (trace.errorMessage ?? '').slice(0, 300) },
        ],
      })
}
</div>`;
  })}</section>`;
}

export function renderRecentTraces(traces: readonly Trace[]): SafeHtml {
  if (traces.length === 0) return html`<section id="traces"><h2>Recent calls</h2><p class="empty">No call in this window.</p></section>`;
  return html`<section id="traces"><h2>Recent calls</h2>${renderTable<Trace>({
    breadth: 'wide',
    rows: traces,
    rowAttributes: (trace) => html` data-request-id="${trace.requestId}"`,
    // When and Status first: short, they share a line when rows are stacked.
    columns: [
      when,
      {
        label: 'Status',
        kind: 'fixed',
        cell: (trace) =>
          html`<span class="${`badge ${trace.status}`}">${trace.status === 'ok' ? 'ok' : `${trace.status} ${trace.httpStatus}`}</span>${trace.stream ? html` <span class="muted">stream</span>` : null}`,
      },
      request,
      model,
      {
        label: 'Tokens in / out',
        kind: 'number',
        cell: (trace) => `${formatCount(trace.promptTokens)} / ${formatCount(trace.completionTokens)}`,
      },
      { label: 'Cost', kind: 'number', cell: (trace) => formatUsd(trace.costUsd) },
      { label: 'Latency', kind: 'number', cell: (trace) => formatMs(trace.latencyMs) },
      { label: 'TTFT', kind: 'number', cell: (trace) => formatMs(trace.ttftMs) },
    ],
  })}</section>`;
}
