import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../test/helpers/seeded-random.js';
import {
  bernoulliDivergence,
  evalsToVerdict,
  normalCdf,
  planExploration,
  waitsForTraffic,
  type ExplorationInput,
  type ExplorationPlan,
} from './exploration.js';
import { decideRoute, DEFAULT_POLICY, type CandidateEvidence, type RouteDecision } from './route-decision.js';
import { DEFAULT_ROUTER_SETTINGS, explorationRate } from './router-context.js';
import { createTrafficMeter, UNEXTRAPOLATED_MS, type RouteTraffic, type TrafficMeter } from './traffic-meter.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
const START = Date.UTC(2026, 10, 2, 0, 0, 0);
const KEY = 'route';
/** USD per call: the requested model, and a candidate at 5% of its price. */
const BIG = 0.01;
const CHEAP = 0.0005;

interface Route {
  /** Time of production call `index`. */
  at: (index: number) => number;
  calls: number;
  /** The candidate's true pass rate; null: its evidence stays as given (an open verdict), so only the traffic changes the plan. */
  quality: number | null;
  candidate?: Partial<CandidateEvidence>;
  meter?: TrafficMeter;
  /** Exploration budget per UTC day, USD. */
  budget?: number;
  /** The traffic the plan is given in place of the meter's (to replay the old reading of a burst). */
  traffic?: (measured: RouteTraffic, now: number) => RouteTraffic;
}

interface Outcome {
  /** Index of each call sampled and replayed on the candidate. */
  sampled: number[];
  /** First call a cheaper model served; null: never. */
  switchedAt: number | null;
  evaluated: number;
  plans: ExplorationPlan[];
}

/**
 * The router worker's sampling loop around the pure parts (router-worker.ts,
 * sample-processor.ts): the hot path counts each call and samples it at the
 * rate of the route's plan; a sample makes the plan again, replays on the
 * planned candidate, is counted against the daily cap, and the route and the
 * plan are decided again on the new evidence.
 */
function run(route: Route, seed = 1): Outcome {
  const random = seededRandom(seed);
  const meter = route.meter ?? createTrafficMeter();
  const candidate: CandidateEvidence = { model: 'cheap', costPerCall: CHEAP, evaluated: 0, passed: 0, errors: 0, ...route.candidate };
  const view: { plan: ExplorationPlan | null; planAt: number; planAskedAt: number } = {
    plan: null,
    planAt: 0,
    planAskedAt: Number.NEGATIVE_INFINITY,
  };
  const outcome: Outcome = { sampled: [], switchedAt: null, evaluated: 0, plans: [] };
  let decision: RouteDecision = decideRoute({
    requestedModel: 'big',
    requestedCostPerCall: BIG,
    candidates: [candidate],
    policy: DEFAULT_POLICY,
  });
  let spent = { day: -1, usd: 0 };
  const replan = (now: number): ExplorationPlan => {
    if (Math.floor(now / DAY_MS) !== spent.day) spent = { day: Math.floor(now / DAY_MS), usd: 0 };
    const measured = meter.traffic(KEY, now);
    const traffic = route.traffic?.(measured, now) ?? measured;
    const requestedServes = decision.servedModel === 'big';
    const plan = planExploration({
      ...inputs,
      decision,
      servedCostPerCall: requestedServes ? BIG : CHEAP,
      referenceCostPerSample: requestedServes ? 0 : BIG,
      callsPerDay: traffic.callsPerDay,
      callsSeen: traffic.seen,
      budgetLeftToday: (route.budget ?? 2.5) - spent.usd,
      samplesToday: traffic.samplesToday,
    });
    view.plan = plan;
    view.planAt = waitsForTraffic(plan, { ageMs: traffic.ageMs }) ? 0 : now;
    outcome.plans.push(plan);
    return plan;
  };
  for (let index = 0; index < route.calls; index++) {
    const now = route.at(index);
    meter.observe(KEY, now);
    if (decision.servedModel !== 'big') outcome.switchedAt ??= index;
    if (random() >= explorationRate(view, 'auto', now, DEFAULT_ROUTER_SETTINGS)) continue;
    if (replan(now).candidates.length > 0) {
      meter.observeSample(KEY, now);
      outcome.sampled.push(index);
      spent.usd += CHEAP;
      if (route.quality !== null) {
        candidate.evaluated += 1;
        if (random() < route.quality) candidate.passed += 1;
        decision = decideRoute({ requestedModel: 'big', requestedCostPerCall: BIG, candidates: [candidate], policy: DEFAULT_POLICY });
      }
    }
    replan(now);
  }
  outcome.evaluated = candidate.evaluated;
  return outcome;
}

