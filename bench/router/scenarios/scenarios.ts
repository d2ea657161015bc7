/**
 * The router under everyday conditions, one scenario per way it used to fail
 * (issue: "Routing that holds in production"), each run with the real router
 * worker, decisions, evaluators, pools and store (world.ts) on simulated
 * engines and a simulated clock:
 *
 *   1. a spent eval budget, then a serving model that degrades;
 *   2. an outage of a candidate, a direct caller of that model, and a model
 *      whose file is missing;
 *   3. feedback posted ten times for one call;
 *   4. a cheap model 200 times slower than the requested one;
 *   5. exploration's economy: 20,000 calls, 2,000 calls a day, and a fixed
 *      sample rate of 1 for comparison;
 *   6. free-text answers, judged pairwise by a judge right 95% of the time;
 *   7. contract edits: the budget, then the pass rate, then the checks;
 *   8. a burst of 300 calls at once;
 *   9. a new workload of 16,000 calls in five minutes, on the untouched
 *      default contract;
 *  10. twelve small workloads of one project, on the default contract (the
 *      project's pooled prior).
 *
 * Each reports the share of calls served below the bar (a model whose true
 * pass rate is under pass_rate - 0.02), the saving before and after eval
 * spend as a share of an oracle's (which always serves the cheapest model
 * that truly passes and is fast enough), calls to the first switch, and what
 * the scenario is about.
 */
import type { EvalContract } from '../../../src/evals/eval-contract.js';
import { DAY_MS, createWorld, newTally, type Tally, type World } from './world.js';
import type { SimulatedModelSpec } from './simulated-engine.js';

export interface ScenarioResult {
  name: string;
  calls: number;
  belowBar: number;
  /** The workload's quality (true pass rates of the models that served) against the requested model's alone: what a relative contract holds at quality_bar. */
  qualityRatio: number;
  grossVsOracle: number;
  netVsOracle: number;
  firstSwitch: number | null;
  /** What the scenario shows, in figures. */
  finding: string;
  /** Whether its target was met. */
  met: boolean;
}

const PASS_RATE = 0.95;
/** An exact-answer task: the contract a user writes for it (the default judge is for free text, scenario 6). */
const EXACT: Partial<EvalContract> = { checks: [{ type: 'agreement', method: 'normalized' }], pass_rate: PASS_RATE };

const steady = (rate: number) => () => rate;
const model = (
  id: string,
  family: string,
  price: number,
  quality: (at: number) => number,
  extra: Partial<SimulatedModelSpec> = {},
): SimulatedModelSpec => ({ id, family, price, quality, latencyMs: 20, ...extra });

async function setContract(world: World, workload: string, contract: Partial<EvalContract>): Promise<Record<string, unknown>> {
  await world.store.projects.ensureScope({ accountId: world.key.accountId, project: 'simulation', workload });
  return (await world.handlers.putEval(world.key, 'simulation', workload, JSON.stringify(contract))) as Record<string, unknown>;
}

interface Drive {
  workload: string;
  requested: string;
  calls: number;
  callsPerDay: number;
  /** Runs before call `index` (a change of the world at a point of the run). */
  before?: (index: number) => Promise<void> | void;
}

/** Calls at an even pace of `callsPerDay`; the router catches up after each. */
async function drive(world: World, plan: Drive, tally = newTally()): Promise<Tally> {
  const start = world.clock.now();
  const interval = DAY_MS / plan.callsPerDay;
  for (let index = 0; index < plan.calls; index++) {
    world.clock.set(Math.max(world.clock.now(), start + index * interval));
    await plan.before?.(index);
    await world.call(plan.workload, plan.requested, tally, PASS_RATE);
    await world.router.idle();
  }
  return tally;
}

