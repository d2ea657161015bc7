/** The workload page's failures (grouped by class, with the latest examples) and recent calls, each linking to its trace. */
import type { Trace } from '../store/store.js';
import type { WorkloadStats } from '../tracking/stats-service.js';
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

/** `failed`: the newest failed calls of the window (the examples); the counts come from the stats. */
export function renderFailures(stats: WorkloadStats, failed: readonly Trace[]): SafeHtml {
  if (stats.failures.length === 0) return html`<section id="failures"><h2>Failures</h2><p class="empty">No failed call in this window.</p></section>`;
  return html`<section id="failures"><h2>Failures</h2>${stats.failures.map((failure) => {
    const examples = failed.filter((trace) => trace.errorClass === failure.errorClass).slice(0, EXAMPLES_PER_CLASS);
    return html`<div class="failure" data-error-class="${failure.errorClass}">
<h3><span class="badge error">${failure.errorClass}</span> <span data-field="count">${formatCount(failure.count)}</span> <span class="muted">${failure.count === 1 ? 'call' : 'calls'}</span></h3>
${examples.length === 0
  ? html`<p class="muted">No recent example kept.</p>`
  : html`<div class="table"><table><thead><tr><th>When</th><th>Request</th><th>Model</th><th class="num">HTTP</th><th>Message</th></tr></thead><tbody>${examples.map(
      (trace) => html`<tr><td>${formatTime(trace.startedAt)}</td><td>${traceLink(trace)}</td><td>${modelText(trace)}</td><td class="num">${trace.httpStatus}</td><td class="wrap">${(trace.errorMessage ?? '').slice(0, 300)}</td></tr>`,
    )}</tbody></table></div>`}
</div>`;
  })}</section>`;
}

export function renderRecentTraces(traces: readonly Trace[]): SafeHtml {
  if (traces.length === 0) return html`<section id="traces"><h2>Recent calls</h2><p class="empty">No call in this window.</p></section>`;
  return html`<section id="traces"><h2>Recent calls</h2><div class="table"><table>
<thead><tr><th>When</th><th>Request</th><th>Status</th><th>Model</th><th class="num">Tokens in / out</th><th class="num">Cost</th><th class="num">Latency</th><th class="num">TTFT</th></tr></thead>
<tbody>${traces.map(
    (trace) => html`<tr data-request-id="${trace.requestId}">
<td>${formatTime(trace.startedAt)}</td>
<td>${traceLink(trace)}</td>
<td><span class="${`badge ${trace.status}`}">${trace.status === 'ok' ? 'ok' : `${trace.status} ${trace.httpStatus}`}</span>${trace.stream ? html` <span class="muted">stream</span>` : null}</td>
<td>${modelText(trace)}</td>
<td class="num">${formatCount(trace.promptTokens)} / ${formatCount(trace.completionTokens)}</td>
<td class="num">${formatUsd(trace.costUsd)}</td>
<td class="num">${formatMs(trace.latencyMs)}</td>
<td class="num">${formatMs(trace.ttftMs)}</td>
</tr>`,
  )}</tbody></table></div></section>`;
}