const inputs: Omit<ExplorationInput, 'decision' | 'servedCostPerCall' | 'referenceCostPerSample' | 'callsPerDay' | 'budgetLeftToday'> = {
  policy: DEFAULT_POLICY,
  judgeCostPerEval: 0,
  horizonDays: DEFAULT_ROUTER_SETTINGS.horizonDays,
  fixedRate: null,
  maxSamplesPerDay: DEFAULT_ROUTER_SETTINGS.maxSamplesPerDay,
};

/** Calls spread evenly: `perDay` a day from `from`. */
const paced =
  (perDay: number, from = START) =>
  (index: number) =>
    from + (index * DAY_MS) / perDay;
/** A verdict still open after 200 evals (98%): the plan keeps testing it. */
const OPEN = { evaluated: 200, passed: 196 };
const count = (sampled: number[], from: number, to: number) => sampled.filter((index) => index >= from && index < to).length;

/** A meter that has seen `perDay` calls a day for the day before `until`. */
function busyMeter(perDay: number, until: number): TrafficMeter {
  const meter = createTrafficMeter();
  for (let hour = 24; hour >= 1; hour--) meter.observe(KEY, until - hour * HOUR_MS, perDay / 24);
  return meter;
}

describe('planExploration: how many calls it samples', () => {
  it('samples a burst of 16,000 calls in five minutes until the route switches, where reading it as a day of traffic left it untested', () => {
    const burst = { at: (index: number) => START + (index * 5 * MINUTE_MS) / 16_000, calls: 16_000, quality: 0.995 };
    const outcome = run(burst);
    expect(outcome.switchedAt).not.toBeNull();
    expect(outcome.switchedAt).toBeLessThan(1_000);
    expect(outcome.sampled.length).toBeGreaterThanOrEqual(DEFAULT_POLICY.minSamples);
    // Sampled at the highest rate from its first calls: every call from the first sample to the switch.
    expect(outcome.sampled.length).toBe((outcome.switchedAt ?? 0) - (outcome.sampled[0] ?? 0));

    // The same burst scaled up from its first minute, as the meter did.
    const asADay = run({
      ...burst,
      traffic: (measured) => ({ ...measured, callsPerDay: (measured.seen * DAY_MS) / Math.max(MINUTE_MS, measured.ageMs) }),
    });
    // Its first evidence at once, then 0.4% of the calls of a burst read as 4.6 million a day: no verdict, no switch.
    expect(asADay.sampled.length - DEFAULT_POLICY.minSamples).toBeLessThan(0.005 * 16_000);
    expect(asADay.switchedAt).toBeNull();
  });

  it('spreads a steady workload’s samples over the day, within the daily cap', () => {
    const day = START + DAY_MS;
    const outcome = run({
      at: paced(200_000, day),
      calls: 200_000,
      quality: null,
      candidate: OPEN,
      meter: busyMeter(200_000, day),
      budget: 100,
    });
    expect(outcome.sampled.length).toBeLessThanOrEqual(DEFAULT_ROUTER_SETTINGS.maxSamplesPerDay);
    expect(outcome.sampled.length).toBeGreaterThan(0.95 * DEFAULT_ROUTER_SETTINGS.maxSamplesPerDay);
    // A tenth of the calls, in every quarter of the day alike.
    for (let quarter = 0; quarter < 4; quarter++)
      expect(count(outcome.sampled, quarter * 50_000, (quarter + 1) * 50_000)).toBeGreaterThan(4_500);
  });

  it('takes a new workload’s first evidence from its first calls and switches within about a hundred', () => {
    const outcome = run({ at: paced(2_000), calls: 400, quality: 0.995 });
    // Nothing pays for a test on a route's first few calls; from then on, every call until the verdict.
    expect(outcome.sampled[0]).toBeLessThan(20);
    expect(count(outcome.sampled, 0, 20 + DEFAULT_POLICY.minSamples)).toBeGreaterThanOrEqual(DEFAULT_POLICY.minSamples);
    expect(outcome.switchedAt).not.toBeNull();
    expect(outcome.switchedAt).toBeLessThan(150);
  });

  it('takes a new candidate’s first evidence on a busy route at once, then samples at the cap’s share of its calls', () => {
    const day = START + DAY_MS;
    const outcome = run({ at: paced(1_000_000, day), calls: 10_050, quality: 0.97, meter: busyMeter(1_000_000, day), budget: 100 });
    expect(count(outcome.sampled, 0, DEFAULT_POLICY.minSamples)).toBe(DEFAULT_POLICY.minSamples);
    // 20,000 samples of a million calls a day: about 2% of the next 10,000 calls.
    const after = count(outcome.sampled, DEFAULT_POLICY.minSamples, 10_050);
    expect(after).toBeGreaterThan(120);
    expect(after).toBeLessThan(300);
  });

  it('stops at the daily cap when a burst outgrows it, and samples again the next day', () => {
    const burst = (index: number) =>
      index < 60_000 ? START + (index * 10 * MINUTE_MS) / 60_000 : START + DAY_MS + (index - 60_000) * 1_000;
    const outcome = run({ at: burst, calls: 60_100, quality: null, candidate: OPEN, budget: 100 });
    expect(count(outcome.sampled, 0, 60_000)).toBe(DEFAULT_ROUTER_SETTINGS.maxSamplesPerDay);
    expect(count(outcome.sampled, 60_000, 60_100)).toBeGreaterThan(0);
  });

  it('spends no more than the day’s exploring budget, whatever the traffic', () => {
    const outcome = run({ at: (index) => START + index * 100, calls: 5_000, quality: null, candidate: OPEN, budget: 100 * CHEAP });
    expect(outcome.sampled.length).toBeLessThanOrEqual(100);
    expect(outcome.sampled.length).toBeGreaterThan(90);
  });
});

