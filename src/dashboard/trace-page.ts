/** `GET /dashboard/traces/{request_id}`: one call's trace, with its bodies when they were kept. */
import type { Feedback } from '../store/routing-store.js';
import type { Trace } from '../store/store.js';
import { formatCount, formatMs, formatRate, formatTime, formatUsd } from './format.js';
import { dashboardPath, html, layout, type HtmlValue, type SafeHtml } from './html.js';

export interface TracePageData {
  account: { name: string; keyPrefix: string };
  trace: Trace;
  feedback: Feedback | null;
}

/** JSON bodies indented for reading; anything else as stored. */
function readable(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

/**
 * Why a body is missing. The gateway reads the request body first and keeps
 * both bodies or neither, so a kept request body means bodies were kept for
 * this call: a missing reply then means there was no reply to keep (the call
 * failed or was abandoned first), not that bodies are off.
 */
function missingBody(trace: Trace, which: 'request' | 'reply'): SafeHtml {
  if (which === 'reply' && trace.requestBody !== null) {
    if (trace.status === 'aborted') return html`No reply body: the client closed the connection before a reply was made.`;
    if (trace.status === 'error') {
      return html`No reply body: the call failed before a reply was made, and the caller got HTTP ${trace.httpStatus}${trace.errorClass === null ? null : html` (<strong>${trace.errorClass}</strong>)`} instead.`;
    }
    return html`No reply body was recorded for this call.`;
  }
  const refused = trace.status === 'error' ? ' A call refused before its body was read (a rate limit, say) has none either.' : '';
  return html`Not kept: bodies are kept when <code>traces.bodies</code> is on and the project's retention keeps them, until their time to live runs out.${refused}`;
}

function body(trace: Trace, which: 'request' | 'reply'): SafeHtml {
  const text = which === 'request' ? trace.requestBody : trace.replyBody;
  return html`<section id="${`${which}-body`}"><h2>${which === 'request' ? 'Request body' : 'Reply body'}</h2>${
    text === null ? html`<p class="empty">${missingBody(trace, which)}</p>` : html`<pre>${readable(text)}</pre>`
  }</section>`;
}

/** The replicas a call was tried on, in order, when there were several (one is the Replica row alone). */
function attemptsList(attempts: NonNullable<Trace['attempts']>): SafeHtml {
  return html`<ol class="attempts" id="trace-attempts">${attempts.map(
    ({ replica, outcome }) =>
      html`<li><code>${replica}</code> <span class="${`badge ${outcome === 'ok' ? 'ok' : 'error'}`}">${outcome}</span></li>`,
  )}</ol>`;
}

export function renderTracePage({ account, trace, feedback }: TracePageData): SafeHtml {
  const workloadHref =
    trace.project !== null && trace.workload !== null ? dashboardPath('projects', trace.project, 'workloads', trace.workload) : undefined;
  const fields: Array<[string, HtmlValue]> = [
    ['Request id', html`<code>${trace.requestId}</code>`],
    ['Started', formatTime(trace.startedAt)],
    ['Status', html`<span class="${`badge ${trace.status}`}">${trace.status}</span> HTTP ${trace.httpStatus}`],
    ['Error', trace.errorClass === null ? '—' : html`<strong>${trace.errorClass}</strong>: ${trace.errorMessage ?? ''}`],
    ['Project / workload', `${trace.project ?? '—'} / ${trace.workload ?? '—'}`],
    ['Environment', trace.environment],
    ['Key id', html`<code>${trace.keyId}</code>`],
    ['User', trace.user ?? '—'],
    ['Requested model', trace.requestedModel ?? '—'],
    ['Served model', trace.servedModel ?? '—'],
    [
      'Route',
      trace.routeReason === null
        ? '—'
        : `${trace.routeReason}${trace.routeShare === null ? '' : ` (drawn for a ${formatRate(trace.routeShare)} share of the calls${trace.routeReason === 'policy' ? " the route's per-call policy picks, and it picked this one" : ''})`}`,
    ],
    ['Replica', trace.replica ?? '—'],
    ...(trace.attempts !== null && trace.attempts.length >= 2 ? [['Attempts', attemptsList(trace.attempts)] as [string, HtmlValue]] : []),
    ['Finish reason', trace.finishReason ?? '—'],
    ['Tokens in / out', `${formatCount(trace.promptTokens)} / ${formatCount(trace.completionTokens)}`],
    ['Cost', formatUsd(trace.costUsd)],
    [
      'Measured cost',
      trace.measuredCostUsd === null
        ? '—'
        : `${formatUsd(trace.measuredCostUsd)} (${(trace.engineSeconds ?? 0).toFixed(3)} engine-seconds)`,
    ],
    ['Latency', formatMs(trace.latencyMs)],
    ['Time to first token', formatMs(trace.ttftMs)],
    ['Streamed', trace.stream ? 'yes' : 'no'],
    ['Metadata', trace.metadata === null ? '—' : html`<code>${JSON.stringify(trace.metadata)}</code>`],
    [
      'Feedback',
      feedback === null
        ? '—'
        : `${feedback.pass === null ? '' : feedback.pass ? 'pass' : 'fail'}${feedback.score === null ? '' : ` score ${feedback.score}`}${feedback.comment === null ? '' : ` “${feedback.comment}”`} (${formatTime(feedback.createdAt)})`,
    ],
  ];
  const crumbs =
    workloadHref === undefined
      ? [{ label: trace.requestId }]
      : [{ label: `${trace.project} / ${trace.workload}`, href: workloadHref }, { label: trace.requestId }];
  return layout(
    { title: `Trace ${trace.requestId}`, account, crumbs },
    html`<div class="heading"><h1>Trace <span class="mono">${trace.requestId}</span></h1></div>
<section class="panel"><dl class="facts" id="trace-fields">${fields.map(([label, value]) => html`<dt>${label}</dt><dd>${value}</dd>`)}</dl></section>
${body(trace, 'request')}
${body(trace, 'reply')}`,
  );
}
