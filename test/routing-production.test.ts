/**
 * The router under what production throws at it, end to end: the real server,
 * calls made with the stock `openai` client, and a simulated engine whose
 * models answer sums with known accuracies (and, when a test asks, are slow,
 * down, wordy, or judges). Each test starts its own engine and gateway.
 *
 * The tests of exploration's economics simulate a low-traffic workload (a
 * call every few minutes): they fake the clock (`Date` only; timers and
 * `performance.now` stay real), since the router sizes its exploration by
 * calls per day, and a test's calls in quick succession would look like
 * hundreds of thousands a day.
 */
import type OpenAI from 'openai';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_ROUTER_SETTINGS } from '../src/routing/router-context.js';
import { startArithmeticEngine, type ArithmeticEngine, type ArithmeticEngineOptions } from './helpers/arithmetic-engine.js';
import { ADMIN_KEY, startTestGateway, type TestGateway } from './helpers/test-gateway.js';

interface Candidate {
  model: string;
  state: string;
  reason: string | null;
  evaluated: number;
  passed: number;
  errors: number;
  latency_ms: number | null;
}

interface Route {
  requested_model: string;
  served_model: string;
  router_choice: string;
  split: { shares: Array<{ model: string; share: number }> } | null;
  certificate: { model: string } | null;
  candidates: Candidate[];
  latency: { requested_model_ms: number | null; limit_ms: number | null };
  savings_usd: number;
  eval_spend_usd: number;
  net_savings_usd: number;
  exploration: { sample_rate: number | null; auto: boolean; exploring: string[] };
  dropped_samples: number;
}

interface RoutesView {
  eval_spend_today_usd: number;
  daily_budget_usd: number;
  judges: Array<{ model: string; self_checks: number }>;
  routes: Route[];
  history: Array<{ from_model: string; to_model: string; reason: string; detail: string | null }>;
}