describe('planExploration: what it expects to gain', () => {
  const decision = (costPerCall: number, evidence: Partial<CandidateEvidence> = {}) =>
    decideRoute({
      requestedModel: 'big',
      requestedCostPerCall: BIG,
      candidates: [{ model: 'cheap', costPerCall, evaluated: 0, passed: 0, errors: 0, ...evidence }],
      policy: DEFAULT_POLICY,
    });
  const plan = (overrides: Partial<ExplorationInput>): ExplorationPlan =>
    planExploration({
      ...inputs,
      decision: decision(CHEAP),
      servedCostPerCall: BIG,
      referenceCostPerSample: 0,
      callsPerDay: 300,
      callsSeen: 300,
      budgetLeftToday: 2.5,
      ...overrides,
    });

  it('counts only the calls a burst made: no more saving than those calls every day of the horizon', () => {
    const burst = plan({});
    expect(burst.candidates).toEqual(['cheap']);
    expect(burst.expectedNetUsd).toBeLessThan((BIG - CHEAP) * 300 * DEFAULT_ROUTER_SETTINGS.horizonDays);
    // A candidate saving 1% is not worth its tests on a burst of 300 calls: no call of it is sampled.
    const near = run({ at: (index) => START + index * 100, calls: 300, quality: 1, candidate: { costPerCall: 0.99 * BIG } });
    expect(near.sampled).toEqual([]);
  });

  it('samples every call for a first verdict only while the requested model serves: a cheaper model serving makes each sample pay a reply of the reference', () => {
    const young = { decision: decision(CHEAP / 2), callsPerDay: 1_000_000, callsSeen: 1_000_000, budgetLeftToday: 1_000 };
    expect(plan({ ...young }).sampleRate).toBe(1);
    expect(plan({ ...young, servedCostPerCall: CHEAP, referenceCostPerSample: BIG }).sampleRate).toBeCloseTo(0.02, 6);
    // Nothing left under the cap today: no sample, first evidence or not.
    expect(plan({ ...young, samplesToday: DEFAULT_ROUTER_SETTINGS.maxSamplesPerDay }).sampleRate).toBe(0);
  });

  it('leaves out a candidate whose replays would be skipped: it raises neither the rate nor the cost, until it can be replayed again', () => {
    const busy = { callsPerDay: 100_000, callsSeen: 100_000, budgetLeftToday: 100 };
    const both = decideRoute({
      requestedModel: 'big',
      requestedCostPerCall: BIG,
      candidates: [
        { model: 'cheap', costPerCall: CHEAP, errors: 0, ...OPEN },
        { model: 'missing', costPerCall: CHEAP / 2, evaluated: 0, passed: 0, errors: 0 },
      ],
      policy: DEFAULT_POLICY,
    });
    expect(both.toTest).toEqual(expect.arrayContaining(['cheap', 'missing']));
    // Replayable, the new candidate's first evidence has every call sampled.
    const replayable = plan({ ...busy, decision: both });
    expect(replayable.candidates).toContain('missing');
    expect(replayable.sampleRate).toBe(1);

    const skipped = plan({ ...busy, decision: both, unavailable: new Set(['missing']) });
    const alone = plan({ ...busy, decision: decision(CHEAP, OPEN) });
    expect(skipped.candidates).toEqual(['cheap']);
    expect(alone.sampleRate).toBeLessThan(1);
    expect(skipped.sampleRate).toBe(alone.sampleRate);
    expect(skipped.expectedNetUsd).toBe(alone.expectedNetUsd);
    // Still assessed, for the routes view.
    expect(skipped.assessed.map((entry) => entry.model)).toContain('missing');

    // A cheaper model serves and the only candidate under test cannot be replayed: no sample pays a reference reply for it.
    const onlyMissing = plan({
      ...busy,
      decision: decision(CHEAP / 2),
      servedCostPerCall: CHEAP,
      referenceCostPerSample: BIG,
      unavailable: new Set(['cheap']),
    });
    expect(onlyMissing).toMatchObject({ candidates: [], sampleRate: 0, expectedNetUsd: 0 });
    expect(
      plan({ ...busy, decision: decision(CHEAP / 2), servedCostPerCall: CHEAP, referenceCostPerSample: BIG }).sampleRate,
    ).toBeGreaterThan(0);
  });

  it('makes a new route’s plan again on a later call when its first calls pay for no test yet', () => {
    const early = plan({ callsPerDay: 1, callsSeen: 1 });
    expect(early.candidates).toEqual([]);
    expect(waitsForTraffic(early, { ageMs: 0 })).toBe(true);
    expect(waitsForTraffic(early, { ageMs: 2 * HOUR_MS })).toBe(false);
  });
});

