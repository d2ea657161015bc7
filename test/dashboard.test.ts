/**
 * The dashboard end to end in a real headless Chromium (Debian's, driven by
 * playwright-core): calls go through the real gateway to scripted engines,
 * some failing; an admin logs in through the form, finds the workload on the
 * overview, and its page shows the same numbers as the API, with charts; a
 * trace opens; logging out ends the session. The key never reaches the page
 * or the browser's storage, and the session cookie is HttpOnly.
 *
 * The overview, workload and trace pages hold from a phone's 375 px to
 * 1920 px: nothing is wider than the viewport, no table scrolls sideways, and
 * no chart label overlaps another or is cut off (read from what was drawn on
 * the canvas). A stored call with unwieldy values (long unbroken ids, model
 * name, error message and body) is among the data, so wrapping is tested too.
 *
 * Leaves screenshots of the pages at each width in test/artifacts/.
 */
import { traceFixture } from './contracts/store/trace-fixture.js';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCount, formatRate, formatUsd } from '../src/dashboard/format.js';
import type { Trace } from '../src/store/store.js';
import { startScriptedEngine, type ScriptedEngine } from './helpers/scripted-engine.js';
import { seededRandom } from './helpers/seeded-random.js';
import { ADMIN_KEY, startTestGateway, type TestGateway } from './helpers/test-gateway.js';
import { browser, requireOrSkip } from './helpers/machine-requirements.js';
import { CANVAS_TEXT_RECORDER, chartProblems, chartsSettled, drawnCharts, layoutProblems } from './helpers/page-layout.js';
import { temporaryDirectory } from './helpers/temporary-directory.js';

const BROWSER = requireOrSkip(browser, 'test/dashboard.test.ts');
// Without the background-networking flags Chromium keeps dialling Google, which this sandbox refuses.
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const SCREENSHOT = join('test', 'artifacts', 'dashboard-workload.png');
/** A phone, the faults' 800 and 1280, a wide screen, and each side of the widths where tables stack (see styles.ts). */
const WIDTHS = [375, 700, 800, 1024, 1280, 1920];
const WORKLOAD_PATH = '/dashboard/projects/shop/workloads/summarise';

let large: ScriptedEngine;
let small: ScriptedEngine;
let taskgate: TestGateway;
let context: BrowserContext;
let profile: string;
let page: Page;
const pageProblems: string[] = [];
let earlier: Trace[];
/** Request ids of live calls through the gateway: one that succeeded, one that failed (its engine answered 500). */
let succeededId: string;
let failedId: string;
let unwieldy: Trace;

/**
 * A day of earlier calls of the workload, stored as traces (the store rolls
 * them up as it would the gateway's own): so the charts have a history and
 * the page's numbers add up over many buckets, not one.
 */
function history(accountId: string, keyId: string, now: number): Trace[] {
  const random = seededRandom(7);
  const traces: Trace[] = [];
  const bucketMs = 15 * 60_000;
  for (let bucket = 88; bucket >= 1; bucket--) {
    const start = now - bucket * bucketMs;
    const hour = new Date(start).getUTCHours();
    const calls = Math.round(3 + 3 * Math.sin(((hour - 8) / 24) * 2 * Math.PI) + random() * 2);
    for (let index = 0; index < calls; index++) {
      const failed = random() < 0.06;
      const stream = !failed && random() < 0.3;
      const promptTokens = failed ? 0 : 300 + Math.floor(random() * 300);
      const completionTokens = failed ? 0 : 40 + Math.floor(random() * 80);
      traces.push(
        traceFixture({
          requestId: `req_history_${bucket}_${index}`,
          accountId,
          keyId,
          workload: 'summarise',
          requestedModel: 'acme-large',
          servedModel: 'acme-large',
          replica: 'large',
          status: failed ? 'error' : 'ok',
          errorClass: failed ? 'engine_error' : null,
          errorMessage: failed ? 'Engine large failed (HTTP 500): CUDA out of memory' : null,
          httpStatus: failed ? 502 : 200,
          finishReason: failed ? null : 'stop',
          promptTokens,
          completionTokens,
          costUsd: (promptTokens * 30 + completionTokens * 60) / 1_000_000,
          latencyMs: failed ? 20 + random() * 50 : 350 + random() * 500 + (random() < 0.1 ? 900 : 0),
          ttftMs: stream ? 120 + random() * 150 : null,
          stream,
          startedAt: start + Math.floor(random() * bucketMs),
          requestBody: null,
          replyBody: null,
        }),
      );
    }
  }
  return traces;
}

