/**
 * Workload numbers through the API: what the stats say must equal the sums
 * over the workload's traces, per model too; failures come grouped with their
 * latest examples; another account sees none of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { startScriptedEngine, type ScriptedEngine } from './helpers/scripted-engine.js';
import { runTaskgateAsync, startTaskgateCommand } from './helpers/taskgate-process.js';
import { ADMIN_KEY, engineConfig, startTestGateway, type TestGateway } from './helpers/test-gateway.js';

let engine: ScriptedEngine;
let taskgate: TestGateway;

beforeAll(async () => {
  engine = await startScriptedEngine();
  taskgate = await startTestGateway(engineConfig([engine.baseUrl, engine.baseUrl], { extra: 'server: { metrics: { port: 0 } }' }));
  const call = (model: string, stream = false) =>
    taskgate
      .postChat(
        { model, stream, messages: [{ role: 'user', content: 'hi' }] },
        { headers: { 'x-taskgate-project': 'shop', 'x-taskgate-workload': 'summarise' } },
      )
      .then((response) => response.text());
  engine.script({ kind: 'reply', content: 'ok', usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } });
  for (let index = 0; index < 12; index++) await call(index % 3 === 0 ? 'model-1' : 'model-0');
  engine.script({ kind: 'stream', pieces: ['a', 'b', 'c'] });
  for (let index = 0; index < 4; index++) await call('model-0', true);
  engine.script({ kind: 'status', status: 500, body: { error: { message: 'CUDA out of memory' } } });
  for (let index = 0; index < 3; index++) await call('model-0');
  engine.script({ kind: 'reply', content: 'ok' });
  await taskgate.traces();
});
afterAll(async () => {
  await taskgate?.stop();
  await engine?.close();
});

async function get(path: string, key = ADMIN_KEY): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${taskgate.baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('workload stats', () => {
  it('equal the sums over the traces, per served model too', async () => {
    const traces = (await taskgate.traces()).filter((trace) => trace.workload === 'summarise');
    const { status, body } = await get('/projects/shop/workloads/summarise?since=1h');
    expect(status).toBe(200);
    const stats = body.stats as {
      calls: number;
      errors: number;
      error_rate: number;
      prompt_tokens: number;
      cost_usd: number;
      failures: Record<string, number>;
      latency_ms: { p50: number };
      ttft_ms: { p50: number | null };
    };
    expect(stats.calls).toBe(traces.length);
    expect(stats.calls).toBe(19);
    expect(stats.errors).toBe(traces.filter((trace) => trace.status === 'error').length);
    expect(stats.error_rate).toBeCloseTo(3 / 19, 10);
    expect(stats.prompt_tokens).toBe(traces.reduce((sum, trace) => sum + trace.promptTokens, 0));
    expect(stats.cost_usd).toBeCloseTo(
      traces.reduce((sum, trace) => sum + trace.costUsd, 0),
      12,
    );
    expect(stats.failures).toEqual({ engine_error: 3 });
    expect(stats.latency_ms.p50).toBeGreaterThan(0);
    expect(stats.ttft_ms.p50).toBeGreaterThan(0); // from the 4 streams
    const models = body.models as Array<{ model: string; calls: number; cost_usd: number }>;
    for (const model of models) {
      const own = traces.filter((trace) => trace.servedModel === model.model);
      expect(model.calls).toBe(own.length);
      expect(model.cost_usd).toBeCloseTo(
        own.reduce((sum, trace) => sum + trace.costUsd, 0),
        12,
      );
    }
    expect(models.map((model) => model.model).sort()).toEqual(['model-0', 'model-1']);
    // Both models cost the same, so the router has no cheaper candidate to gather evidence on.
    expect((body.quality as { candidates: unknown[] }).candidates).toEqual([]);
  });

  it('lists workloads with their calls and cost, and failures with their latest examples', async () => {
    const list = await get('/projects/shop/workloads');
    expect(list.body.data).toEqual([expect.objectContaining({ name: 'summarise', calls: 19, errors: 3 })]);
    const failures = await get('/projects/shop/workloads/summarise/failures');
    const groups = failures.body.data as Array<{
      error_class: string;
      count: number;
      latest: Array<{ request_id: string; error_message: string }>;
    }>;
    expect(groups).toHaveLength(1);
    expect(groups[0]).toMatchObject({ error_class: 'engine_error', count: 3 });
    expect(groups[0]!.latest).toHaveLength(3);
    expect(groups[0]!.latest[0]!.error_message).toContain('CUDA out of memory');
  });

  it('takes windows and environments, and refuses bad ones with a 400', async () => {
    expect(((await get('/projects/shop/workloads/summarise?env=staging')).body.stats as { calls: number }).calls).toBe(0);
    expect(((await get('/projects/shop/workloads/summarise?env=all')).body.stats as { calls: number }).calls).toBe(19);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(
      (
        (await get(`/projects/shop/workloads/summarise?since=${future}&until=${new Date(Date.now() + 7_200_000).toISOString()}`)).body
          .stats as { calls: number }
      ).calls,
    ).toBe(0);
    expect((await get('/projects/shop/workloads/summarise?since=yesterday')).status).toBe(400);
    expect(((await get(`/projects/shop/workloads/summarise/traces?since=${future}`)).body.data as unknown[]).length).toBe(0);
    expect(((await get('/projects/shop/workloads/summarise/traces?since=1h&status=error')).body.data as unknown[]).length).toBe(3);
    expect((await get('/projects/shop/workloads/summarise?env=prod')).status).toBe(400);
  });

  it('keeps /metrics behind an admin key on the main port, and serves it keyless only on the metrics address', async () => {
    expect((await fetch(`${taskgate.origin}/metrics`)).status).toBe(401);
    const inference = await taskgate.createKey();
    const refused = await fetch(`${taskgate.origin}/metrics`, { headers: { authorization: `Bearer ${inference.text}` } });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('permission_denied');

    const metricsUrl = taskgate.gateway.metricsUrl as string;
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const scraped = await fetch(metricsUrl);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('taskgate_requests_total');
    // That address serves nothing else: no API, no dashboard.
    const other = await fetch(metricsUrl.replace('/metrics', '/v1/models'));
    expect(other.status).toBe(404);
    expect(other.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('exposes the same counts to Prometheus at /metrics', async () => {
    const response = await fetch(`${taskgate.origin}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    const sample = (name: string, labels: string) => {
      const line = text
        .split('\n')
        .find((entry) => entry.startsWith(`${name}{`) && labels.split(',').every((label) => entry.includes(label)));
      return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
    };
    const traces = (await taskgate.traces()).filter((trace) => trace.workload === 'summarise');
    const okOnModelZero = traces.filter((trace) => trace.servedModel === 'model-0' && trace.status === 'ok').length;
    expect(sample('taskgate_requests_total', 'workload="summarise",model="model-0",environment="production",status="ok"')).toBe(
      okOnModelZero,
    );
    expect(sample('taskgate_errors_total', 'workload="summarise",model="model-0",error_class="engine_error"')).toBe(3);
    expect(sample('taskgate_request_duration_seconds_count', 'workload="summarise",model="model-1"')).toBe(
      traces.filter((trace) => trace.servedModel === 'model-1' && trace.status === 'ok').length,
    );
    expect(sample('taskgate_trace_writer_written_total', '')).toBeUndefined(); // an unlabelled sample has no braces
    expect(text).toMatch(/^taskgate_trace_writer_written_total \d+$/m);
    expect(text).toMatch(/^taskgate_engine_in_flight_requests\{engine="engine-0",model="model-0"\} 0$/m);
  });

  it('keeps bodies as each project says, and prunes old bodies, then old calls, while their rollups stay', async () => {
    const put = async (project: string, body: unknown) =>
      fetch(`${taskgate.baseUrl}/projects/${project}/retention`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    await taskgate.postChat(
      { model: 'model-0', messages: [{ role: 'user', content: 'secret' }] },
      { headers: { 'x-taskgate-project': 'quiet' } },
    );
    expect((await put('quiet', { bodies: 'none' })).status).toBe(200);
    expect((await put('quiet', { bodies: 'some' })).status).toBe(400);
    const response = await taskgate.postChat(
      { model: 'model-0', messages: [{ role: 'user', content: 'secret' }] },
      { headers: { 'x-taskgate-project': 'quiet' } },
    );
    const quiet = await taskgate.traceOf(response.headers.get('x-request-id'));
    expect(quiet).toMatchObject({ project: 'quiet', requestBody: null, replyBody: null });
    expect((await get('/projects/shop/retention')).body).toMatchObject({ default: true, bodies: 'all', traces_ttl_days: null });

    // Calls of 40, 10 and 1 days ago, with bodies.
    const account = await taskgate.gateway.store.accounts.ensureAccount('default');
    const [template] = await taskgate.traces();
    const day = 86_400_000;
    const old = [40, 10, 1].flatMap((daysAgo) =>
      Array.from({ length: 5 }, (_, index) => ({
        ...template!,
        requestId: `req_old_${daysAgo}_${index}`,
        accountId: account.id,
        project: 'archive',
        workload: 'main',
        startedAt: Date.now() - daysAgo * day,
        requestBody: '{}',
        replyBody: '{}',
      })),
    );
    await taskgate.gateway.store.projects.ensureScope({ accountId: account.id, project: 'archive', workload: 'main' });
    await taskgate.gateway.store.traces.insertBatch(old);
    expect((await put('archive', { bodies: 'all', bodies_ttl_days: 7, traces_ttl_days: 30 })).status).toBe(200);
    const before = (await get('/projects/archive/workloads/main?since=60d')).body.stats as { calls: number };
    expect(await taskgate.gateway.retention.pruneNow()).toEqual({ bodies: 5, traces: 5 });
    const left = (await taskgate.gateway.store.traces.list(account.id, { project: 'archive' }, { limit: 100 })).items;
    expect(left.map((trace) => trace.requestId).sort()).toEqual(
      old
        .slice(5)
        .map((trace) => trace.requestId)
        .sort(),
    );
    expect(
      left
        .filter((trace) => trace.requestBody !== null)
        .map((trace) => trace.requestId)
        .sort(),
    ).toEqual(
      old
        .slice(10)
        .map((trace) => trace.requestId)
        .sort(),
    );
    expect(((await get('/projects/archive/workloads/main?since=60d')).body.stats as { calls: number }).calls).toBe(before.calls);
    expect(before.calls).toBe(15);
  });

  it('gives every trace its upstream attempts: the list stored when there were several, else the one its replica made, else none', async () => {
    const account = await taskgate.gateway.store.accounts.ensureAccount('default');
    const [template] = await taskgate.traces();
    await taskgate.gateway.store.projects.ensureScope({ accountId: account.id, project: 'retried', workload: 'main' });
    const at = Date.now();
    const base = {
      ...template!,
      accountId: account.id,
      project: 'retried',
      workload: 'main',
      status: 'ok' as const,
      errorClass: null,
      errorMessage: null,
      httpStatus: 200,
      attempts: null,
    };
    const tried = [
      { replica: 'engine-0', outcome: 'engine_connection_closed' },
      { replica: 'engine-1', outcome: 'engine_unavailable' },
      { replica: 'engine-0', outcome: 'ok' },
    ];
    await taskgate.gateway.store.traces.insertBatch([
      { ...base, requestId: 'req_tried_thrice', replica: 'engine-0', attempts: tried, startedAt: at + 3 },
      {
        ...base,
        requestId: 'req_failed_once',
        replica: 'engine-1',
        status: 'error',
        errorClass: 'engine_timeout',
        httpStatus: 504,
        startedAt: at + 2,
      },
      { ...base, requestId: 'req_served_once', replica: 'engine-1', startedAt: at + 1 },
      {
        ...base,
        requestId: 'req_never_tried',
        replica: null,
        servedModel: null,
        status: 'error',
        errorClass: 'rate_limit_exceeded',
        httpStatus: 429,
        startedAt: at,
      },
    ]);
    const expected: Record<string, unknown[]> = {
      req_tried_thrice: tried,
      req_failed_once: [{ replica: 'engine-1', outcome: 'engine_timeout' }],
      req_served_once: [{ replica: 'engine-1', outcome: 'ok' }],
      req_never_tried: [],
    };
    for (const [requestId, attempts] of Object.entries(expected)) {
      const { status, body } = await get(`/traces/${requestId}`);
      expect(status).toBe(200);
      expect(body.attempts, requestId).toEqual(attempts);
    }
    const list = (await get('/projects/retried/workloads/main/traces')).body.data as Array<{ request_id: string; attempts: unknown[] }>;
    expect(Object.fromEntries(list.map((trace) => [trace.request_id, trace.attempts]))).toEqual(expected);
  });

  it("tells each trace's route reason, and the share a split call was drawn for", async () => {
    const account = await taskgate.gateway.store.accounts.ensureAccount('default');
    const [template] = await taskgate.traces();
    await taskgate.gateway.store.projects.ensureScope({ accountId: account.id, project: 'routed', workload: 'main' });
    const at = Date.now();
    const base = {
      ...template!,
      accountId: account.id,
      project: 'routed',
      workload: 'main',
      status: 'ok' as const,
      errorClass: null,
      errorMessage: null,
      httpStatus: 200,
    };
    await taskgate.gateway.store.traces.insertBatch([
      { ...base, requestId: 'req_drawn', servedModel: 'model-0', routeReason: 'split', routeShare: 0.375, startedAt: at + 2 },
      { ...base, requestId: 'req_routed', servedModel: 'model-0', routeReason: 'routed', routeShare: null, startedAt: at + 1 },
      {
        ...base,
        requestId: 'req_unrouted',
        servedModel: null,
        routeReason: null,
        routeShare: null,
        status: 'error',
        errorClass: 'rate_limit_exceeded',
        httpStatus: 429,
        startedAt: at,
      },
    ]);
    const expected: Record<string, [string | null, number | null]> = {
      req_drawn: ['split', 0.375],
      req_routed: ['routed', null],
      req_unrouted: [null, null],
    };
    for (const [requestId, [reason, share]] of Object.entries(expected)) {
      const { status, body } = await get(`/traces/${requestId}`);
      expect(status).toBe(200);
      expect(body, requestId).toMatchObject({ route_reason: reason, route_share: share });
    }
    const list = (await get('/projects/routed/workloads/main/traces')).body.data as Array<{
      request_id: string;
      route_reason: string | null;
      route_share: number | null;
    }>;
    expect(Object.fromEntries(list.map((trace) => [trace.request_id, [trace.route_reason, trace.route_share]]))).toEqual(expected);
  });

  it('prints the same numbers from the command line, and tails new calls', async () => {
    const connection = ['--url', taskgate.origin, '--key', ADMIN_KEY, '--project', 'shop'];
    const one = await runTaskgateAsync(['stats', '--workload', 'summarise', ...connection]);
    expect(one.status).toBe(0);
    expect(one.stdout).toMatch(/calls 19\s+errors 3 \(15\.8%\)\s+cost \$/);
    expect(one.stdout).toContain('top failures: engine_error 3');
    expect(one.stdout).toMatch(/^model-0\s+\d+\s+\d+\.\d%/m);
    const all = await runTaskgateAsync(['stats', ...connection]);
    expect(all.stdout).toMatch(/^summarise\s+19\s+3\s+15\.8%/m);
    const json = JSON.parse((await runTaskgateAsync(['stats', '--workload', 'summarise', '--json', ...connection])).stdout) as {
      stats: { calls: number };
    };
    expect(json.stats.calls).toBe(19);

    const recent = await runTaskgateAsync(['traces', '--workload', 'summarise', '--limit', '5', ...connection]);
    expect(recent.stdout.trim().split('\n')).toHaveLength(5);
    const tail = startTaskgateCommand(['traces', '--workload', 'summarise', '--limit', '1', '--follow', ...connection]);
    for (let attempt = 0; attempt < 100 && tail.stdout() === ''; attempt++) await sleep(50);
    const fresh = await taskgate.postChat(
      { model: 'model-1', messages: [{ role: 'user', content: 'new' }] },
      { headers: { 'x-taskgate-project': 'shop', 'x-taskgate-workload': 'summarise' } },
    );
    const requestId = fresh.headers.get('x-request-id')!;
    await taskgate.traces();
    for (let attempt = 0; attempt < 100 && !tail.stdout().includes(requestId); attempt++) await sleep(50);
    tail.interrupt();
    expect(await tail.exited).toBe(0);
    expect(tail.stdout()).toMatch(new RegExp(`${requestId}\\s+200\\s+model-1`));
  });

  it('shows another account nothing: 404, as if the project did not exist', async () => {
    const stranger = await taskgate.createKey({ account: 'globex' });
    expect((await get('/projects/shop/workloads/summarise', stranger.text)).status).toBe(404);
    expect((await get('/projects/shop/workloads/summarise/failures', stranger.text)).status).toBe(404);
    expect((await get('/projects/shop/workloads', stranger.text)).status).toBe(404);
  });
});
