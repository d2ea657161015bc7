import { describe, expect, it } from 'vitest';
import { traceFixture } from '../../test/contracts/store/trace-fixture.js';
import type { Trace } from '../store/store.js';
import { renderTracePage } from './trace-page.js';

const account = { name: 'default', keyPrefix: 'tg_live_abc…' };
const request = '{"model":"acme-large","messages":[{"role":"user","content":"Summarise"}]}';

function trace(fields: Partial<Trace>): Trace {
  return traceFixture({
    requestId: 'req_1',
    accountId: 'acct_1',
    keyId: 'key_1',
    workload: 'summarise',
    requestedModel: 'acme-large',
    servedModel: 'acme-large',
    replica: 'large',
    promptTokens: 10,
    completionTokens: 2,
    costUsd: 0.001,
    latencyMs: 120,
    startedAt: Date.UTC(2026, 10, 24, 12),
    requestBody: request,
    replyBody: '{"id":"chatcmpl-1"}',
    ...fields,
  });
}

function section(page: string, id: string): string {
  const start = page.indexOf(`<section id="${id}">`);
  return page.slice(start, page.indexOf('</section>', start));
}

describe('trace page bodies', () => {
  it("shows a failed call's request body, and says the reply is missing because the call failed, not because bodies are off", () => {
    const page = renderTracePage({
      account,
      feedback: null,
      trace: trace({ status: 'error', errorClass: 'engine_error', errorMessage: 'CUDA out of memory', httpStatus: 502, replyBody: null }),
    }).text;
    expect(section(page, 'request-body')).toContain('<pre>{\n  &quot;model&quot;: &quot;acme-large&quot;');
    expect(section(page, 'reply-body')).toContain(
      'the call failed before a reply was made, and the caller got HTTP 502 (<strong>engine_error</strong>)',
    );
    expect(page).not.toContain('Not kept');
  });

  it('says a call the client abandoned had no reply to keep', () => {
    const page = renderTracePage({
      account,
      feedback: null,
      trace: trace({ status: 'aborted', errorClass: 'client_closed', httpStatus: 499, replyBody: null }),
    }).text;
    expect(section(page, 'reply-body')).toContain('the client closed the connection');
    expect(page).not.toContain('Not kept');
  });

  it('says bodies were not kept when neither was', () => {
    const page = renderTracePage({ account, feedback: null, trace: trace({ requestBody: null, replyBody: null }) }).text;
    expect(section(page, 'request-body')).toContain('Not kept');
    expect(section(page, 'reply-body')).toContain('Not kept');
  });

  it('shows both bodies of a call that kept them', () => {
    const page = renderTracePage({ account, feedback: null, trace: trace({}) }).text;
    expect(section(page, 'reply-body')).toContain('<pre>{\n  &quot;id&quot;: &quot;chatcmpl-1&quot;\n}</pre>');
    expect(page).not.toContain('Not kept');
  });
});

describe('trace page attempts', () => {
  it('lists every replica a call was tried on, in order, with each outcome, when there were several', () => {
    const attempts = [
      { replica: 'large-a', outcome: 'engine_unavailable' },
      { replica: 'large-<b>', outcome: 'ok' },
    ];
    const page = renderTracePage({ account, feedback: null, trace: trace({ replica: 'large-<b>', attempts }) }).text;
    const list = page.slice(page.indexOf('<ol class="attempts" id="trace-attempts">'), page.indexOf('</ol>'));
    expect(list).toContain('<li><code>large-a</code> <span class="badge error">engine_unavailable</span></li>');
    expect(list.indexOf('large-a')).toBeLessThan(list.indexOf('large-&lt;b&gt;'));
    expect(list).toContain('<li><code>large-&lt;b&gt;</code> <span class="badge ok">ok</span></li>');
    expect(page).toContain('<dt>Attempts</dt><dd><ol');
  });

  it('shows no attempts list for a call tried once, or never', () => {
    for (const fields of [{}, { replica: null }, { status: 'error' as const, errorClass: 'engine_timeout', httpStatus: 504 }]) {
      const page = renderTracePage({ account, feedback: null, trace: trace(fields) }).text;
      expect(page).not.toContain('Attempts');
      expect(page).not.toContain('trace-attempts');
    }
  });
});

describe('trace page route', () => {
  it('says why the served model served the call, and the share it was drawn for in a split', () => {
    const split = renderTracePage({
      account,
      feedback: null,
      trace: trace({ servedModel: 'acme-small', routeReason: 'split', routeShare: 0.25 }),
    }).text;
    expect(split).toContain('<dt>Route</dt><dd>split (drawn for a 25.0% share of the calls)</dd>');
    const policy = renderTracePage({
      account,
      feedback: null,
      trace: trace({ servedModel: 'acme-small', routeReason: 'policy', routeShare: 0.62 }),
    }).text;
    expect(policy).toContain(
      '<dt>Route</dt><dd>policy (drawn for a 62.0% share of the calls the route&#39;s per-call policy picks, and it picked this one)</dd>',
    );
    const routed = renderTracePage({ account, feedback: null, trace: trace({ servedModel: 'acme-small', routeReason: 'routed' }) }).text;
    expect(routed).toContain('<dt>Route</dt><dd>routed</dd>');
  });

  it('shows a dash for a call that failed before it was routed', () => {
    const page = renderTracePage({
      account,
      feedback: null,
      trace: trace({ status: 'error', errorClass: 'invalid_api_key', httpStatus: 401, servedModel: null }),
    }).text;
    expect(page).toContain('<dt>Route</dt><dd>—</dd>');
  });
});