/**
 * A failed call stored as it might come from a real client: a long requested
 * model id, a user id, metadata and an engine message with long unbroken
 * tokens, and a request body with a pasted blob. The newest call, so it leads
 * the failures and the recent calls.
 */
function unwieldyTrace(accountId: string, now: number): Trace {
  const blob = Array.from(
    { length: 1_200 },
    (_, index) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'[(index * 37) % 64],
  ).join('');
  return traceFixture({
    requestId: `req_${'0123456789abcdef'.repeat(4)}`,
    accountId,
    keyId: 'key_history',
    workload: 'summarise',
    user: `customer-${'7f3a9c'.repeat(8)}@accounts.example.com`,
    requestedModel: 'acme-large-instruct-2026-11-preview-awq-int4-gguf-q4_k_m',
    servedModel: 'acme-large',
    replica: 'large',
    status: 'error',
    errorClass: 'engine_error',
    errorMessage: `Engine large failed (HTTP 500): upstream trace ${blob.slice(0, 260)}`,
    httpStatus: 502,
    finishReason: null,
    promptTokens: 0,
    completionTokens: 0,
    costUsd: 0,
    latencyMs: 41,
    metadata: { ticket: `TICKET-${'9'.repeat(40)}`, attachment: blob.slice(0, 120) },
    startedAt: now,
    requestBody: JSON.stringify({
      model: 'acme-large-instruct-2026-11-preview-awq-int4-gguf-q4_k_m',
      messages: [{ role: 'user', content: `Summarise: the quarterly report, attached: ${blob}` }],
    }),
    replyBody: null,
  });
}

/**
 * Three days of a busy workload on a premium-priced model (long contracts,
 * long answers, about $3.60 a call): its charts' values run to thousands of
 * dollars a bucket in the 30-day window, so their axis labels are wide.
 */
function busyHistory(accountId: string, now: number): Trace[] {
  const random = seededRandom(11);
  const traces: Trace[] = [];
  const bucketMs = 15 * 60_000;
  for (let bucket = 3 * 96; bucket >= 1; bucket--) {
    const start = now - bucket * bucketMs;
    for (let index = 0; index < 12; index++) {
      const promptTokens = 6_000 + Math.floor(random() * 2_000);
      const completionTokens = 3_000 + Math.floor(random() * 1_500);
      traces.push(
        traceFixture({
          requestId: `req_busy_${bucket}_${index}`,
          accountId,
          keyId: 'key_history',
          workload: 'contract-review',
          requestedModel: 'acme-pro',
          servedModel: 'acme-pro',
          replica: 'pro',
          promptTokens,
          completionTokens,
          costUsd: (promptTokens * 150 + completionTokens * 600) / 1_000_000,
          latencyMs: 20_000 + random() * 70_000,
          startedAt: start + Math.floor(random() * bucketMs),
          requestBody: null,
          replyBody: null,
        }),
      );
    }
  }
  return traces;
}

interface WorkloadApi {
  stats: { calls: number; errors: number; error_rate: number; cost_usd: number; failures: Record<string, number> };
  models: Array<{ model: string; calls: number; errors: number; cost_usd: number }>;
  routes: Array<{ requested_model: string; served_model: string }>;
}