async function result(world: World, name: string, workload: string, tally: Tally, finding: string, met: boolean): Promise<ScenarioResult> {
  const spend = await world.evalSpend(workload);
  const oracleSaving = tally.referenceCost - tally.oracleCost;
  const saving = tally.referenceCost - tally.productionCost;
  return {
    name,
    calls: tally.calls,
    belowBar: tally.bad / tally.calls,
    qualityRatio: tally.servedQuality / tally.requestedQuality,
    grossVsOracle: oracleSaving > 0 ? saving / oracleSaving : Number.NaN,
    netVsOracle: oracleSaving > 0 ? (saving - spend) / oracleSaving : Number.NaN,
    firstSwitch: tally.firstSwitch,
    finding,
    met,
  };
}

/** The model serving the workload's route for `requested` (a pin, else the router's choice), as the route table holds it. */
function servingModel(world: World, workload: string, requested: string): string {
  const route = world.routes.route(world.scope(workload), requested);
  return route?.pinnedModel ?? route?.servedModel ?? requested;
}

async function routesOf(world: World, workload: string) {
  return world.handlers.getRoutes(world.key, 'simulation', workload);
}

/**
 * 1: a serving model that degrades, with the budget left, and with the whole
 * day's budget spent (the drift comes at the worst moment: the first call
 * the budget is seen spent while the cheaper model serves). Served calls on
 * the degraded model until it leaves the route must be about the same.
 */
async function blindAfterBudget(seed: number): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  const served: number[] = [];
  for (const [name, budget] of [
    ['1a. degrades, budget left', 100],
    ["1b. degrades, day's budget spent", 0.3],
  ] as const) {
    let driftAt = Number.POSITIVE_INFINITY;
    const world = await createWorld({
      seed,
      models: [
        model('reference', 'acme', 10, steady(1)),
        model('cheap', 'beta', 0.5, (at) => (at < driftAt ? 0.995 : 0.8)),
        model('mid', 'gamma', 3, steady(0.999)),
      ],
    });
    await setContract(world, 'drift', { ...EXACT, daily_budget_usd: budget });
    let afterDrift = 0;
    let gone = false;
    const tally = await drive(world, {
      workload: 'drift',
      requested: 'reference',
      calls: 30_000,
      callsPerDay: 20_000,
      before: async (index) => {
        const serving = servingModel(world, 'drift', 'reference') === 'cheap';
        if (driftAt === Number.POSITIVE_INFINITY && serving) {
          const spent = await world.store.routing.getEvalSpend(
            world.scope('drift'),
            new Date(world.clock.now()).toISOString().slice(0, 10),
          );
          if (budget > 1 ? index >= 5_000 : spent >= budget) driftAt = world.clock.now();
        }
        if (world.clock.now() < driftAt || gone) return;
        if (serving) afterDrift += 1;
        else gone = true;
      },
    });
    // History is newest first: the first exit after the drift is the last match.
    const exit = (await routesOf(world, 'drift')).history.findLast(
      (change) => change.from_model === 'cheap' && change.at * 1000 >= Math.floor(driftAt / 1000) * 1000,
    );
    served.push(afterDrift);
    const when = Number.isFinite(driftAt)
      ? `drift at ${new Date(driftAt).toISOString().slice(11, 16)} UTC`
      : 'no drift (cheap never served)';
    results.push(
      await result(
        world,
        name,
        'drift',
        tally,
        `${when}; the degraded model served ${afterDrift} calls after it, then left: ${exit?.reason ?? 'never'}${exit?.detail ? ` (${exit.detail})` : ''}`,
        exit !== undefined,
      ),
    );
    await world.close();
  }
  const [left, spent] = served as [number, number];
  const last = results[1] as ScenarioResult;
  last.met = last.met && spent <= Math.max(2 * left, 1_500);
  return results;
}

/**
 * 2: a candidate's engine fails for a few minutes while it is being tested;
 * another workload calls that model directly (never during the outage, so a
 * failed call of its would come from replays opening the circuit); a model
 * of the catalog has no file.
 */
