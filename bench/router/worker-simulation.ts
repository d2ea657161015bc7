/**
 * One workload's calls, served and evaluated as taskgate's router worker does
 * it, with the real decision code (src/routing):
 *
 * - every call is served by the current route and costs the served model's
 *   price (production spend);
 * - the call is sampled at the exploration plan's rate and replayed on the
 *   plan's candidates (exploration.ts: those whose tests are expected to
 *   save more than they cost, at a workload of `callsPerDay`; the daily
 *   budget is not modelled), or, for the naive rule, at a fixed
 *   `sampleRate` on every candidate in `toTest`, cheapest first, each replay
 *   costing that candidate's price (eval spend) and scored by agreement with
 *   the reference's answer; the route is decided again after each sample;
 * - with probability `shadowRate`, while a cheaper model serves, the call is
 *   also sent to the reference (eval spend) and the served reply scored; a
 *   sampled call needs the reference's answer too, so it is scored the same
 *   way. Each score feeds the CUSUM; an alarm demotes the served model at
 *   once: it cools down for `cooldownCalls` calls, its counts start again
 *   from zero, and the route falls back to the next certified candidate or
 *   the reference;
 * - when the reference serves, its production reply is the reference answer,
 *   so a sampled call costs only the replays.
 *
 * What each call costs and whether a reply agrees with the reference's come
 * from a call source (call-source.ts): the synthetic task by default, a
 * recorded data set's per-prompt answers in the real-data mode.
 *
 * Spend and quality are added per bucket of calls into shared totals, so the
 * report can show them over time; the daily eval budget is not modelled.
 */
import { planExploration } from '../../src/routing/exploration.js';
import { decideRoute, routeFromVerdicts, type CandidateEvidence, type RouteDecision } from '../../src/routing/route-decision.js';
import { DEFAULT_ROUTER_SETTINGS } from '../../src/routing/router-context.js';
import { initialCusum, updateCusum, type CusumState } from '../../src/routing/cusum.js';
import { syntheticCalls, type CallSource } from './call-source.js';
import { judgeNaively } from './comparison-rules.js';
import { createRandom, seedFor } from './random.js';
import { cusumFor, policyFor, type RouterSettings } from './settings.js';
import { trueRateAt, type SimulatedModel, type Workload } from './workloads.js';

/** Per-bucket sums over every simulated workload. */
export interface Totals {
  bucketCalls: number;
  calls: Float64Array;
  production: Float64Array;
  reference: Float64Array;
  oracle: Float64Array;
  evaluation: Float64Array;
  /** Calls served by a model whose true rate is below pass_rate - BAD_MARGIN. */
  bad: Float64Array;
  /** The part of `bad` served by a drifted model after its drift (the rest: certified while already bad). */
  badAfterDrift: Float64Array;
  /** Calls served by a model whose true rate is below pass_rate (no margin). */
  belowThreshold: Float64Array;
}

export interface WorkloadOutcome {
  workload: number;
  certifications: Array<{ model: string; trueRate: number; passRate: number; evaluated: number }>;
  demotions: Array<{ model: string; trueRate: number; passRate: number; atCall: number }>;
  /**
   * Served calls on the drifted model from the drift until the detector
   * demoted it (`demoted`), a cheaper certified model replaced it
   * (`replaced`) or the run ended (`still serving`); null when it was not
   * serving at the drift.
   */
  driftCaught: { servedCalls: number; end: 'demoted' | 'replaced' | 'still serving' } | null;
  finalModel: string;
  /** The route's history: from call `atCall` on, `model` served (the first entry is the reference at call 0). */
  servedFrom: Array<{ atCall: number; model: string }>;
}

export const BAD_MARGIN = 0.02;

export function createTotals(calls: number, buckets: number): Totals {
  const bucketCalls = Math.ceil(calls / buckets);
  const array = (): Float64Array => new Float64Array(buckets);
  return {
    bucketCalls,
    calls: array(),
    production: array(),
    reference: array(),
    oracle: array(),
    evaluation: array(),
    bad: array(),
    badAfterDrift: array(),
    belowThreshold: array(),
  };
}