describe('planExploration under a relative contract (shares)', () => {
  const verdict = (model: string, costPerCall: number, evaluated: number, share: number) => ({
    model,
    costPerCall,
    state: 'testing' as const,
    lower: -1,
    upper: Infinity,
    evaluated,
    passed: evaluated,
    share,
  });
  const input = (possibleShares: Map<string, number>, evaluated: number): ExplorationInput => ({
    policy: DEFAULT_POLICY,
    decision: { toTest: ['tiny', 'small'], verdicts: [verdict('tiny', 0.0001, evaluated, 0), verdict('small', 0.001, evaluated, 0)] },
    servedCostPerCall: BIG,
    referenceCostPerSample: 0,
    judgeCostPerEval: 0.001,
    callsPerDay: 2_000,
    horizonDays: 30,
    fixedRate: null,
    budgetLeftToday: 10,
    maxSamplesPerDay: 20_000,
    possibleShares,
  });

  it('tests one candidate at a time, the cheapest first while none has evidence', () => {
    const plan = planExploration(
      input(
        new Map([
          ['tiny', 1],
          ['small', 1],
        ]),
        0,
      ),
    );
    expect(plan.candidates).toEqual(['tiny']);
    expect(plan.sampleRate).toBe(1);
  });

  it('moves to a dearer one that may take the whole workload once the cheapest is seen to earn a share only', () => {
    expect(
      planExploration(
        input(
          new Map([
            ['tiny', 0.3],
            ['small', 1],
          ]),
          60,
        ),
      ).candidates,
    ).toEqual(['small']);
    // The cheapest may still earn nearly all: 0.95 × its saving beats the whole of the dearer one's.
    expect(
      planExploration(
        input(
          new Map([
            ['tiny', 0.95],
            ['small', 1],
          ]),
          60,
        ),
      ).candidates,
    ).toEqual(['tiny']);
  });

  it('moves to the next once the cheaper one has nothing more to win, and stops when none has', () => {
    expect(
      planExploration(
        input(
          new Map([
            ['tiny', 0],
            ['small', 0.6],
          ]),
          200,
        ),
      ).candidates,
    ).toEqual(['small']);
    const done = planExploration(
      input(
        new Map([
          ['tiny', 0],
          ['small', 0],
        ]),
        200,
      ),
    );
    expect(done.candidates).toEqual([]);
    expect(done.sampleRate).toBe(0);
    expect(done.assessed.map((entry) => entry.model)).toEqual(['tiny', 'small']);
  });
});