async function outage(seed: number): Promise<ScenarioResult> {
  const start = Date.UTC(2026, 10, 2);
  const window: [number, number] = [start + 3 * 60_000, start + 6 * 60_000];
  const world = await createWorld({
    seed,
    models: [
      model('reference', 'acme', 10, steady(1)),
      model('cheap', 'beta', 0.5, steady(0.995), { outages: [window] }),
      model('missing', 'gamma', 0.2, steady(1), { missing: true }),
    ],
  });
  await setContract(world, 'main', EXACT);
  const direct = newTally();
  const tally = await drive(world, {
    workload: 'main',
    requested: 'reference',
    calls: 6_000,
    callsPerDay: 20_000,
    before: async (index) => {
      const now = world.clock.now();
      if (index % 7 === 0 && (now < window[0] || now >= window[1])) await world.call('direct', 'cheap', direct, PASS_RATE);
    },
  });
  const view = await routesOf(world, 'main');
  const cheap = view.routes[0]?.candidates.find((candidate) => candidate.model === 'cheap');
  const missingReplays = world.engine.calls.get('missing') ?? 0;
  const certified = view.routes[0]?.served_model === 'cheap';
  const finding = `cheap: ${cheap?.errors ?? 0} replay errors counted apart from ${cheap?.evaluated ?? 0} scores, ${certified ? 'certified after the outage' : 'NOT certified'}; its direct caller: ${direct.productionErrors} failed calls of ${direct.calls}; the model without its file: replayed ${missingReplays} times`;
  const outcome = await result(
    world,
    "2. a candidate's outage",
    'main',
    tally,
    finding,
    certified && direct.productionErrors === 0 && missingReplays === 0 && (cheap?.errors ?? 0) > 0,
  );
  await world.close();
  return outcome;
}

/** 3: feedback posted ten times on one routed call counts once. */
async function feedbackStuffing(seed: number): Promise<ScenarioResult> {
  const world = await createWorld({
    seed,
    models: [model('reference', 'acme', 10, steady(1)), model('cheap', 'beta', 0.5, steady(0.995))],
  });
  await setContract(world, 'main', EXACT);
  const tally = await drive(world, { workload: 'main', requested: 'reference', calls: 4_000, callsPerDay: 20_000 });
  const before = (await routesOf(world, 'main')).routes[0]?.candidates.find((candidate) => candidate.model === 'cheap');
  const routed = await world.call('main', 'reference', tally, PASS_RATE);
  for (let post = 0; post < 10; post++)
    await world.handlers.feedback(world.key, JSON.stringify({ request_id: routed.requestId, pass: post % 2 === 0 }));
  const after = (await routesOf(world, 'main')).routes[0]?.candidates.find((candidate) => candidate.model === 'cheap');
  const added = (after?.evaluated ?? 0) - (before?.evaluated ?? 0);
  const outcome = await result(
    world,
    '3. feedback posted 10 times',
    'main',
    tally,
    `10 posts on one call added ${added} evaluation (the last: ${(after?.passed ?? 0) - (before?.passed ?? 0)} pass)`,
    routed.served === 'cheap' && added === 1,
  );
  await world.close();
  return outcome;
}

/** 4: the cheapest model is right every time but 200 times slower. */
async function slowModel(seed: number): Promise<ScenarioResult> {
  const world = await createWorld({
    seed,
    models: [
      model('reference', 'acme', 10, steady(1)),
      model('slow', 'beta', 0.2, steady(1), { latencyMs: 4_000 }),
      model('mid', 'gamma', 3, steady(0.999), { latencyMs: 25 }),
    ],
  });
  await setContract(world, 'main', EXACT);
  const tally = await drive(world, { workload: 'main', requested: 'reference', calls: 8_000, callsPerDay: 20_000 });
  const slow = (await routesOf(world, 'main')).routes[0]?.candidates.find((candidate) => candidate.model === 'slow');
  const servedSlow = tally.servedBy.get('slow') ?? 0;
  const outcome = await result(
    world,
    '4. a cheap model 200x slower',
    'main',
    tally,
    `slow model served ${servedSlow} calls (${slow?.state ?? '?'}: ${slow?.reason ?? ''}); mid served ${tally.servedBy.get('mid') ?? 0}`,
    servedSlow === 0 && slow?.state === 'eliminated',
  );
  await world.close();
  return outcome;
}

