import { describe, expect, it } from 'vitest';
import type { ModelPool } from '../engines/engine-pool.js';
import { parseEvalContract } from '../evals/eval-contract.js';
import { silentLogger } from '../log/logger.js';
import { createRouteTable } from '../routing/route-table.js';
import { createRouterWorker } from '../routing/router-worker.js';
import type { RouteActivity } from '../routing/route-activity.js';
import type { CandidateVerdict } from '../routing/route-decision.js';
import type { Scope } from '../api/scope.js';
import type { PairedOutcomeName, RequestedGrade, RouteRecord } from '../store/routing-store.js';
import { pricedCatalog, useMemoryStore } from '../../test/helpers/routing-fixture.js';
import { routesView } from './routes-view.js';

const NOW = 1_800_000_000_000;
const scope: Scope = { accountId: 'acct-1', project: 'shop', workload: 'answers' };
const catalog = pricedCatalog({ big: 10, small: 1, tiny: 0.1 });
const storeOf = useMemoryStore();

/** Adds one candidate's samples: each `[outcome, grade, count]` paired (a relative contract), or plain passes and failures. */
async function addSamples(
  version: number,
  model: string,
  samples: { paired?: Array<[PairedOutcomeName, RequestedGrade, number]>; passed?: number; failed?: number; costPerSample: number },
) {
  const one = (passed: boolean, paired?: { outcome: PairedOutcomeName; grade: RequestedGrade }) =>
    storeOf().routing.addEvidence(
      scope,
      'big',
      model,
      version,
      {
        evaluated: 1,
        passed: passed ? 1 : 0,
        errors: 0,
        promptTokens: 10,
        completionTokens: 1,
        costUsd: samples.costPerSample,
        latencyMsTotal: 5,
        latencyMs: 5,
        ...(paired === undefined ? {} : { paired }),
      },
      NOW,
    );
  for (const [outcome, grade, count] of samples.paired ?? [])
    for (let sample = 0; sample < count; sample++) await one(outcome !== 'loss', { outcome, grade });
  for (let sample = 0; sample < (samples.passed ?? 0); sample++) await one(true);
  for (let sample = 0; sample < (samples.failed ?? 0); sample++) await one(false);
}

function activity(verdicts: CandidateVerdict[], exploring: string[] = []): Pick<{ activity: () => RouteActivity }, 'activity'> {
  const state: RouteActivity = {
    sampleRate: 0.1,
    exploring,
    assessed: exploring,
    expectedNetUsd: 1,
    callsPerDay: 2_000,
    uncheckedCalls: 0,
    monitoringProblem: null,
    droppedSamples: 0,
    judges: [],
    verdicts,
    probation: [],
  };
  return { activity: () => state };
}

const route = (fields: Partial<RouteRecord>): RouteRecord => ({
  scope,
  requestedModel: 'big',
  servedModel: 'big',
  pinnedModel: null,
  certificate: null,
  cooldowns: {},
  fallbacks: [],
  split: null,
  updatedAt: NOW,
  ...fields,
});