describe('planExploration: the rate, the candidates and the figures of one plan', () => {
  const decide = (...candidates: Array<Partial<CandidateEvidence> & { model: string }>) =>
    decideRoute({
      requestedModel: 'big',
      requestedCostPerCall: BIG,
      candidates: candidates.map((candidate) => ({ costPerCall: CHEAP, evaluated: 0, passed: 0, errors: 0, ...candidate })),
      policy: DEFAULT_POLICY,
    });
  /** A busy route the requested model serves: 100,000 calls a day, $100 left to explore, the 20,000 samples a day cap. */
  const plan = (decision: RouteDecision, overrides: Partial<ExplorationInput> = {}): ExplorationPlan =>
    planExploration({
      ...inputs,
      decision,
      servedCostPerCall: BIG,
      referenceCostPerSample: 0,
      callsPerDay: 100_000,
      callsSeen: 100_000,
      budgetLeftToday: 100,
      ...overrides,
    });
  const cheap = { model: 'cheap', ...OPEN };

  it('samples every call for a candidate’s first min_samples scored replies, then the cap’s share of the calls', () => {
    expect(
      plan(decide({ model: 'cheap', evaluated: DEFAULT_POLICY.minSamples - 1, passed: DEFAULT_POLICY.minSamples - 2 })).sampleRate,
    ).toBe(1);
    expect(
      plan(decide({ model: 'cheap', evaluated: DEFAULT_POLICY.minSamples, passed: DEFAULT_POLICY.minSamples - 1 })).sampleRate,
    ).toBeCloseTo(20_000 / 100_000, 12);
  });

  it('spreads what is left of the budget and the cap over a day of calls, whichever is tighter', () => {
    // $5 at $0.0005 a sample over 100,000 calls: 10%, under the cap's 20%.
    expect(plan(decide(cheap), { budgetLeftToday: 5 }).sampleRate).toBeCloseTo(0.1, 12);
    // The judge's spend per eval makes each sample dearer: 5%.
    expect(plan(decide(cheap), { budgetLeftToday: 5, judgeCostPerEval: CHEAP }).sampleRate).toBeCloseTo(0.05, 12);
    // A cheaper model serving: each sample also pays a reply of the requested model.
    expect(
      plan(decide({ ...cheap, costPerCall: CHEAP / 2 }), { servedCostPerCall: CHEAP, referenceCostPerSample: BIG }).sampleRate,
    ).toBeCloseTo(100 / ((BIG + CHEAP / 2) * 100_000), 12);
    // A low-traffic route: every call.
    expect(plan(decide(cheap), { callsPerDay: 1_000, callsSeen: 1_000 }).sampleRate).toBe(1);
  });

  it('stops sampling once the cap is reached or the budget is spent, but not before', () => {
    const cap = DEFAULT_ROUTER_SETTINGS.maxSamplesPerDay;
    expect(plan(decide(cheap), { samplesToday: cap - 1 }).sampleRate).toBeGreaterThan(0);
    for (const stopped of [plan(decide(cheap), { samplesToday: cap }), plan(decide(cheap), { budgetLeftToday: 0 })]) {
      expect(stopped).toMatchObject({ candidates: [], sampleRate: 0, expectedNetUsd: 0 });
      expect(stopped.assessed.map((entry) => entry.model)).toEqual(['cheap']);
    }
    // Samples that cost nothing (a free candidate, its reference the call's own reply) need no budget.
    expect(plan(decide({ ...cheap, costPerCall: 0 }), { budgetLeftToday: 0 }).sampleRate).toBeGreaterThan(0);
  });

  it('samples at the contract’s fixed rate, whatever the budget and the cap', () => {
    expect(
      plan(decide(cheap), { fixedRate: 0.25, budgetLeftToday: 0, samplesToday: DEFAULT_ROUTER_SETTINGS.maxSamplesPerDay }).sampleRate,
    ).toBe(0.25);
  });

  it('plans nothing for a route with nothing to test or no calls', () => {
    const certified = decide({ model: 'cheap', evaluated: 2_000, passed: 2_000 });
    expect(certified.toTest).toEqual([]);
    expect(plan(certified)).toEqual({ candidates: [], sampleRate: 0, expectedNetUsd: 0, assessed: [] });
    expect(plan(decide(cheap), { callsPerDay: 0 })).toEqual({ candidates: [], sampleRate: 0, expectedNetUsd: 0, assessed: [] });
  });

  it('lists the candidates worth their tests cheapest first, and drops one whose saving does not pay for its tests', () => {
    const near = { model: 'near', costPerCall: 0.99 * BIG, ...OPEN };
    const mid = { model: 'mid', costPerCall: 0.2 * BIG, ...OPEN };
    expect(plan(decide(near, mid, cheap)).candidates).toEqual(['cheap', 'mid', 'near']);
    // 100 calls a day: saving 1% of a call does not pay for its ~60 replays; the cheap one does.
    const quiet = plan(decide(near, cheap), { callsPerDay: 100, callsSeen: 100 });
    expect(quiet.candidates).toEqual(['cheap']);
    const figuresOf = (model: string) => quiet.assessed.find((entry) => entry.model === model) as ExplorationPlan['assessed'][number];
    const [kept, dropped] = [figuresOf('cheap'), figuresOf('near')];
    expect(dropped.gainUsd).toBeLessThan(dropped.costUsd);
    expect(quiet.expectedNetUsd).toBeCloseTo(kept.gainUsd - kept.costUsd, 9);
    // Alone, it is not tested at all.
    expect(plan(decide(near), { callsPerDay: 100, callsSeen: 100 })).toMatchObject({ candidates: [], sampleRate: 0 });
  });

  it('weighs each candidate by its chance to be certified, its tests by their price, and the reference replies the samples pay', () => {
    const figures = (evidence: Partial<CandidateEvidence>) =>
      plan(decide({ model: 'cheap', ...evidence })).assessed[0] as ExplorationPlan['assessed'][number];
    // Still under test: 60 of 60 passed (the bound not yet at the pass rate), 183 of 200, 93 of 100.
    expect(figures({ evaluated: 60, passed: 60 }).certifyChance).toBeGreaterThan(0.99);
    expect(figures({ evaluated: 200, passed: 183 }).certifyChance).toBeLessThan(0.1);
    const nearThePassRate = figures({ evaluated: 100, passed: 93 });
    expect(nearThePassRate.certifyChance).toBeGreaterThan(0.2);
    expect(nearThePassRate.certifyChance).toBeLessThan(0.5);
    // Near the pass rate the verdict needs many more evals than far above it.
    expect(nearThePassRate.evalsLeft).toBeGreaterThan(10 * figures({ evaluated: 60, passed: 60 }).evalsLeft);
    const judged = plan(decide(cheap), { judgeCostPerEval: CHEAP }).assessed[0] as ExplorationPlan['assessed'][number];
    expect(judged.costUsd).toBeCloseTo(judged.evalsLeft * (CHEAP + CHEAP), 12);
    // A cheaper model serving: each expected sample pays a reply of the requested model, shared by the plan.
    const paying = plan(decide({ ...cheap, costPerCall: CHEAP / 2 }), { servedCostPerCall: CHEAP, referenceCostPerSample: BIG });
    const entry = paying.assessed[0] as ExplorationPlan['assessed'][number];
    expect(paying.expectedNetUsd).toBeCloseTo(entry.gainUsd - entry.costUsd - entry.evalsLeft * BIG, 9);
  });

  it('makes a plan again on a later call only while the route is in its first hour and had something to weigh', () => {
    const nothingYet = plan(decide(cheap), { callsPerDay: 1, callsSeen: 1 });
    expect(nothingYet.candidates).toEqual([]);
    expect(waitsForTraffic(nothingYet, { ageMs: UNEXTRAPOLATED_MS - 1 })).toBe(true);
    expect(waitsForTraffic(nothingYet, { ageMs: UNEXTRAPOLATED_MS })).toBe(false);
    expect(waitsForTraffic(plan(decide(cheap)), { ageMs: 0 })).toBe(false);
    expect(waitsForTraffic(plan(decide({ model: 'cheap', evaluated: 2_000, passed: 2_000 })), { ageMs: 0 })).toBe(false);
  });
});