/** A ladder like the workload simulation's: the oracle serves c2. */
const ladder = (): SimulatedModelSpec[] => [
  model('reference', 'acme', 10, steady(1)),
  model('c1', 'beta', 0.3, steady(0.9)),
  model('c2', 'gamma', 0.8, steady(0.985)),
  model('c3', 'delta', 2, steady(0.995)),
  model('c4', 'epsilon', 5, steady(0.999)),
];

/** 5: what exploring costs against what it saves, with the default (auto) sample rate, and with a fixed rate of 1. */
async function economy(seed: number): Promise<ScenarioResult[]> {
  const runs: Array<[string, number, number, Partial<EvalContract>, number]> = [
    ['5a. 20,000 calls, auto sampling', 20_000, 20_000, EXACT, 0.65],
    ['5b. 2,000 calls a day for 5 days', 10_000, 2_000, EXACT, 0],
    ['5c. 20,000 calls, sample_rate 1', 20_000, 20_000, { ...EXACT, sample_rate: 1 }, Number.NEGATIVE_INFINITY],
  ];
  const results: ScenarioResult[] = [];
  for (const [name, calls, callsPerDay, contract, target] of runs) {
    const world = await createWorld({ seed, models: ladder() });
    await setContract(world, 'main', contract);
    const tally = await drive(world, { workload: 'main', requested: 'reference', calls, callsPerDay });
    const spend = await world.evalSpend('main');
    const saving = tally.referenceCost - tally.productionCost;
    const outcome = await result(
      world,
      name,
      'main',
      tally,
      `eval spend $${spend.toFixed(3)} = ${((100 * spend) / Math.max(saving, 1e-12)).toFixed(1)}% of the $${saving.toFixed(3)} saved; final model ${[...tally.servedBy].sort((a, b) => b[1] - a[1])[0]?.[0]}`,
      true,
    );
    outcome.met = target === 0 ? saving - spend > 0 : outcome.netVsOracle >= target;
    results.push(outcome);
    await world.close();
  }
  return results;
}

/** 6: free text, judged pairwise; one candidate always right, one right half the time. */
async function freeText(seed: number): Promise<ScenarioResult> {
  const world = await createWorld({
    seed,
    models: [
      model('reference', 'acme', 10, steady(1), { style: 'free_text', judgeAccuracy: 0.95 }),
      model('coin', 'beta', 0.2, steady(0.5), { style: 'free_text' }),
      model('good', 'gamma', 0.5, steady(1), { style: 'free_text' }),
    ],
  });
  const tally = await drive(world, { workload: 'main', requested: 'reference', calls: 8_000, callsPerDay: 20_000 });
  const view = await routesOf(world, 'main');
  const route = world.routes.route(world.scope('main'), 'reference');
  const shareOf = (id: string) => (route?.servedModel === id ? 1 : (route?.split?.shares.find((entry) => entry.model === id)?.share ?? 0));
  const judge = view.judges[0];
  const served = (id: string) => tally.servedBy.get(id) ?? 0;
  const finding = `default contract (relative): good serves ${(100 * shareOf('good')).toFixed(0)}% of calls (${served('good')} served), coin ${(100 * shareOf('coin')).toFixed(0)}% (${served('coin')}); judge ${judge?.model}: ${judge?.false_losses ?? 0} of ${judge?.self_checks ?? 0} self-checks wrong`;
  // Good is as good as the reference: it should take most of the calls; coin (right half the time) at most the share the bar allows (0.05 / 0.5 = 10%).
  const met = shareOf('good') >= 0.5 && shareOf('coin') <= 0.1 && tally.servedQuality >= 0.95 * tally.requestedQuality;
  const outcome = await result(world, '6. free text, judge right 95%', 'main', tally, finding, met);
  await world.close();
  return outcome;
}

