/**
 * Measured cost end to end: engines with a `cost_per_hour`, calls priced by
 * their share of the engine's busy time, stored with each trace, shown beside
 * the catalog cost in the API and the CLI, and, with `routing.cost: measured`,
 * the order the router ranks candidates in.
 *
 * Orderings hold by construction, not by timing luck: two engines of the same
 * speed whose prices differ a hundredfold, and models whose measured and
 * catalog orders are made to disagree by a thousandfold.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatUsd } from '../src/dashboard/format.js';
import { startArithmeticEngine, type ArithmeticEngine } from './helpers/arithmetic-engine.js';
import { startScriptedEngine, type Behaviour, type ScriptedEngine } from './helpers/scripted-engine.js';
import { runTaskgateAsync } from './helpers/taskgate-process.js';
import { ADMIN_KEY, startTestGateway, type TestGateway } from './helpers/test-gateway.js';
import { total } from './helpers/prometheus-samples.js';

const scoped = { 'x-taskgate-project': 'shop', 'x-taskgate-workload': 'summarise' };

describe('measured cost of own engines', () => {
  let cheapEngine: ScriptedEngine;
  let dearEngine: ScriptedEngine;
  let taskgate: TestGateway;

  beforeAll(async () => {
    [cheapEngine, dearEngine] = await Promise.all([startScriptedEngine(), startScriptedEngine()]);
    // Same speed, prices a hundredfold apart.
    for (const engine of [cheapEngine, dearEngine]) engine.script({ kind: 'reply', content: 'ok', delayMs: 40 });
    taskgate = await startTestGateway(`engines:
  - { id: cheap-gpu, type: openai, base_url: "${cheapEngine.baseUrl}", cost_per_hour: 1 }
  - { id: dear-gpu, type: openai, base_url: "${dearEngine.baseUrl}", cost_per_hour: 100 }
models:
  - id: model-0
    served_by: [{ engine: cheap-gpu, name: upstream }, { engine: dear-gpu, name: upstream }]
    price: { input: 1, output: 2 }
    context_window: 8192
  - id: solo
    served_by: [{ engine: cheap-gpu, name: upstream }]
    price: { input: 1, output: 2 }
    context_window: 8192
`);
  });
  afterAll(async () => {
    await taskgate?.stop();
    await Promise.all([cheapEngine?.close(), dearEngine?.close()]);
  });

  async function call(model = 'model-0'): Promise<string> {
    const response = await taskgate.postChat({ model, messages: [{ role: 'user', content: 'Hi' }] }, { headers: scoped });
    expect(response.status).toBe(200);
    await response.text();
    return response.headers.get('x-request-id') ?? '';
  }

  it("prices each call by its engine time at its engine's cost_per_hour: the dearer engine's calls cost more", async () => {
    // One at a time: the pool takes turns between the two idle replicas.
    const ids: string[] = [];
    for (let index = 0; index < 6; index++) ids.push(await call());
    const traces = await Promise.all(ids.map((id) => taskgate.traceOf(id)));
    const on = (replica: string) => traces.filter((trace) => trace?.replica === replica);
    expect(on('cheap-gpu').length).toBe(3);
    expect(on('dear-gpu').length).toBe(3);
    for (const trace of traces) {
      const costPerHour = trace!.replica === 'dear-gpu' ? 100 : 1;
      // Alone on its engine, a call's share is its whole time there: at least the engine's delay, at most the call.
      expect(trace!.engineSeconds).toBeGreaterThanOrEqual(0.035);
      expect(trace!.engineSeconds!).toBeLessThanOrEqual(trace!.latencyMs / 1000);
      expect(trace!.measuredCostUsd).toBeCloseTo((trace!.engineSeconds! * costPerHour) / 3600, 12);
    }
    const dearest = Math.max(...on('cheap-gpu').map((trace) => trace!.measuredCostUsd!));
    for (const trace of on('dear-gpu')) expect(trace!.measuredCostUsd!).toBeGreaterThan(dearest);
  });

  it('meters a stream until its last chunk, not its first', async () => {
    const stream: Behaviour = { kind: 'stream', pieces: ['a', 'b', 'c', 'd'], gapMs: 50 };
    cheapEngine.scriptNext(stream);
    dearEngine.scriptNext(stream);
    const response = await taskgate.postChat(
      { model: 'model-0', stream: true, messages: [{ role: 'user', content: 'Hi' }] },
      { headers: scoped },
    );
    expect(response.status).toBe(200);
    await response.text();
    const trace = await taskgate.traceOf(response.headers.get('x-request-id'));
    // Four pieces 50 ms apart: the engine worked at least 150 ms after its first chunk.
    expect(trace!.engineSeconds!).toBeGreaterThanOrEqual(0.14);
    expect(trace!.engineSeconds!).toBeLessThanOrEqual(trace!.latencyMs / 1000);
    expect(trace!.measuredCostUsd).toBeCloseTo((trace!.engineSeconds! * (trace!.replica === 'dear-gpu' ? 100 : 1)) / 3600, 12);
  });

  it("divides an engine's time between the calls it serves at once", async () => {
    // Two calls of 300 ms on one engine, started together: each is charged about half its time.
    cheapEngine.scriptNext({ kind: 'reply', content: 'ok', delayMs: 300 }, { kind: 'reply', content: 'ok', delayMs: 300 });
    const ids = await Promise.all([call('solo'), call('solo')]);
    for (const id of ids) {
      const trace = await taskgate.traceOf(id);
      expect(trace!.engineSeconds!).toBeGreaterThan(0.1);
      expect(trace!.engineSeconds!).toBeLessThan(0.75 * (trace!.latencyMs / 1000));
    }
  });

  it('shows the measured cost beside the catalog cost in the workload API and the CLI', async () => {
    const traces = (await taskgate.traces()).filter((trace) => trace.workload === 'summarise');
    const measuredTotal = traces.reduce((sum, trace) => sum + (trace.measuredCostUsd ?? 0), 0);
    const response = await fetch(`${taskgate.baseUrl}/projects/shop/workloads/summarise`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(response.status).toBe(200);
    type View = {
      calls: number;
      cost_usd: number;
      cost_per_call_usd: number;
      cost_per_million_tokens_usd: number;
      measured: { calls: number; cost_usd: number; cost_per_call_usd: number; cost_per_million_tokens_usd: number } | null;
    };
    const view = (await response.json()) as { stats: View; models: Array<View & { model: string }> };
    expect(view.stats.calls).toBe(traces.length);
    expect(view.stats.measured).not.toBeNull();
    expect(view.stats.measured!.calls).toBe(traces.length);
    expect(view.stats.measured!.cost_usd).toBeCloseTo(measuredTotal, 12);
    expect(view.stats.measured!.cost_per_call_usd).toBeCloseTo(measuredTotal / traces.length, 12);
    expect(view.stats.cost_usd).toBeCloseTo(
      traces.reduce((sum, trace) => sum + trace.costUsd, 0),
      12,
    );
    expect(view.stats.cost_per_call_usd).toBeCloseTo(view.stats.cost_usd / traces.length, 12);
    const tokens = traces.reduce((sum, trace) => sum + trace.promptTokens + trace.completionTokens, 0);
    expect(view.stats.measured!.cost_per_million_tokens_usd).toBeCloseTo((measuredTotal / tokens) * 1e6, 6);
    expect(view.models.map((model) => model.model).sort()).toEqual(['model-0', 'solo']);
    for (const model of view.models) expect(model.measured?.calls).toBe(model.calls);

    const cli = await runTaskgateAsync([
      'stats',
      '--project',
      'shop',
      '--workload',
      'summarise',
      '--url',
      taskgate.origin,
      '--key',
      ADMIN_KEY,
    ]);
    expect(cli.status).toBe(0);
    expect(cli.stdout).toMatch(
      new RegExp(
        `cost \\$\\d+\\.\\d{4} \\(measured \\$\\d+\\.\\d{4} over ${traces.length} calls, \\$\\d+\\.\\d{6} a call; catalog \\$\\d+\\.\\d{6}\\)`,
      ),
    );
    const lines = cli.stdout.split('\n');
    const header = lines.findIndex((line) => /^MODEL\s+CALLS\s+ERROR RATE\s+COST \$\s+\$\/1M CATALOG\s+\$\/1M MEASURED/.test(line));
    expect(header).toBeGreaterThan(-1);
    expect(lines[header + 1]).toMatch(/^(model-0|solo)\s+\d+\s+0\.0%\s+\d+\.\d{4}\s+\d+\.\d{4}\s+\d+\.\d{4}\s/);
  });

  it("exports the measured cost and each engine's busy time, utilisation and price in /metrics", async () => {
    const traces = (await taskgate.traces()).filter((trace) => trace.measuredCostUsd !== null);
    const response = await fetch(`${taskgate.origin}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(response.status).toBe(200);
    const text = await response.text();
    const onEngine = (engine: string) => (labels: Record<string, string>) => labels.engine === engine;
    expect(total(text, 'taskgate_measured_cost_usd_total')).toBeCloseTo(
      traces.reduce((sum, trace) => sum + (trace.measuredCostUsd ?? 0), 0),
      9,
    );
    expect(total(text, 'taskgate_engine_cost_per_hour_usd', onEngine('dear-gpu'))).toBe(100);
    expect(total(text, 'taskgate_engine_cost_per_hour_usd', onEngine('cheap-gpu'))).toBe(1);
    const dearBusy = total(text, 'taskgate_engine_busy_seconds_total', onEngine('dear-gpu'));
    // Busy time is time with anything in flight: at least any one call's share of the engine.
    const largestShare = Math.max(...traces.filter((trace) => trace.replica === 'dear-gpu').map((trace) => trace.engineSeconds ?? 0));
    expect(largestShare).toBeGreaterThan(0);
    expect(dearBusy).toBeGreaterThanOrEqual(largestShare - 1e-6);
    const utilisation = total(text, 'taskgate_engine_utilisation', onEngine('dear-gpu'));
    expect(utilisation).toBeGreaterThan(0);
    expect(utilisation).toBeLessThanOrEqual(1);
  });

  it("shows the measured cost on the dashboard's workload page, and each engine's utilisation and price on the overview", async () => {
    const login = await fetch(`${taskgate.origin}/dashboard/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: taskgate.origin },
      body: new URLSearchParams({ key: ADMIN_KEY }).toString(),
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const page = async (path: string) => (await fetch(`${taskgate.origin}${path}`, { headers: { cookie } })).text();
    const traces = (await taskgate.traces()).filter((trace) => trace.workload === 'summarise');
    const measuredTotal = traces.reduce((sum, trace) => sum + (trace.measuredCostUsd ?? 0), 0);
    const workload = await page('/dashboard/projects/shop/workloads/summarise');
    expect(workload).toContain(`data-field="measured-cost">${formatUsd(measuredTotal)}<`);
    const overview = await page('/dashboard');
    for (const [engine, price] of [
      ['cheap-gpu', '$1.00'],
      ['dear-gpu', '$100.00'],
    ] as const) {
      const row = new RegExp(`<tr data-engine="${engine}">([\\s\\S]*?)</tr>`).exec(overview)?.[1] ?? '';
      expect(row).toContain(`data-field="cost-per-hour">${price}<`);
      // Both engines have served calls within the last five minutes.
      expect(Number(/data-field="utilisation">([\d.]+)%</.exec(row)?.[1] ?? 0)).toBeGreaterThan(0);
    }
  });
});

describe('routing by measured cost', () => {
  // cheap is cheaper than pricey in the catalog, but its engine costs a thousand times more an hour and it is slower.
  const prices = { big: 10, pricey: 3, cheap: 1 };
  let engine: ArithmeticEngine;
  const gateways: TestGateway[] = [];
  let question = 0;

  beforeAll(async () => {
    engine = await startArithmeticEngine({ big: 1, pricey: 1, cheap: 1 }, 3, { delayMs: { big: 20, cheap: 20 } });
  });
  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.stop()));
    await engine?.close();
  });

  async function gatewayRankingBy(cost: 'catalog' | 'measured'): Promise<TestGateway> {
    const gateway = await startTestGateway(`engines:
  - { id: frugal, type: openai, base_url: "${engine.baseUrl}", cost_per_hour: 0.36 }
  - { id: lavish, type: openai, base_url: "${engine.baseUrl}", cost_per_hour: 360 }
  - { id: huge, type: openai, base_url: "${engine.baseUrl}", cost_per_hour: 3600 }
models:
  - { id: big, served_by: [{ engine: huge, name: big }], price: { input: ${prices.big}, output: ${prices.big} }, context_window: 8192 }
  - { id: pricey, served_by: [{ engine: frugal, name: pricey }], price: { input: ${prices.pricey}, output: ${prices.pricey} }, context_window: 8192 }
  - { id: cheap, served_by: [{ engine: lavish, name: cheap }], price: { input: ${prices.cheap}, output: ${prices.cheap} }, context_window: 8192 }
routing: { cost: ${cost} }
limits: { requests_per_minute: 1000000 }
`);
    gateways.push(gateway);
    return gateway;
  }

  async function ask(gateway: TestGateway, model: string, workload: string): Promise<string> {
    question++;
    const response = await gateway.postChat(
      { model, messages: [{ role: 'user', content: `What is ${question % 97} + ${(question * 7) % 89}? Answer with the number only.` }] },
      { headers: { 'x-taskgate-workload': workload } },
    );
    expect(response.status).toBe(200);
    return ((await response.json()) as { model: string }).model;
  }

  /** Warms each model's measured cost with direct calls, asks the router to route `big`, and calls until it does: the model that then serves. */
  async function routedModel(gateway: TestGateway): Promise<string> {
    for (let call = 0; call < 3; call++) for (const model of ['cheap', 'pricey', 'big']) await ask(gateway, model, 'warm-up');
    const put = await fetch(`${gateway.baseUrl}/projects/default/workloads/answers/eval`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ pass_rate: 0.8, sample_rate: 1, min_samples: 10 }),
    });
    expect(put.status).toBe(200);
    for (let call = 0; call < 600; call++) {
      const served = await ask(gateway, 'big', 'answers');
      if (served !== 'big') return served;
      if (call % 10 === 9) await gateway.gateway.router.idle();
    }
    return 'big';
  }

  it('ranks by catalog price by default, and by measured cost with routing.cost: measured, counting savings and eval spend at that cost', async () => {
    const [byCatalog, byMeasured] = await Promise.all([gatewayRankingBy('catalog'), gatewayRankingBy('measured')]);
    const [catalogChoice, measuredChoice] = await Promise.all([routedModel(byCatalog), routedModel(byMeasured)]);
    expect(catalogChoice).toBe('cheap');
    // pricey costs 3× cheap in the catalog, and a thousandth of it an hour on an engine at least as fast.
    expect(measuredChoice).toBe('pricey');
    const warmUp = (await byMeasured.traces()).filter((trace) => trace.workload === 'warm-up');
    const measuredOf = (model: string) =>
      Math.max(...warmUp.filter((trace) => trace.servedModel === model).map((trace) => trace.measuredCostUsd!));
    expect(measuredOf('pricey')).toBeLessThan(
      Math.min(...warmUp.filter((trace) => trace.servedModel === 'cheap').map((trace) => trace.measuredCostUsd!)),
    );
    expect(measuredOf('cheap')).toBeGreaterThan(0);

    // What routing saved is counted in the same money it ranked by: big runs on an engine ten thousand
    // times dearer an hour than pricey's, so each routed call saves far more than the catalog's 10 vs 3.
    for (let call = 0; call < 5; call++) expect(await ask(byMeasured, 'big', 'answers')).toBe('pricey');
    const routed = (await byMeasured.traces()).filter((trace) => trace.workload === 'answers' && trace.servedModel === 'pricey');
    const catalogSavings = routed.reduce(
      (sum, trace) => sum + ((trace.promptTokens + trace.completionTokens) * (prices.big - prices.pricey)) / 1_000_000,
      0,
    );
    const view = await fetch(`${byMeasured.baseUrl}/projects/default/workloads/answers/routes`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(view.status).toBe(200);
    type Candidate = { model: string; cost_per_call_usd: number };
    const route = (
      (await view.json()) as { routes: Array<{ requested_model: string; savings_usd: number; candidates: Candidate[] }> }
    ).routes.find((entry) => entry.requested_model === 'big');
    expect(route?.savings_usd).toBeGreaterThan(10 * catalogSavings);
    // And so is what evaluating cost: a replay's cost (the evidence's cost per call, the eval spend) is its engine time.
    const tokensPerCall = routed.reduce((sum, trace) => sum + trace.promptTokens + trace.completionTokens, 0) / routed.length;
    const costPerCall = (model: string) => route?.candidates.find((candidate) => candidate.model === model)?.cost_per_call_usd;
    expect(costPerCall('cheap')).toBeGreaterThan((10 * tokensPerCall * prices.cheap) / 1_000_000);
    expect(costPerCall('pricey')).toBeLessThan((tokensPerCall * prices.pricey) / 1_000_000 / 2);
  });
});