describe('evalsToVerdict and its helpers', () => {
  it('expects ln(1/α) / KL(mean ‖ pass rate) evals to a verdict, within min_samples and max_samples', () => {
    // 0.99 against 0.95 at 95%: about 121 evals to its certificate; 0.98: about 247.
    expect(evalsToVerdict(0.99, DEFAULT_POLICY).certify).toBeCloseTo(Math.log(20) / bernoulliDivergence(0.99, 0.95), 9);
    expect(evalsToVerdict(0.99, DEFAULT_POLICY).certify).toBeCloseTo(121.1, 1);
    expect(evalsToVerdict(0.98, DEFAULT_POLICY).certify).toBeCloseTo(246.7, 1);
    // A perfect model still needs min_samples; one just above the pass rate is eliminated at max_samples.
    expect(evalsToVerdict(1, { ...DEFAULT_POLICY, minSamples: 100 }).certify).toBe(100);
    expect(evalsToVerdict(0.951, DEFAULT_POLICY).certify).toBe(DEFAULT_POLICY.maxSamples);
    // A model far below is eliminated within a few evals.
    expect(evalsToVerdict(0.5, DEFAULT_POLICY).eliminate).toBeLessThan(5);
  });

  it('prices the side the mean is not on as a model as far on it as the pass rate’s failure share', () => {
    // Above the pass rate, elimination is priced as a 0.90 model; below it, certification as a 0.975 one.
    expect(evalsToVerdict(0.99, DEFAULT_POLICY).eliminate).toBeCloseTo(evalsToVerdict(0.9, DEFAULT_POLICY).eliminate, 9);
    expect(evalsToVerdict(0.9, DEFAULT_POLICY).certify).toBeCloseTo(evalsToVerdict(0.975, DEFAULT_POLICY).certify, 9);
  });

  it('bernoulliDivergence is 0 between equal rates, and finite at 0 and 1', () => {
    expect(bernoulliDivergence(0.95, 0.95)).toBe(0);
    expect(bernoulliDivergence(1, 0.95)).toBeCloseTo(-Math.log(0.95), 12);
    expect(bernoulliDivergence(0, 0.95)).toBeCloseTo(-Math.log(0.05), 12);
    expect(bernoulliDivergence(0.9, 0.95)).toBeGreaterThan(0);
  });

  it('normalCdf is within 1.5e-7 of Φ, and symmetric', () => {
    expect(normalCdf(0)).toBeCloseTo(0.5, 7);
    expect(normalCdf(1)).toBeCloseTo(0.8413447461, 6);
    expect(normalCdf(-2)).toBeCloseTo(0.0227501319, 6);
    expect(normalCdf(1.96)).toBeCloseTo(0.9750021049, 6);
    for (const z of [0.3, 1.2, 2.5]) expect(normalCdf(-z)).toBeCloseTo(1 - normalCdf(z), 12);
  });
});