/** 7: contract edits after a certification: the budget and sample rate, then the pass rate, then the checks. */
async function contractEdits(seed: number): Promise<ScenarioResult> {
  const world = await createWorld({ seed, models: [model('reference', 'acme', 10, steady(1)), model('cheap', 'beta', 0.5, steady(0.99))] });
  await setContract(world, 'main', EXACT);
  const tally = await drive(world, { workload: 'main', requested: 'reference', calls: 5_000, callsPerDay: 20_000 });
  const counts = async () => (await routesOf(world, 'main')).routes[0]?.candidates.find((entry) => entry.model === 'cheap')?.evaluated ?? 0;
  const served = () => servingModel(world, 'main', 'reference');
  const steps: string[] = [`certified: ${served()} serves, n=${await counts()}`];
  const budget = await setContract(world, 'main', { ...EXACT, daily_budget_usd: 20, sample_rate: 0.5 });
  steps.push(`budget and sample rate: evidence kept ${String(budget.evidence_kept)}, ${served()} serves, n=${await counts()}`);
  const keptRoute = served() === 'cheap';
  await setContract(world, 'main', { ...EXACT, daily_budget_usd: 20, sample_rate: 0.5, pass_rate: 0.995 });
  const strict = (await routesOf(world, 'main')).history[0];
  steps.push(`pass rate 0.995: ${served()} serves (${strict?.reason}: ${strict?.detail})`);
  const reset = await setContract(world, 'main', { checks: [{ type: 'agreement', method: 'json_equal' }], pass_rate: 0.95 });
  steps.push(`new checks: evidence kept ${String(reset.evidence_kept)}, n=${await counts()}`);
  const outcome = await result(
    world,
    '7. contract edits',
    'main',
    tally,
    steps.join('; '),
    keptRoute && budget.evidence_kept === true && strict?.reason === 'contract_changed' && reset.evidence_kept === false,
  );
  await world.close();
  return outcome;
}

/** 8: 300 calls at once: more samples than the router's queue holds. */
async function burst(seed: number): Promise<ScenarioResult> {
  const world = await createWorld({
    seed,
    models: [model('reference', 'acme', 10, steady(1)), model('cheap', 'beta', 0.5, steady(0.995), { latencyMs: 60 })],
    maxQueue: 64,
  });
  await setContract(world, 'main', { ...EXACT, sample_rate: 1 });
  const tally = newTally();
  await Promise.all(Array.from({ length: 300 }, () => world.call('main', 'reference', tally, PASS_RATE)));
  await world.router.idle();
  await drive(world, { workload: 'main', requested: 'reference', calls: 2_000, callsPerDay: 20_000 }, tally);
  const view = await routesOf(world, 'main');
  const dropped = view.routes[0]?.dropped_samples ?? 0;
  const outcome = await result(
    world,
    '8. a burst of 300 calls',
    'main',
    tally,
    `${dropped} samples dropped and shown (routes view, /metrics); ${tally.productionErrors} production errors`,
    dropped > 0 && tally.productionErrors === 0,
  );
  await world.close();
  return outcome;
}

/**
 * 9: a new workload's whole traffic in one burst, on the default contract
 * (no contract set): sampling must not read the burst as a day's traffic, or
 * the route gets a handful of samples and never switches.
 */