async function api<T>(path: string): Promise<T> {
  const response = await fetch(`${taskgate.baseUrl}${path}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  expect(response.status).toBe(200);
  return (await response.json()) as T;
}

beforeAll(async () => {
  if (BROWSER === null) return;
  [large, small] = await Promise.all([startScriptedEngine({ name: 'large' }), startScriptedEngine({ name: 'small' })]);
  taskgate = await startTestGateway(`engines:
  - { id: large, type: openai, base_url: "${large.baseUrl}" }
  - { id: small, type: openai, base_url: "${small.baseUrl}" }
models:
  - { id: acme-large, served_by: [{ engine: large }], price: { input: 30, output: 60 }, context_window: 8192 }
  - { id: acme-small, served_by: [{ engine: small }], price: { input: 3, output: 6 }, context_window: 8192 }
`);
  const call = (workload: string, model: string, options: { stream?: boolean } = {}) =>
    taskgate
      .postChat(
        {
          model,
          stream: options.stream ?? false,
          stream_options: options.stream === true ? { include_usage: true } : undefined,
          messages: [{ role: 'user', content: 'Summarise: the quarterly report says revenue grew.' }],
        },
        { headers: { 'x-taskgate-project': 'shop', 'x-taskgate-workload': workload } },
      )
      .then(async (response) => {
        await response.text();
        return response.headers.get('x-request-id') ?? '';
      });

  const account = await taskgate.gateway.store.accounts.ensureAccount('default');
  earlier = history(account.id, 'key_history', Date.now());
  await taskgate.gateway.store.traces.insertBatch(earlier);
  await taskgate.gateway.store.traces.insertBatch(busyHistory(account.id, Date.now()));

  const usage = { prompt_tokens: 420, completion_tokens: 80, total_tokens: 500 };
  large.script({ kind: 'reply', content: 'Revenue grew.', usage, delayMs: 15 });
  small.script({ kind: 'reply', content: 'Revenue grew.', usage, delayMs: 5 });
  for (let index = 0; index < 9; index++) succeededId = await call('summarise', 'acme-large');
  large.script({ kind: 'stream', pieces: ['Revenue ', 'grew.'], firstChunkDelayMs: 20, gapMs: 5 });
  for (let index = 0; index < 3; index++) await call('summarise', 'acme-large', { stream: true });
  large.script({ kind: 'status', status: 500, body: { error: { message: 'CUDA out of memory' } } });
  for (let index = 0; index < 3; index++) failedId = await call('summarise', 'acme-large');
  // A person pins the cheaper model: the route, its history and a second served model appear.
  const pin = await fetch(`${taskgate.baseUrl}/projects/shop/workloads/summarise/routes/acme-large/pin`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'acme-small' }),
  });
  expect(pin.status).toBe(200);
  for (let index = 0; index < 6; index++) await call('summarise', 'acme-large');
  for (let index = 0; index < 4; index++) await call('classify', 'acme-small');
  await taskgate.traces();
  unwieldy = unwieldyTrace(account.id, Date.now());
  await taskgate.gateway.store.traces.insertBatch([unwieldy]);
  earlier.push(unwieldy); // counted with the stored calls

  profile = temporaryDirectory('taskgate-chromium-');
  context = await chromium.launchPersistentContext(profile, {
    executablePath: BROWSER ?? undefined,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
  });
  await context.addInitScript(CANVAS_TEXT_RECORDER);
  page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (error) => pageProblems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') pageProblems.push(`console ${message.type()}: ${message.text()}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400) pageProblems.push(`${response.status()} ${response.url()}`);
  });
});

afterAll(async () => {
  await context?.close();
  if (profile !== undefined) rmSync(profile, { recursive: true, force: true });
  await taskgate?.stop();
  await Promise.all([large?.close(), small?.close()]);
});

/** The key must be nowhere the page or its scripts can reach. */
async function expectNoKeyInBrowser(): Promise<void> {
  expect(await page.content()).not.toContain(ADMIN_KEY);
  // A string, evaluated in the page: this project's TypeScript has no DOM types.
  const storage = await page.evaluate<string>(
    'JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, cookie: document.cookie })',
  );
  expect(storage).not.toContain(ADMIN_KEY);
  expect(JSON.parse(storage)).toEqual({ local: {}, session: {}, cookie: '' });
}

async function text(selector: string): Promise<string> {
  return ((await page.locator(selector).first().textContent()) ?? '').trim();
}