interface Scenario {
  engine: ArithmeticEngine;
  taskgate: TestGateway;
  /** One production call of `workload` asking `model` for a sum; the model that served it and the call's request id. */
  ask(workload: string, model?: string): Promise<{ model: string; requestId: string }>;
  /** Calls until `done` says so or `limit` calls were made, the router working between batches; every served model, in order. */
  askUntil(workload: string, done: (model: string) => boolean, limit: number): Promise<string[]>;
  management(method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }>;
  putEval(workload: string, contract: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** The routes view of a workload, after the router and the trace writer are done. */
  routes(workload: string): Promise<RoutesView>;
  /** The route of `big` in that view. */
  route(workload: string): Promise<Route>;
  idle(): Promise<void>;
}

interface ModelSpec {
  price: number;
  accuracy: number;
}

const running: Array<{ stop(): Promise<void> }> = [];
let question = 0;

afterEach(async () => {
  for (const part of running.splice(0).reverse()) await part.stop();
  vi.useRealTimers();
});

/** An engine serving `models` at their accuracies, and a gateway pricing them; `big` is what every workload asks for. */
async function startScenario(
  models: Record<string, ModelSpec>,
  options: ArithmeticEngineOptions & { seed?: number; extraConfig?: { engines: string; models: string } } = {},
): Promise<Scenario> {
  const accuracies = Object.fromEntries(Object.entries(models).map(([id, spec]) => [id, spec.accuracy]));
  const engine = await startArithmeticEngine(accuracies, options.seed ?? 11, options);
  running.push({ stop: () => engine.close() });
  const modelLines = Object.entries(models)
    .map(
      ([id, spec]) =>
        `  - { id: ${id}, served_by: [{ engine: arithmetic, name: ${id} }], price: { input: ${spec.price}, output: ${spec.price} }, context_window: 8192 }`,
    )
    .join('\n');
  // Thousands of calls a minute: above the default key rate.
  const taskgate = await startTestGateway(
    `engines:\n  - { id: arithmetic, type: openai, base_url: "${engine.baseUrl}" }\n${options.extraConfig?.engines ?? ''}models:\n${modelLines}\n${options.extraConfig?.models ?? ''}limits: { requests_per_minute: 1000000 }\n`,
  );
  running.push(taskgate);
  const client: OpenAI = taskgate.client();

  async function ask(workload: string, model = 'big') {
    question++;
    const { data, response } = await client.chat.completions
      .create(
        { model, messages: [{ role: 'user', content: `What is ${question % 97} + ${(question * 7) % 89}? Answer with the number only.` }] },
        { headers: { 'x-taskgate-workload': workload } },
      )
      .withResponse();
    return { model: data.model, requestId: response.headers.get('x-request-id') ?? '' };
  }

  async function management(method: string, path: string, body?: unknown) {
    const response = await fetch(`${taskgate.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  }

  async function routes(workload: string): Promise<RoutesView> {
    await taskgate.gateway.router.idle();
    await taskgate.traces();
    const { status, json } = await management('GET', `/projects/default/workloads/${workload}/routes`);
    expect(status).toBe(200);
    return json as unknown as RoutesView;
  }

  // The default project exists from its first call: a contract can then be set before a workload's own first call.
  // The cheapest model has no candidates to replay on.
  const cheapest = Object.entries(models).sort(([, left], [, right]) => left.price - right.price)[0]![0];
  await ask('setup', cheapest);

  return {
    engine,
    taskgate,
    ask,
    async askUntil(workload, done, limit) {
      const served: string[] = [];
      for (let call = 0; call < limit; call++) {
        const { model } = await ask(workload);
        served.push(model);
        if (done(model)) break;
        if (call % 10 === 9) await taskgate.gateway.router.idle();
      }
      return served;
    },
    management,
    async putEval(workload, contract) {
      const { status, json } = await management('PUT', `/projects/default/workloads/${workload}/eval`, contract);
      expect(status).toBe(200);
      return json;
    },
    routes,
    async route(workload) {
      const view = await routes(workload);
      const route = view.routes.find((entry) => entry.requested_model === 'big');
      expect(route).toBeDefined();
      return route as Route;
    },
    idle: () => taskgate.gateway.router.idle(),
  };
}

const candidateOf = (route: Route, model: string) => route.candidates.find((candidate) => candidate.model === model);

/** Certifies quickly: every call replayed, a low bar, few samples. The latency limit still needs 20 latencies of each model. */
const QUICK_CONTRACT = { sample_rate: 1, pass_rate: 0.8, min_samples: 10 };

const MINUTE_MS = 60_000;
/** The clock of a low-traffic workload: `advance` it between calls (a call every five minutes is 288 a day). */
function fakeClock(): { advance(ms: number): void } {
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
  return { advance: (ms) => vi.setSystemTime(Date.now() + ms) };
}

describe('routing in production', () => {
  it('never serves blind after the eval budget is spent: a model that degrades then leaves within the unmonitored limit', async () => {
    const scenario = await startScenario({ big: { price: 10, accuracy: 1 }, small: { price: 1, accuracy: 1 } });
    // Exploring may spend half: enough for small's ~20 replays ($0.000022 each). The rest pays for a handful of
    // reference replies of big ($0.00022 each) when small serves: too few for the rollback detector to see a drop.
    const budget = 0.002;
    await scenario.putEval('frugal', { ...QUICK_CONTRACT, daily_budget_usd: budget });
    const certified = await scenario.askUntil('frugal', (model) => model === 'small', 500);
    expect(certified.at(-1)).toBe('small');

    scenario.engine.accuracy.set('small', 0);
    const { maxUnmonitoredCalls } = DEFAULT_ROUTER_SETTINGS;
    let spentAt: number | null = null;
    let leftAt: number | null = null;
    for (let call = 1; call <= maxUnmonitoredCalls + 1_000 && leftAt === null; call++) {
      if ((await scenario.ask('frugal')).model !== 'small') leftAt = call;
      if (call % 10 === 0) await scenario.idle();
      if (spentAt === null && call % 25 === 0) {
        const view = await scenario.routes('frugal');
        if (view.eval_spend_today_usd >= view.daily_budget_usd) spentAt = call;
      }
    }
    const view = await scenario.routes('frugal');
    expect(view.daily_budget_usd).toBe(budget);
    expect(view.eval_spend_today_usd).toBeGreaterThanOrEqual(budget);
    // And no more than the replays already under way when it ran out: one reference reply of big per worker.
    expect(view.eval_spend_today_usd).toBeLessThanOrEqual(budget + (DEFAULT_ROUTER_SETTINGS.workers * 22 * 10) / 1e6);
    expect(spentAt).not.toBeNull();
    expect(leftAt).not.toBeNull();
    // Unchecked from the last check (before the budget ran out) to the fallback: at most the limit, plus the
    // calls made before the router processed the samples, and those before this loop noticed the spend.
    expect(leftAt!).toBeLessThanOrEqual(spentAt! + maxUnmonitoredCalls + 30);
    const leaving = view.history.find((change) => change.from_model === 'small');
    expect(['demoted', 'unmonitored']).toContain(leaving?.reason);
    expect(leaving?.detail).toBeTruthy();
    if (leaving?.reason === 'unmonitored') expect(leaving.detail).toMatch(/without a check.*budget/);

    const after: string[] = [];
    for (let call = 0; call < 20; call++) after.push((await scenario.ask('frugal')).model);
    expect(after).not.toContain('small');
  });

  it('counts an outage as errors, not a verdict, certifies the model once it is back, and never trips a production circuit with replays', async () => {
    const scenario = await startScenario(
      { big: { price: 10, accuracy: 1 }, small: { price: 1, accuracy: 1 } },
      {
        // The cheapest model of all cannot serve: its engine has no such file.
        extraConfig: {
          engines: '  - { id: cpu, type: llama-cpp, threads: 1 }\n',
          models:
            '  - { id: ghost, served_by: [{ engine: cpu, file: "/nonexistent/taskgate/ghost.gguf" }], price: { input: 0.1, output: 0.1 }, context_window: 8192 }\n',
        },
      },
    );
    await scenario.putEval('explore', QUICK_CONTRACT);
    scenario.engine.failing.add('small');
    // Slow failures: the router's workers replay on small at the same time, before any of them backs off.
    scenario.engine.delayMs.set('small', 200);
    const burst = await Promise.all(Array.from({ length: 12 }, () => scenario.ask('explore')));
    expect(new Set(burst.map((call) => call.model))).toEqual(new Set(['big']));
    const during = await scenario.route('explore');
    const failedReplays = scenario.engine.failures.get('small') ?? 0;
    // Only replays reached small, and more failed in a row than a production circuit takes (3).
    expect(failedReplays).toBeGreaterThanOrEqual(3);
    expect(candidateOf(during, 'small')).toMatchObject({ evaluated: 0, passed: 0, errors: failedReplays });

    scenario.engine.failing.delete('small');
    scenario.engine.delayMs.delete('small');
    // Within the circuit's cooldown (5 s): had the replays counted, small's circuit would be open and these would fail.
    for (let call = 0; call < 5; call++) expect((await scenario.ask('direct', 'small')).model).toBe('small');

    // small rests after its failed replays (5 s), then is tested again and certified.
    const served: string[] = [];
    const deadline = performance.now() + 20_000;
    while (served.at(-1) !== 'small' && performance.now() < deadline) {
      served.push(...(await scenario.askUntil('explore', (model) => model === 'small', 10)));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(served.at(-1)).toBe('small');
    expect(served).not.toContain('ghost');
    const after = await scenario.route('explore');
    expect(after.served_model).toBe('small');
    const small = candidateOf(after, 'small')!;
    expect(small.evaluated).toBeGreaterThanOrEqual(QUICK_CONTRACT.min_samples);
    expect(small.errors).toBe(failedReplays);
    // ghost was never replayed: a replay that reached its engine would have failed and been counted.
    const ghost = candidateOf(after, 'ghost');
    expect(ghost?.errors ?? 0).toBe(0);
    expect(ghost?.evaluated ?? 0).toBe(0);

    // The premise: three failed production calls do open small's circuit.
    scenario.engine.failing.add('small');
    const statuses: number[] = [];
    for (let call = 0; call < 4; call++) {
      statuses.push(
        await scenario.ask('direct', 'small').then(
          () => 200,
          (error: { status?: number }) => error.status ?? 0,
        ),
      );
    }
    expect(statuses.slice(0, 3).every((status) => status >= 500)).toBe(true);
    expect(statuses[3]).toBe(503);
  });

  it('counts feedback on a call once, whatever the number of posts, and keeps the last verdict', async () => {
    const scenario = await startScenario({ big: { price: 10, accuracy: 1 }, small: { price: 1, accuracy: 1 } });
    await scenario.putEval('rated', QUICK_CONTRACT);
    expect((await scenario.askUntil('rated', (model) => model === 'small', 500)).at(-1)).toBe('small');
    const { model, requestId } = await scenario.ask('rated');
    expect(model).toBe('small');
    const before = candidateOf(await scenario.route('rated'), 'small')!;

    const counts = async () => {
      const small = candidateOf(await scenario.route('rated'), 'small')!;
      return { evaluated: small.evaluated - before.evaluated, passed: small.passed - before.passed };
    };
    const post = async (pass: boolean) => {
      const response = await scenario.management('POST', '/feedback', { request_id: requestId, pass });
      expect(response.status).toBe(200);
      expect(response.json).toMatchObject({ request_id: requestId, model: 'small', pass, counted_as_evidence: true });
    };
    await post(true);
    expect(await counts()).toEqual({ evaluated: 1, passed: 1 });
    await post(true);
    expect(await counts()).toEqual({ evaluated: 1, passed: 1 });
    await post(false);
    expect(await counts()).toEqual({ evaluated: 1, passed: 0 });
  });

  it('counts a feedback flipped after the evidence started again as a new one, and the routes view still answers', async () => {
    const scenario = await startScenario({ big: { price: 10, accuracy: 1 }, small: { price: 1, accuracy: 1 } });
    await scenario.putEval('flip', QUICK_CONTRACT);
    expect((await scenario.askUntil('flip', (model) => model === 'small', 500)).at(-1)).toBe('small');
    const { requestId } = await scenario.ask('flip');
    await scenario.taskgate.traces();
    expect((await scenario.management('POST', '/feedback', { request_id: requestId, pass: true })).status).toBe(200);
    // New checks: evidence starts again, and no longer holds that first verdict.
    await scenario.putEval('flip', { ...QUICK_CONTRACT, checks: [{ type: 'regex', pattern: '^\\d+$' }] });
    expect((await scenario.management('POST', '/feedback', { request_id: requestId, pass: false })).status).toBe(200);
    const small = candidateOf(await scenario.route('flip'), 'small');
    expect(small).toMatchObject({ evaluated: 1, passed: 0 });
  });

  it("samples at a fixed sample_rate even when a route's calls are far apart", async () => {
    const clock = fakeClock();
    const scenario = await startScenario({ big: { price: 10, accuracy: 1 }, small: { price: 1, accuracy: 1 } });
    await scenario.putEval('fixed', { sample_rate: 0.2, pass_rate: 0.8, min_samples: 100 });
    for (let call = 0; call < 60; call++) {
      await scenario.ask('fixed');
      await scenario.idle();
      clock.advance(11 * MINUTE_MS);
    }
    const replays = scenario.engine.calls.get('small') ?? 0;
    expect(replays).toBeGreaterThan(2);
    expect(replays).toBeLessThan(30);
  });

  it('never routes to a model far slower than the requested one, and does route to one as fast', async () => {
    const scenario = await startScenario(
      { big: { price: 10, accuracy: 1 }, quick: { price: 1, accuracy: 1 }, slow: { price: 0.1, accuracy: 1 } },
      { delayMs: { slow: 400 } },
    );
    await scenario.putEval('latency', QUICK_CONTRACT);
    const served = await scenario.askUntil('latency', (model) => model !== 'big', 400);
    expect(served.at(-1)).toBe('quick');
    for (let call = 0; call < 10; call++) served.push((await scenario.ask('latency')).model);
    expect(served).not.toContain('slow');

    const route = await scenario.route('latency');
    expect(route.served_model).toBe('quick');
    const slow = candidateOf(route, 'slow')!;
    // Always right, the cheapest, and out: latency is part of passing.
    expect(slow.passed).toBe(slow.evaluated);
    expect(slow.state).toBe('eliminated');
    expect(slow.reason).toMatch(/latency.*(too slow|over the limit)/);
    expect(route.latency.limit_ms).not.toBeNull();
    expect(slow.latency_ms!).toBeGreaterThan(route.latency.limit_ms!);
    expect(candidateOf(route, 'quick')?.state).toBe('certified');
  });

  it('explores a low-traffic workload until a cheaper model is certified, and its savings pay for the tests', async () => {
    const clock = fakeClock();
    const scenario = await startScenario({ big: { price: 10, accuracy: 1 }, cheap: { price: 1, accuracy: 1 } });
    // A call every two minutes (720 a day): within the plan's lifetime (10 minutes), so the sampling is the plan's.
    // The default contract (quality_bar 0.95) first sends a share of the calls, then the whole workload once cheap is shown as good.
    const served: string[] = [];
    const choice = async () => (await scenario.routes('steady')).routes.find((route) => route.requested_model === 'big')?.router_choice;
    while ((await choice()) !== 'cheap' && served.length < 800) {
      served.push((await scenario.ask('steady')).model);
      await scenario.idle();
      clock.advance(2 * MINUTE_MS);
    }
    expect(await choice()).toBe('cheap');
    // The calls the requested model serves are sampled until then (about 300 replies that agree, a fifth of them graded,
    // bound the requested model's quality and the candidate's difference tightly enough); cheap served a growing share on the way.
    expect(served.length).toBeLessThan(600);
    expect(served.filter((model) => model === 'cheap').length).toBeGreaterThan(served.length / 3);

    for (let call = 0; call < 50; call++) {
      expect((await scenario.ask('steady')).model).toBe('cheap');
      await scenario.idle();
      clock.advance(2 * MINUTE_MS);
    }
    const route = await scenario.route('steady');
    expect(route.exploration.auto).toBe(true);
    expect(typeof route.exploration.sample_rate).toBe('number');
    expect(route.eval_spend_usd).toBeGreaterThan(0);
    expect(route.net_savings_usd).toBeGreaterThan(0);
    expect(route.net_savings_usd).toBeCloseTo(route.savings_usd - route.eval_spend_usd, 12);
  });

  it('does not pay to test a candidate that would save almost nothing on a low-traffic workload', async () => {
    const clock = fakeClock();
    const scenario = await startScenario({ big: { price: 10, accuracy: 1 }, near: { price: 9.9, accuracy: 1 } });
    const callsOfNear = () => scenario.engine.calls.get('near') ?? 0;
    const nearBefore = callsOfNear();
    for (let call = 0; call < 100; call++) {
      expect((await scenario.ask('thrifty')).model).toBe('big');
      await scenario.idle();
      clock.advance(5 * MINUTE_MS);
    }
    const route = await scenario.route('thrifty');
    expect(route.exploration.exploring).toEqual([]);
    expect(route.exploration.sample_rate).toBe(0);
    // A replay of near costs $0.0002178 (22 tokens at $9.9 per million). At most one call is replayed (a new route's
    // plan is made again on its next call, traffic-meter.ts). Testing near to a verdict would take hundreds.
    expect(callsOfNear() - nearBefore).toBeLessThanOrEqual(1);
    expect(route.eval_spend_usd).toBeLessThan(0.0003);
    const near = candidateOf(route, 'near');
    expect(near?.state).toBe('paused');
  });

  it('routes to a model that answers in other words but right, through a pairwise judge, and at most a sliver to one right half the time', async () => {
    const clock = fakeClock();
    const scenario = await startScenario(
      {
        big: { price: 10, accuracy: 1 },
        good: { price: 1, accuracy: 1 },
        coin: { price: 0.5, accuracy: 0.5 },
        judge: { price: 20, accuracy: 1 },
      },
      { prose: true, judges: { judge: 0.95 } },
    );
    const routeOf = async () => (await scenario.routes('prose')).routes.find((route) => route.requested_model === 'big');
    const shareOf = (route: Route | undefined, model: string) =>
      route?.router_choice === model ? 1 : (route?.split?.shares.find((entry) => entry.model === model)?.share ?? 0);
    const served: string[] = [];
    while ((served.length % 20 !== 0 || shareOf(await routeOf(), 'good') < 0.5) && served.length < 1_500) {
      served.push((await scenario.ask('prose')).model);
      await scenario.idle();
      clock.advance(5 * MINUTE_MS);
    }
    // Good answers as well as big, in other words: it takes most of the calls (all of them once the tests pay for it).
    const route = await routeOf();
    expect(shareOf(route, 'good')).toBeGreaterThanOrEqual(0.5);
    expect(served.filter((model) => model === 'good').length).toBeGreaterThan(0);
    // Coin, right half the time, gets at most the share the bar allows beside good (0.05 × big's quality / coin's drop of 0.5: 10%).
    expect(shareOf(route, 'coin')).toBeLessThanOrEqual(0.1);
    expect(served.filter((model) => model === 'coin').length).toBeLessThanOrEqual(0.1 * served.length);
    // Replies in other words than the reference's went to the judge.
    expect(scenario.engine.calls.get('judge') ?? 0).toBeGreaterThan(0);
    expect(candidateOf(route!, 'good')?.state).toBe('certified');
    expect(candidateOf(route!, 'coin')!.passed).toBeLessThan(candidateOf(route!, 'coin')!.evaluated);
    expect((await scenario.routes('prose')).judges.map((judge) => judge.model)).toContain('judge');
  }, 120_000);

  it('measures a cheaper judge against the strongest one, and hands it the verdicts only if they agree', async () => {
    const judgesAfter = async (thriftyAccuracy: number) => {
      const clock = fakeClock();
      const scenario = await startScenario(
        {
          big: { price: 10, accuracy: 1 },
          good: { price: 1, accuracy: 0.9 },
          judge: { price: 20, accuracy: 1 },
          thrifty: { price: 0.1, accuracy: 1 },
        },
        { prose: true, judges: { judge: 1, thrifty: thriftyAccuracy } },
      );
      // Judges are not candidates here: only good may serve.
      await scenario.putEval('measured', { candidates: ['good'] });
      const judges = async () => (await scenario.routes('measured')).judges.map((entry) => entry.model);
      for (let call = 1; call <= 1_500 && (call % 100 !== 0 || !(await judges()).includes('thrifty')); call++) {
        await scenario.ask('measured');
        await scenario.idle();
        clock.advance(MINUTE_MS);
      }
      return { judges: await judges(), thriftyCalls: scenario.engine.calls.get('thrifty') ?? 0 };
    };
    // A cheap judge that agrees with the strongest one takes over the verdicts…
    const agreeing = await judgesAfter(1);
    expect(agreeing.judges).toContain('thrifty');
    // …one right a third of the time (a coin among three verdicts) is asked only while it is measured, and never judges.
    const guessing = await judgesAfter(1 / 3);
    expect(guessing.judges).not.toContain('thrifty');
    expect(guessing.thriftyCalls).toBeGreaterThan(0);
  }, 180_000);

  it('keeps the evidence through contract edits that leave the checks alone, and starts it again when they change', async () => {
    const scenario = await startScenario({ big: { price: 10, accuracy: 1 }, small: { price: 1, accuracy: 1 } });
    await scenario.putEval('edited', QUICK_CONTRACT);
    expect((await scenario.askUntil('edited', (model) => model === 'small', 500)).at(-1)).toBe('small');
    const countsOf = (route: Route) =>
      Object.fromEntries(route.candidates.map((candidate) => [candidate.model, [candidate.evaluated, candidate.passed]]));
    const certified = await scenario.route('edited');
    expect(candidateOf(certified, 'small')!.evaluated).toBeGreaterThan(0);

    const budget = await scenario.putEval('edited', { ...QUICK_CONTRACT, daily_budget_usd: 2, sample_rate: 0.5 });
    expect(budget).toMatchObject({ evidence_kept: true, contract: { daily_budget_usd: 2, sample_rate: 0.5 } });
    const kept = await scenario.route('edited');
    expect(kept.served_model).toBe('small');
    expect(countsOf(kept)).toEqual(countsOf(certified));
    expect((await scenario.ask('edited')).model).toBe('small');

    // ~20 passes in a row cannot show a 0.99 pass rate.
    const stricter = await scenario.putEval('edited', { ...QUICK_CONTRACT, daily_budget_usd: 2, sample_rate: 0.5, pass_rate: 0.99 });
    expect(stricter).toMatchObject({ evidence_kept: true });
    const decided = await scenario.routes('edited');
    const change = decided.history.find((entry) => entry.reason === 'contract_changed');
    expect(change).toMatchObject({ from_model: 'small', to_model: 'big' });
    expect(change?.detail).toContain('decided again on the same evidence');
    expect(decided.routes[0]?.served_model).toBe('big');
    expect((await scenario.ask('edited')).model).toBe('big');

    const checks = await scenario.putEval('edited', { ...QUICK_CONTRACT, checks: [{ type: 'regex', pattern: '^\\d+$' }] });
    expect(checks).toMatchObject({ evidence_kept: false });
    const fresh = await scenario.route('edited');
    expect(fresh.candidates.every((candidate) => candidate.evaluated === 0)).toBe(true);
    for (let call = 0; call < 5; call++) await scenario.ask('edited');
    const restarted = candidateOf(await scenario.route('edited'), 'small')!;
    expect(restarted.evaluated).toBeGreaterThan(0);
    expect(restarted.evaluated).toBeLessThanOrEqual(5);
  });

  it('counts the samples a burst makes it drop, in the routes view and in /metrics, and serves every call of the burst', async () => {
    const scenario = await startScenario({ big: { price: 10, accuracy: 1 }, small: { price: 1, accuracy: 1 } });
    await scenario.putEval('burst', { sample_rate: 1 });
    // Replays on small hold the router's workers while the burst fills its queue.
    scenario.engine.delayMs.set('small', 1_500);
    let next = 0;
    const served: string[] = [];
    const lane = async () => {
      while (next < 300) {
        next++;
        served.push((await scenario.ask('burst')).model);
      }
    };
    await Promise.all(Array.from({ length: 100 }, lane));
    expect(served).toHaveLength(300);
    scenario.engine.delayMs.delete('small');

    const route = await scenario.route('burst');
    expect(route.dropped_samples).toBeGreaterThan(0);
    const metrics = await fetch(`${scenario.taskgate.origin}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(metrics.status).toBe(200);
    const line = (await metrics.text())
      .split('\n')
      .find(
        (text) =>
          /^taskgate_router_samples_dropped_total\{/.test(text) && text.includes('project="default"') && text.includes('workload="burst"'),
      );
    expect(line).toBeDefined();
    expect(Number(line!.split(' ').at(-1))).toBe(route.dropped_samples);
  });
});