describe('routes view', () => {
  it("shows a split route's phase and shares, and the candidates as the router judged and ordered them", async () => {
    // The default contract: relative, quality_bar 0.95. tiny's replays cost more than small's (a slow engine, say),
    // but the router ranks by its price per call on the workload's calls: tiny first.
    await addSamples(0, 'small', {
      paired: [
        ['same', 'right', 50],
        ['win', 'wrong', 5],
        ['loss', 'right', 3],
        ['tie', 'ungraded', 2],
      ],
      costPerSample: 0.0001,
    });
    await addSamples(0, 'tiny', {
      paired: [
        ['same', 'right', 10],
        ['loss', 'right', 2],
      ],
      costPerSample: 0.001,
    });
    const split = {
      shares: [{ model: 'small', share: 0.34, diffLower: -0.021, samples: 60 }],
      requestedLower: 0.81,
      qualityBar: 0.95,
      confidence: 0.95,
      contractVersion: 0,
      at: NOW,
    };
    await storeOf().routing.saveRoute(route({ split }), null);
    const verdicts: CandidateVerdict[] = [
      {
        model: 'tiny',
        state: 'testing',
        reason: 'fewer than 50 paired samples',
        lower: Number.NEGATIVE_INFINITY,
        upper: Number.POSITIVE_INFINITY,
        evaluated: 12,
        passed: 10,
        costPerCall: 0.0000011,
        share: 0,
      },
      {
        model: 'small',
        state: 'certified',
        lower: -0.021,
        upper: Number.POSITIVE_INFINITY,
        evaluated: 60,
        passed: 57,
        costPerCall: 0.000011,
        share: 0.34,
      },
    ];

    const view = await routesView({ store: storeOf(), catalog, router: activity(verdicts, ['tiny']), now: () => NOW }, scope);
    expect(view).toMatchObject({ semantics: 'relative', quality_bar: 0.95 });
    const [shown] = view.routes;
    expect(shown).toMatchObject({
      phase: 'split',
      semantics: 'relative',
      served_model: 'big',
      router_choice: 'big',
      split: {
        shares: [{ model: 'small', share: 0.34, lower_bound_diff: -0.021, samples: 60 }],
        requested_quality_lower: 0.81,
        quality_bar: 0.95,
        confidence: 0.95,
      },
      verdicts_from: 'router',
    });
    expect(shown?.served_share).toBeCloseTo(0.66, 12);
    expect(shown?.candidates.map((candidate) => candidate.model)).toEqual(['tiny', 'small']);
    expect(shown?.candidates[0]).toMatchObject({
      state: 'testing',
      reason: 'fewer than 50 paired samples',
      share: 0,
      lower_bound: null,
      upper_bound: null,
      cost_per_call_usd: 0.0000011,
      in_exploration_plan: true,
    });
    expect(shown?.candidates[0]?.eval_cost_per_sample_usd).toBeCloseTo(0.001, 12);
    expect(shown?.candidates[1]).toMatchObject({
      state: 'certified',
      share: 0.34,
      verdict_evaluated: 60,
      verdict_passed: 57,
      lower_bound: -0.021,
      cost_per_call_usd: 0.000011,
    });
    expect(shown?.candidates[1]?.paired).toEqual({
      same: { right: 50, wrong: 0, ungraded: 0 },
      win: { right: 0, wrong: 5, ungraded: 0 },
      loss: { right: 3, wrong: 0, ungraded: 0 },
      tie: { right: 0, wrong: 0, ungraded: 2 },
    });
  });

  it("shows a per-call policy's epoch and the share of calls it picks, never its weights", async () => {
    const policy = { epoch: 2, dimension: 4, weights: [0, -3, 0, 0], bias: 1, threshold: 0.5, routedShare: 0.4 };
    const split = {
      shares: [{ model: 'small', share: 0.62, diffLower: -0.01, samples: 80, policy }],
      requestedLower: 0.81,
      qualityBar: 0.95,
      confidence: 0.95,
      contractVersion: 0,
      at: NOW,
    };
    await storeOf().routing.saveRoute(route({ split }), null);
    const [shown] = (await routesView({ store: storeOf(), catalog, now: () => NOW }, scope)).routes;
    expect(shown?.split?.shares).toEqual([
      { model: 'small', share: 0.62, lower_bound_diff: -0.01, samples: 80, pooled: null, policy: { epoch: 2, routed_share: 0.4 } },
    ]);
    // 62% of the 40% of calls it picks go to small.
    expect(shown?.served_share).toBeCloseTo(1 - 0.62 * 0.4, 12);
  });

  it('never shows the serving model as testing when the router certified it', async () => {
    const stored = await storeOf().routing.putContract(scope, { pass_rate: 0.95, min_samples: 20 }, NOW);
    // 56 of 60: certified earlier and kept (a certificate is a one-time decision), though the bound has since wandered below 0.95.
    await addSamples(stored.evidenceVersion, 'small', { passed: 56, failed: 4, costPerSample: 0.00001 });
    const certificate = {
      model: 'small',
      evaluated: 40,
      passed: 40,
      lower: 0.951,
      passRate: 0.95,
      confidence: 0.95,
      contractVersion: stored.version,
      at: NOW,
    };
    await storeOf().routing.saveRoute(route({ servedModel: 'small', certificate }), null);
    const verdicts: CandidateVerdict[] = [
      { model: 'small', state: 'certified', lower: 0.85, upper: 0.98, evaluated: 60, passed: 56, costPerCall: 0.000011 },
    ];

    const fromRouter = (await routesView({ store: storeOf(), catalog, router: activity(verdicts), now: () => NOW }, scope)).routes[0];
    expect(fromRouter).toMatchObject({ phase: 'certified', semantics: 'absolute', served_share: 1, split: null, verdicts_from: 'router' });
    expect(fromRouter?.candidates).toEqual([expect.objectContaining({ model: 'small', state: 'certified', share: null, paired: null })]);

    // A guard failure (or feedback) counts at once; the verdict stays the router's until it decides again.
    await addSamples(stored.evidenceVersion, 'small', { failed: 1, costPerSample: 0 });
    const counted = (await routesView({ store: storeOf(), catalog, router: activity(verdicts), now: () => NOW }, scope)).routes[0];
    expect(counted).toMatchObject({ verdicts_from: 'router' });
    expect(counted?.candidates[0]).toMatchObject({
      state: 'certified',
      evaluated: 61,
      passed: 56,
      verdict_evaluated: 60,
      verdict_passed: 56,
    });

    // Before the router has decided (a leader that has not planned the route yet), the route record still says who serves.
    const fromEvidence = (await routesView({ store: storeOf(), catalog, router: activity([]), now: () => NOW }, scope)).routes[0];
    expect(fromEvidence).toMatchObject({ phase: 'certified', verdicts_from: 'evidence' });
    expect(fromEvidence?.candidates).toEqual([expect.objectContaining({ model: 'small', state: 'certified' })]);
  });

  it("judges from the evidence when the router's last verdicts no longer match the route or its evidence", async () => {
    const stored = await storeOf().routing.putContract(scope, { pass_rate: 0.95, min_samples: 20 }, NOW);
    await addSamples(stored.evidenceVersion, 'small', { passed: 30, costPerSample: 0.00001 });
    const certifiedSmall: CandidateVerdict[] = [
      { model: 'small', state: 'certified', lower: 0.951, upper: 1, evaluated: 30, passed: 30, costPerCall: 0.000011 },
    ];
    // A stricter pass rate was decided on: big serves again, and the router has not planned since.
    await storeOf().routing.saveRoute(route({}), null);
    expect(
      (await routesView({ store: storeOf(), catalog, router: activity(certifiedSmall), now: () => NOW }, scope)).routes[0],
    ).toMatchObject({ phase: 'requested', verdicts_from: 'evidence' });
    // The verdicts count more than the evidence holds: it started again (new checks, a demotion).
    await storeOf().routing.saveRoute(route({ servedModel: 'small' }), null);
    const counted = [{ ...certifiedSmall[0]!, evaluated: 31, passed: 31 }];
    expect((await routesView({ store: storeOf(), catalog, router: activity(counted), now: () => NOW }, scope)).routes[0]).toMatchObject({
      verdicts_from: 'evidence',
    });
    expect(
      (await routesView({ store: storeOf(), catalog, router: activity(certifiedSmall), now: () => NOW }, scope)).routes[0],
    ).toMatchObject({ phase: 'certified', verdicts_from: 'router' });
  });

  it('shows a demoted model cooling down, and one that went unchecked as unmonitored', async () => {
    await storeOf().routing.saveRoute(route({ cooldowns: { small: NOW + 60_000 } }), null);
    const verdicts: CandidateVerdict[] = [
      {
        model: 'small',
        state: 'testing',
        lower: Number.NEGATIVE_INFINITY,
        upper: Number.POSITIVE_INFINITY,
        evaluated: 0,
        passed: 0,
        costPerCall: 0.000011,
        share: 0,
        coolingDown: true,
        reason: 'cooling down after a demotion',
      },
    ];
    const demoted = (await routesView({ store: storeOf(), catalog, router: activity(verdicts), now: () => NOW }, scope)).routes[0];
    expect(demoted).toMatchObject({ phase: 'cooling_down', verdicts_from: 'router' });
    expect(demoted?.candidates[0]).toMatchObject({
      model: 'small',
      state: 'cooling_down',
      cooling_down_until: Math.floor((NOW + 60_000) / 1000),
    });
    const router = activity(verdicts);
    const onProbation = { activity: () => ({ ...router.activity(), probation: ['small'] }) };
    expect((await routesView({ store: storeOf(), catalog, router: onProbation, now: () => NOW }, scope)).routes[0]).toMatchObject({
      phase: 'unmonitored',
    });
  });
});