describe.skipIf(BROWSER === null)('dashboard in a browser', () => {
  it('logs in through the form with an HttpOnly session cookie', async () => {
    await page.goto(`${taskgate.origin}/dashboard`);
    expect(new URL(page.url()).pathname).toBe('/dashboard/login');
    await page.fill('#key', 'tg_live_not_a_key');
    await page.click('button[type=submit]');
    expect(await text('.notice')).toContain('not an admin key');
    expect(await page.inputValue('#key')).toBe('');
    pageProblems.length = 0; // the refused login's 401, as it should be

    await page.fill('#key', ADMIN_KEY);
    await page.click('button[type=submit]');
    expect(new URL(page.url()).pathname).toBe('/dashboard');
    const cookies = await context.cookies(taskgate.origin + '/dashboard');
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ name: 'taskgate_session', httpOnly: true, sameSite: 'Strict', path: '/dashboard', secure: false });
    expect(cookies[0]?.value).not.toContain(ADMIN_KEY);
    await expectNoKeyInBrowser();
  });

  it('lists the workloads on the overview with the API numbers, most expensive first', async () => {
    const summarise = await api<WorkloadApi>('/projects/shop/workloads/summarise');
    const classify = await api<WorkloadApi>('/projects/shop/workloads/classify');
    const calls = earlier.length + 21;
    const errors = earlier.filter((trace) => trace.status === 'error').length + 3;
    expect(summarise.stats).toMatchObject({ calls, errors });
    const row = page.locator('tr[data-project="shop"][data-workload="summarise"]');
    expect(await row.locator('[data-field=calls]').textContent()).toBe(formatCount(calls));
    expect(await row.locator('[data-field=errors]').textContent()).toBe(formatCount(errors));
    expect(await row.locator('[data-field=error-rate]').textContent()).toBe(formatRate(errors / calls));
    expect(await row.locator('[data-field=cost]').textContent()).toBe(formatUsd(summarise.stats.cost_usd));
    expect(summarise.stats.cost_usd).toBeGreaterThan(classify.stats.cost_usd);
    expect(
      await page.locator('#workloads tbody tr').evaluateAll((rows) => rows.map((element) => element.getAttribute('data-workload'))),
    ).toEqual(['contract-review', 'summarise', 'classify']);
    mkdirSync(join('test', 'artifacts'), { recursive: true });
    await page.screenshot({ path: join('test', 'artifacts', 'dashboard-overview.png') });
    await expectNoKeyInBrowser();
  });

  it('shows the workload page with the same numbers as the API, and draws its charts', async () => {
    await page.click('tr[data-workload="summarise"] a');
    expect(new URL(page.url()).pathname).toBe('/dashboard/projects/shop/workloads/summarise');
    const workload = await api<WorkloadApi>('/projects/shop/workloads/summarise');
    expect(await text('#summary [data-field=calls]')).toBe(formatCount(workload.stats.calls));
    expect(await text('#summary [data-field=errors]')).toBe(formatCount(workload.stats.errors));
    expect(await text('#summary [data-field=error-rate]')).toBe(formatRate(workload.stats.error_rate));
    expect(await text('#summary [data-field=cost]')).toBe(formatUsd(workload.stats.cost_usd));

    expect(workload.models.map((model) => model.model).sort()).toEqual(['acme-large', 'acme-small']);
    for (const model of workload.models) {
      const row = page.locator(`#models tr[data-model="${model.model}"]`);
      expect(await row.locator('[data-field=calls]').textContent()).toBe(formatCount(model.calls));
      expect(await row.locator('[data-field=errors]').textContent()).toBe(formatCount(model.errors));
      expect(await row.locator('[data-field=cost]').textContent()).toBe(formatUsd(model.cost_usd));
    }

    expect(workload.routes).toEqual([expect.objectContaining({ requested_model: 'acme-large', served_model: 'acme-small' })]);
    expect(await text('.route[data-requested="acme-large"] [data-field=served-model]')).toBe('acme-small');
    expect(await text('#route')).toContain('pinned');
    expect(await text('.route[data-requested="acme-large"] [data-field=phase]')).toMatch(/^pinned \(router's choice: /);
    expect(await text('.route[data-requested="acme-large"] [data-field=shares]')).toMatch(/^every call → acme-small, pinned by a person/);
    const routes = await api<{ net_savings_usd: number; routes: Array<{ net_savings_usd: number }> }>(
      '/projects/shop/workloads/summarise/routes',
    );
    expect(await text('[data-field=workload-net-savings]')).toBe(formatUsd(routes.net_savings_usd));
    expect(await text('.route[data-requested="acme-large"] [data-field=net-savings]')).toBe(
      formatUsd(routes.routes[0]?.net_savings_usd ?? Number.NaN),
    );
    expect(Object.keys(workload.stats.failures)).toEqual(['engine_error']);
    expect(await text('#failures [data-error-class="engine_error"] [data-field=count]')).toBe(
      formatCount(workload.stats.failures.engine_error as number),
    );
    expect(await page.locator('#failures [data-error-class="engine_error"] tbody tr').count()).toBe(3); // the latest examples

    await page.waitForSelector('#chart-calls canvas');
    for (const chart of ['calls', 'cost', 'tokens', 'error-rate', 'latency', 'ttft'])
      expect(await page.locator(`#chart-${chart} canvas`).count()).toBe(1);
    const charts = JSON.parse((await page.locator('#chart-data').textContent()) ?? '{}') as {
      charts: Array<{ id: string; series: Array<{ values: Array<number | null> }> }>;
    };
    const callsChart = charts.charts.find((chart) => chart.id === 'calls');
    const total = (index: number) => callsChart?.series[index]?.values.reduce<number>((sum, value) => sum + (value ?? 0), 0);
    expect([total(0), total(1)]).toEqual([workload.stats.calls, workload.stats.errors]);
    expect(pageProblems).toEqual([]);
    await expectNoKeyInBrowser();

    await page.screenshot({ path: SCREENSHOT });
    await page.screenshot({ path: join('test', 'artifacts', 'dashboard-workload-full.png'), fullPage: true });
  });

  it('opens a trace with its fields and bodies', async () => {
    const link = page
      .locator('#traces tbody tr', { has: page.locator('.badge.ok') })
      .locator('a')
      .first();
    const requestId = ((await link.textContent()) ?? '').trim();
    await link.click();
    expect(new URL(page.url()).pathname).toBe(`/dashboard/traces/${requestId}`);
    expect(await text('#trace-fields')).toContain(requestId);
    expect(await text('#trace-fields')).toContain('shop / summarise');
    expect(await page.locator('pre').first().textContent()).toContain('Summarise: the quarterly report');
    await page.screenshot({ path: join('test', 'artifacts', 'dashboard-trace.png'), fullPage: true });
    expect(pageProblems).toEqual([]);
    await expectNoKeyInBrowser();
  });

  it("shows a failed call's request body, and says why it has no reply body", async () => {
    await page.goto(`${taskgate.origin}/dashboard/traces/${failedId}`);
    expect(await text('#trace-fields')).toContain('engine_error');
    // Bodies were kept: the page must not claim otherwise because the call never got a reply.
    expect(await text('main')).not.toContain('Not kept');
    expect(await page.locator('#request-body pre').count()).toBe(1);
    expect(await text('#request-body pre')).toContain('Summarise: the quarterly report');
    expect(await page.locator('#reply-body pre').count()).toBe(0);
    expect(await text('#reply-body')).toContain('failed');
    expect(pageProblems).toEqual([]);
  });

  describe('fits every width from a phone to a wide screen', () => {
    const pages = () => [
      { name: 'overview', path: '/dashboard' },
      { name: 'workload', path: WORKLOAD_PATH },
      // A month of a busy workload: the widest axis values.
      { name: 'workload-busy', path: '/dashboard/projects/shop/workloads/contract-review?since=30d' },
      { name: 'trace', path: `/dashboard/traces/${succeededId}` },
      { name: 'trace-failed', path: `/dashboard/traces/${failedId}` },
      { name: 'trace-unwieldy', path: `/dashboard/traces/${unwieldy.requestId}` },
    ];

    /** Everything wrong with the page's charts, once they are drawn at their boxes' width. */
    async function chartsOnPage(): Promise<string[]> {
      await chartsSettled(page);
      const charts = await drawnCharts(page);
      expect(charts.map((chart) => chart.id)).toEqual([
        'chart-calls',
        'chart-cost',
        'chart-tokens',
        'chart-error-rate',
        'chart-latency',
        'chart-ttft',
      ]);
      return charts.flatMap(chartProblems);
    }

    for (const width of WIDTHS) {
      it(`at ${width} px: no page is wider than the viewport, no table scrolls sideways, no chart label overlaps`, async () => {
        await page.setViewportSize({ width, height: 900 });
        // Every page's problems, then one assertion: a failure lists them all.
        const problems: string[] = [];
        for (const { name, path } of pages()) {
          await page.goto(`${taskgate.origin}${path}`);
          if (name.startsWith('workload')) problems.push(...(await chartsOnPage()).map((problem) => `${name}: ${problem}`));
          await page.screenshot({ path: join('test', 'artifacts', `layout-${name}-${width}.png`), fullPage: true });
          problems.push(...(await layoutProblems(page)).map((problem) => `${name}: ${problem}`));
        }
        expect(problems).toEqual([]);
        // The unwieldy call's values were on the pages checked.
        await page.goto(`${taskgate.origin}${WORKLOAD_PATH}`);
        expect(await text('#failures')).toContain(unwieldy.requestId);
        expect(await text('#traces')).toContain(unwieldy.requestId);
        expect(pageProblems).toEqual([]);
      });
    }

    it('redraws the charts at their new width when the window narrows, labels still apart', async () => {
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto(`${taskgate.origin}${WORKLOAD_PATH}`);
      expect(await chartsOnPage()).toEqual([]);
      const wide = (await drawnCharts(page))[0]?.chartWidth ?? 0;
      await page.setViewportSize({ width: 375, height: 800 });
      expect(await chartsOnPage()).toEqual([]);
      expect((await drawnCharts(page))[0]?.chartWidth ?? 0).toBeLessThan(wide);
      expect(await layoutProblems(page)).toEqual([]);
      await page.setViewportSize({ width: 1280, height: 900 });
      expect(pageProblems).toEqual([]);
    });
  });

  it('logs out, and the session is gone', async () => {
    await page.click('button:has-text("Log out")');
    expect(new URL(page.url()).pathname).toBe('/dashboard/login');
    expect(await context.cookies(taskgate.origin + '/dashboard')).toEqual([]);
    await page.goto(`${taskgate.origin}/dashboard`);
    expect(new URL(page.url()).pathname).toBe('/dashboard/login');
    await expectNoKeyInBrowser();
  });
});