interface Evidence extends CandidateEvidence {
  source: SimulatedModel;
  coolingUntil: number;
  /** Reported as certified since its counts last started. */
  certified: boolean;
}

export function simulateWorkload(
  workload: Workload,
  settings: RouterSettings,
  totals: Totals,
  seed: number,
  callSource: CallSource = syntheticCalls(workload),
): WorkloadOutcome {
  const random = createRandom(seedFor(seed, settings.rule, 'calls', workload.id));
  const policy = policyFor(settings, workload.passRate);
  const cusumOptions = cusumFor(settings, workload.passRate);
  const reference = workload.reference;
  const evidence: Evidence[] = workload.candidates.map((source) => ({
    model: source.name,
    costPerCall: source.costPerCall,
    evaluated: 0,
    passed: 0,
    errors: 0,
    source,
    coolingUntil: -1,
    certified: false,
  }));
  const byName = new Map(workload.candidates.map((model) => [model.name, model]));
  const outcome: WorkloadOutcome = {
    workload: workload.id,
    certifications: [],
    demotions: [],
    driftCaught: null,
    finalModel: reference.name,
    servedFrom: [{ atCall: 0, model: reference.name }],
  };
  const driftAt = workload.drift?.atCall ?? Number.POSITIVE_INFINITY;

  let call = 0;
  let planned: { decision: RouteDecision; plan: { candidates: string[]; sampleRate: number } } | null = null;
  let decision: RouteDecision = decide();
  let served = reference;
  let cusum: CusumState = initialCusum();
  let servedRate = 1;
  let oracle = oracleAt(0);
  let driftWatch: { servedCalls: number } | null = null;
  let nextCooldownEnd = Number.POSITIVE_INFINITY;
  applyDecision();

  /** What to replay on and how often: the worker's plan (taskgate), or every candidate under test at a fixed rate. */
  function explorationOf(current: RouteDecision): { candidates: string[]; sampleRate: number } {
    if (settings.sampleRate !== 'auto') return { candidates: current.toTest, sampleRate: settings.sampleRate };
    if (planned?.decision === current) return planned.plan;
    const plan = planExploration({
      policy,
      decision: current,
      servedCostPerCall: served.costPerCall,
      referenceCostPerSample: served === reference ? 0 : reference.costPerCall,
      judgeCostPerEval: 0,
      callsPerDay: settings.callsPerDay,
      horizonDays: DEFAULT_ROUTER_SETTINGS.horizonDays,
      fixedRate: null,
      budgetLeftToday: Number.POSITIVE_INFINITY,
      maxSamplesPerDay: DEFAULT_ROUTER_SETTINGS.maxSamplesPerDay,
    });
    planned = { decision: current, plan };
    return plan;
  }

  function decide(): RouteDecision {
    for (const candidate of evidence) candidate.coolingDown = call < candidate.coolingUntil;
    const input = { requestedModel: reference.name, requestedCostPerCall: reference.costPerCall, candidates: evidence, policy };
    if (settings.rule === 'taskgate') return decideRoute(input);
    return routeFromVerdicts({ ...input, verdicts: evidence.map((candidate) => judgeNaively(candidate, policy)) });
  }

  function applyDecision(): void {
    for (const verdict of decision.verdicts) {
      const candidate = evidence.find((item) => item.model === verdict.model);
      if (candidate === undefined || verdict.state !== 'certified' || candidate.certified) continue;
      candidate.certified = true;
      outcome.certifications.push({
        model: verdict.model,
        trueRate: trueRateAt(workload, candidate.source, call),
        passRate: workload.passRate,
        evaluated: verdict.evaluated,
      });
    }
    const next = byName.get(decision.servedModel) ?? reference;
    if (next !== served) {
      if (driftWatch !== null && served.name === workload.drift?.model) {
        outcome.driftCaught = { servedCalls: driftWatch.servedCalls, end: 'replaced' };
        driftWatch = null;
      }
      served = next;
      outcome.servedFrom.push({ atCall: call, model: served.name });
      cusum = initialCusum();
    }
    servedRate = trueRateAt(workload, served, call);
  }

  function oracleAt(at: number): SimulatedModel {
    return workload.candidates.find((candidate) => trueRateAt(workload, candidate, at) >= workload.passRate) ?? reference;
  }

  function demote(): void {
    const demoted = evidence.find((candidate) => candidate.model === served.name);
    if (demoted === undefined) return;
    outcome.demotions.push({ model: served.name, trueRate: servedRate, passRate: workload.passRate, atCall: call });
    if (driftWatch !== null && served.name === workload.drift?.model) {
      outcome.driftCaught = { servedCalls: driftWatch.servedCalls, end: 'demoted' };
      driftWatch = null;
    }
    demoted.coolingUntil = call + settings.cooldownCalls;
    demoted.evaluated = 0;
    demoted.passed = 0;
    demoted.certified = false;
    nextCooldownEnd = Math.min(nextCooldownEnd, demoted.coolingUntil);
    decision = decide();
    applyDecision();
  }

  const bucketCalls = totals.bucketCalls;
  for (; call < workload.calls; call += 1) {
    if (call === driftAt) {
      oracle = oracleAt(call);
      servedRate = trueRateAt(workload, served, call);
      if (served.name === workload.drift?.model) driftWatch = { servedCalls: 0 };
    }
    if (call >= nextCooldownEnd) {
      nextCooldownEnd = Math.min(
        ...evidence.map((candidate) => (candidate.coolingUntil > call ? candidate.coolingUntil : Number.POSITIVE_INFINITY)),
      );
      decision = decide();
      applyDecision();
    }

    const bucket = Math.floor(call / bucketCalls);
    add(totals.calls, bucket, 1);
    add(totals.production, bucket, callSource.cost(call, served));
    add(totals.reference, bucket, callSource.cost(call, reference));
    add(totals.oracle, bucket, callSource.cost(call, oracle));
    if (servedRate < workload.passRate) {
      add(totals.belowThreshold, bucket, 1);
      if (servedRate < workload.passRate - BAD_MARGIN) {
        add(totals.bad, bucket, 1);
        if (call >= driftAt && served.name === workload.drift?.model) add(totals.badAfterDrift, bucket, 1);
      }
    }
    if (driftWatch !== null && served.name === workload.drift?.model) driftWatch.servedCalls += 1;

    const explore = explorationOf(decision);
    const sampled = explore.candidates.length > 0 && random() < explore.sampleRate;
    const shadowed = served !== reference && random() < settings.shadowRate;
    if (!sampled && !shadowed) continue;
    const agreesWithReference = callSource.score(call, random);
    if (served !== reference) {
      add(totals.evaluation, bucket, callSource.cost(call, reference));
      const result = updateCusum(cusum, agreesWithReference(served), cusumOptions);
      cusum = result.state;
      if (result.alarm) demote();
    }
    if (!sampled) continue;
    for (const name of explore.candidates) {
      const candidate = evidence.find((item) => item.model === name);
      if (candidate === undefined) continue;
      add(totals.evaluation, bucket, callSource.cost(call, candidate.source));
      candidate.evaluated += 1;
      if (agreesWithReference(candidate.source)) candidate.passed += 1;
    }
    decision = decide();
    applyDecision();
  }
  if (driftWatch !== null) outcome.driftCaught = { servedCalls: driftWatch.servedCalls, end: 'still serving' };
  outcome.finalModel = served.name;
  return outcome;
}

function add(values: Float64Array, index: number, amount: number): void {
  values[index] = (values[index] ?? 0) + amount;
}