/** A pool whose model always answers "4", and grades a reply right when asked to. */
function answeringPool(): ModelPool {
  const answer = (content: string) => ({
    choices: [{ index: 0, message: { role: 'assistant' as const, content }, finish_reason: 'stop' as const }],
    usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
  });
  return {
    complete: () => Promise.reject(new Error('replays go through replay()')),
    replay: (request) => {
      const grading = request.messages.some((message) => typeof message.content === 'string' && message.content.includes('<rubric>'));
      return Promise.resolve({ replica: 'fake', completion: answer(grading ? 'PASS: right.' : '4'), latencyMs: 1, ttftMs: null });
    },
    openStream: () => Promise.reject(new Error('not used')),
    inFlight: () => 0,
    replicaStates: () => [{ replica: 'fake', inFlight: 0, circuit: 'closed' }],
  };
}

describe('routes view of a running router', () => {
  it("shows the router's own state at every step of a route that splits, then moves whole", async () => {
    const stored = await storeOf().routing.putContract(scope, { sample_rate: 1 }, NOW);
    const routes = createRouteTable({ routing: storeOf().routing, logger: silentLogger });
    routes.applyContract(scope, {
      contract: parseEvalContract(stored.contract),
      version: stored.version,
      evidenceVersion: stored.evidenceVersion,
    });
    const pools = new Map(['big', 'small', 'tiny'].map((model) => [model, answeringPool()]));
    const worker = createRouterWorker({ routing: storeOf().routing, routes, catalog, pools, logger: silentLogger });
    const offer = () =>
      worker.offer({
        scope,
        environment: 'production',
        requestedModel: 'big',
        servedModel: 'big',
        parameters: { messages: [{ role: 'user', content: 'What is 2 + 2?' }] },
        reply: { role: 'assistant', content: '4' },
        usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
        latencyMs: 1,
        ttftMs: null,
        stream: false,
      });
    const phases = new Set<string>();
    try {
      for (let sample = 0; sample < 600 && routes.route(scope, 'big')?.servedModel !== 'tiny'; sample++) {
        offer();
        await worker.idle();
        const [shown] = (await routesView({ store: storeOf(), catalog, router: worker }, scope)).routes;
        const record = routes.route(scope, 'big');
        if (shown === undefined || record === undefined) continue;
        phases.add(shown.phase);
        // What the router serves is never shown as still under test, and the view follows the router, not its own rule.
        const serving = [record.servedModel, ...(record.split?.shares.map((entry) => entry.model) ?? [])].filter(
          (model) => model !== 'big',
        );
        for (const model of serving)
          expect(shown.candidates.find((candidate) => candidate.model === model)?.state, `sample ${sample}`).toBe('certified');
        if (sample > 0) expect(shown.verdicts_from, `sample ${sample}`).toBe('router');
        if (shown.phase === 'split')
          expect(shown.split?.shares.map((entry) => entry.model)).toEqual(record.split?.shares.map((entry) => entry.model));
      }
      expect(phases).toContain('split');
      const [last] = (await routesView({ store: storeOf(), catalog, router: worker }, scope)).routes;
      // Whole, or a share so near it that the last tests would not pay for themselves.
      if (last?.phase === 'certified') {
        expect(last).toMatchObject({ router_choice: 'tiny', served_share: 1, verdicts_from: 'router' });
        expect(last.candidates.map((candidate) => [candidate.model, candidate.state, candidate.share])).toEqual([
          ['tiny', 'certified', 1],
          ['small', expect.any(String), expect.any(Number)],
        ]);
      } else {
        expect(last).toMatchObject({ phase: 'split', router_choice: 'big', verdicts_from: 'router' });
        expect(last?.split?.shares[0]).toMatchObject({ model: 'tiny', share: expect.closeTo(0.95, 1) });
        expect(last?.candidates[0]).toMatchObject({ model: 'tiny', state: 'certified' });
      }
    } finally {
      await worker.close();
      await routes.close();
    }
  });
});