async function burstWorkload(seed: number): Promise<ScenarioResult> {
  const world = await createWorld({ seed, models: ladder() });
  const calls = 16_000;
  const tally = await drive(world, { workload: 'main', requested: 'reference', calls, callsPerDay: calls * (DAY_MS / (5 * 60_000)) });
  const spend = await world.evalSpend('main');
  const saving = tally.referenceCost - tally.productionCost;
  const view = await routesOf(world, 'main');
  const evaluated = view.routes[0]?.candidates.reduce((sum, candidate) => sum + candidate.evaluated, 0) ?? 0;
  const finding = `${evaluated} replies scored (tests, then checks of the serving model); eval spend $${spend.toFixed(3)}, saved $${saving.toFixed(3)}, net $${(saving - spend).toFixed(3)}; final model ${view.routes[0]?.served_model}`;
  const outcome = await result(
    world,
    '9. 16,000 calls in 5 minutes, default contract',
    'main',
    tally,
    finding,
    tally.firstSwitch !== null && saving - spend > 0 && tally.servedQuality >= 0.95 * tally.requestedQuality,
  );
  await world.close();
  return outcome;
}

/**
 * 10: a project of small workloads, on the default contract: twelve
 * workloads of 500 calls each, called in turn at 2,000 calls a workload a
 * day, the ladder's models. Alone, a workload this small earns its own first
 * share late or never; the project's pooled prior gives each one a share on
 * its neighbours' evidence, which its own samples then correct.
 */
async function smallWorkloads(seed: number): Promise<ScenarioResult> {
  const world = await createWorld({ seed, models: ladder() });
  const workloads = Array.from({ length: 12 }, (_, index) => `small-${index + 1}`);
  const tally = newTally();
  const start = world.clock.now();
  const calls = 500;
  for (let index = 0; index < calls; index++) {
    world.clock.set(Math.max(world.clock.now(), start + (index * DAY_MS) / 2_000));
    for (const workload of workloads) {
      await world.call(workload, 'reference', tally, PASS_RATE);
      await world.router.idle();
    }
  }
  let onPrior = 0;
  let spend = 0;
  for (const workload of workloads) {
    spend += await world.evalSpend(workload);
    const history = (await routesOf(world, workload)).history;
    if (history.some((change) => change.detail?.includes('on the prior of') === true)) onPrior += 1;
  }
  const saving = tally.referenceCost - tally.productionCost;
  const finding = `${onPrior} of ${workloads.length} workloads took a share on the project's prior; first call served cheaper ${tally.firstSwitch ?? 'never'} (of ${(calls * workloads.length).toLocaleString('en-US')}); eval spend $${spend.toFixed(3)}, saved $${saving.toFixed(3)}`;
  const met = onPrior >= workloads.length / 2 && saving - spend > 0 && tally.servedQuality >= 0.95 * tally.requestedQuality;
  const outcome = await result(
    world,
    '10. twelve small workloads of one project, default contract',
    workloads[0] ?? '',
    tally,
    finding,
    met,
  );
  // `result` counts one workload's eval spend: the net here is the project's.
  outcome.netVsOracle = (saving - spend) / (tally.referenceCost - tally.oracleCost);
  await world.close();
  return outcome;
}

export async function runScenarios(seed: number): Promise<ScenarioResult[]> {
  return [
    ...(await blindAfterBudget(seed)),
    await outage(seed),
    await feedbackStuffing(seed),
    await slowModel(seed),
    ...(await economy(seed)),
    await freeText(seed),
    await contractEdits(seed),
    await burst(seed),
    await burstWorkload(seed),
    await smallWorkloads(seed),
  ];
}

export function renderScenarios(results: readonly ScenarioResult[]): string {
  const percent = (value: number, digits = 1) => (Number.isFinite(value) ? `${(100 * value).toFixed(digits)}%` : 'n/a');
  const rows = results.map(
    (entry) =>
      `| ${entry.name} | ${entry.calls.toLocaleString('en-US')} | ${percent(entry.belowBar, 2)} | ${percent(entry.qualityRatio, 1)} | ${percent(entry.grossVsOracle)} / ${percent(entry.netVsOracle)} | ${entry.firstSwitch?.toLocaleString('en-US') ?? 'none'} | ${entry.finding} | ${entry.met ? 'met' : '**missed**'} |`,
  );
  return [
    '| scenario | calls | served below the bar | quality vs the requested model | saving vs oracle, gross / net of eval spend | calls to first switch | what happened | target |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
