/**
 * The router's relative default (`quality_bar` 0.95 in the default
 * contract) on one recorded workload: GPT-4 requested (R), Mixtral its one
 * cheaper candidate (C). The loop does what the worker does
 * (router-worker.ts `offer`, sample-processor.ts `processSample`), calling
 * the router's own pure functions for every decision:
 *
 * - Each call is drawn by `drawRoute`: to C with its certified share, else
 *   to the route's serving model. Time runs at the plan's calls a day (one
 *   call every 86,400 s / calls a day), counted by the router's traffic
 *   meter (`createTrafficMeter`), so the plan sees the traffic the router
 *   would, a young route's first hour unscaled.
 * - Sampling: a call C served is shadow-checked at `shadowRate`; a call is
 *   an exploration sample at `explorationRate` (the contract's fixed rate,
 *   or the plan's; a plan older than `planTtlMs` asks for one call to make a
 *   new one). A call drawn into a share explores nothing.
 * - A sample: R's reply is the reference, free when R served the call, else
 *   a replay of R (paid); an exploration sample of a call C served outright
 *   (not monitored) first remakes the plan and pays the reference only if
 *   the plan has candidates. A call C served is scored as monitoring; an
 *   exploration sample with a reference is replayed on each candidate of a
 *   plan made then (`planExploration` with `possibleShares`, the default
 *   contract's daily budget less the share kept for monitoring, the judge
 *   spend per judged reply smoothed as the worker does). Scoring is
 *   sample-judging.ts (every agreement graded until C's evidence holds
 *   `gradeAllAgreementsUntil` graded ones, then a random `gradeShare`).
 *   Every scored reply of C, monitoring or exploration, adds to its
 *   paired evidence; the monitoring outcomes feed the rollback
 *   detector (`updateCusum` at the worker's healthy rate), whose alarm
 *   resets C's evidence and cools it down for a day. Every
 *   `judgeSelfCheckEvery` judged samples a sample R served pays a second
 *   replay of R to check the judge (here the two replies are the same
 *   answer, so no judge is called and ε is never measured above its assumption).
 * - The grader is measured (sample-scoring.ts `scorePaired`): on a random
 *   `graderCheckShare` of the wins and losses it grades R's reply (paid as
 *   a grade, not recorded), counted `{compared, differed}` for the route's
 *   life (not reset by a demotion, as the worker's route state is not).
 * - The route: `decideSplit` on the evidence (the policy
 *   `relativePolicyOf(DEFAULT_CONTRACT, ε, gradeErrorOf(ε, graderChecks))`,
 *   the evidence `withoutGrades` when that is null, as route-changes.ts
 *   `decide` does; gold grades keep `variantPolicy`), costs per call at the last
 *   sampled call's tokens as the worker's call shape), after every sample
 *   up to 200 samples, then after every 1% more (the bounds are
 *   anytime-valid, so looking less often is still valid); applied as
 *   `applyDecision` does (`splitChanged`: a share that moved by less than a
 *   tenth of itself is not rewritten; another serving model, or C taking or
 *   losing its share, starts the detector and the plan again). A route whose shares went unchecked
 *   for `maxUnmonitoredCalls` falls back as `fallBack` does.
 * - Given its project's pool (paired-pool.ts), each decision passes
 *   `decideSplit` the prior's share (`priorShare` on the pool's fit, with
 *   the evidence and policy that decision reads), as route-changes.ts
 *   `decide` does; a share on the prior is watched at the pool's not-loss
 *   rate until the workload has `min_samples` of its own (`healthyRateOf`).
 * - Latency is taken as within the contract's limit (the data has none).
 * - Per-call policies (the variant's `perCall`: the contract's `per_call`),
 *   as the worker runs them: every scored reply of C that enters its
 *   evidence also trains its policies (`learnPolicy` on the call's prompt
 *   as one user message, at `relativePolicyOf(contract, ASSUMED_JUDGE_ERROR)`);
 *   a decision certifies the random share at `randomShareConfidence` and
 *   passes `decideSplit` the `offeredPolicies` and `policyPotentials`
 *   (route-changes.ts `decide`), after every sample; a call is drawn by
 *   `drawRoute` with its request, so a policy's share goes to the calls it
 *   picks. A call a policy picked is no random sample: its check enters the
 *   evidence only when it is an exploration sample and the plan tests C,
 *   else it feeds the rollback detector alone; the exploration replays skip
 *   the model that served the call; a demotion forgets the policies
 *   (sample-processor.ts `processSample`, route-changes.ts `demote`).
 *
 * A run is a stepper (`createRelativeRun`) so that a project's workloads
 * advance call by call side by side, each seeing the others' evidence at
 * the same simulated time; `simulateRelativeRouter` steps one alone.
 */
import { DEFAULT_CONTRACT, type EvalContract } from '../../../src/evals/eval-contract.js';
import { cusumOptionsFor, initialCusum, updateCusum, type CusumState } from '../../../src/routing/cusum.js';
import { planExploration, waitsForTraffic, type ExplorationPlan } from '../../../src/routing/exploration.js';
import type { GenerationParameters } from '../../../src/api/chat-types.js';
import { ASSUMED_JUDGE_ERROR, gradeErrorOf, relativePolicyOf } from '../../../src/routing/judge-error.js';
import type { JudgeCalibration } from '../../../src/routing/judge-ladder.js';
import {
  emptyPairedEvidence,
  pairedSampleCount,
  recordPairedSample,
  withoutGrades,
  type PairedEvidence,
} from '../../../src/routing/paired-quality.js';
import { certifiedPolicies, randomShareConfidence } from '../../../src/routing/policy-epochs.js';
import { priorShare, type PriorShare } from '../../../src/routing/pooled-prior.js';
import { splitChanged, splitModels } from '../../../src/routing/route-changes.js';
import { DEFAULT_ROUTING } from '../../../src/routing/route-decision.js';
import { learnPolicy, offeredPolicies, policyPotentials, type CandidatePolicies } from '../../../src/routing/route-policies.js';
import { drawRoute } from '../../../src/routing/route-reason.js';
import { dayOf, DEFAULT_ROUTER_SETTINGS, explorationRate, nextDayStart, type RouterSettings } from '../../../src/routing/router-context.js';
import { decideSplit, type SplitDecision } from '../../../src/routing/split-decision.js';
import { createTrafficMeter } from '../../../src/routing/traffic-meter.js';
import type { RouteSplit } from '../../../src/store/routing-store.js';
import { createRandom, seedFor } from '../random.js';
import type { RealWorkload } from './real-workloads.js';
import type { EvalSpend, PerCallOutcome, PoolView, RelativeOutcome, RelativeWorkloadRun, RouterRunPlan } from './relative-outcome.js';
import type { RecordedModel } from './routellm-data.js';
import { variantPolicy, type RelativeVariant } from './relative-variants.js';
import { judgeFor, scoreSample, type Judging, type ScoredSample } from './sample-judging.js';

/** The route is decided again after every sample up to this many, then after every 1% more. */
const EVERY_SAMPLE_UNTIL = 200;
const DAY_MS = 86_400_000;
/** The simulated clock starts at a UTC midnight, so a run's days are the eval budget's days. */
const START = Date.UTC(2026, 0, 5);
const ROUTE = 'workload';
/** The contract's evidence version: one for the whole run (no contract edit). */
const EVIDENCE_VERSION = 1;

/** Older names, still imported by the per-call measurement (per-call-policy.ts, per-call-samples.ts). */
export { JUDGE_OVERHEAD_TOKENS, PAIRED_SHARES, pairedContract } from './relative-variants.js';

export type { EvalSpend, PerCallOutcome, PoolView, RelativeOutcome, RelativeWorkloadRun, RouterRunPlan } from './relative-outcome.js';

/** One workload alone, every call in turn. */
export function simulateRelativeRouter(
  real: RealWorkload,
  models: { requested: RecordedModel; cheap: RecordedModel },
  plan: RouterRunPlan,
  variant: RelativeVariant,
  seed: number,
): RelativeOutcome {
  const run = createRelativeRun(real, models, plan, variant, seed);
  for (let call = 0; call < plan.calls; call += 1) run.step(call);
  return run.finish();
}

/** A workload's run; `pool` when it shares its project's evidence (paired-pool.ts), else on its own evidence alone. */
export function createRelativeRun(
  real: RealWorkload,
  models: { requested: RecordedModel; cheap: RecordedModel },
  plan: RouterRunPlan,
  variant: RelativeVariant,
  seed: number,
  pool?: PoolView,
): RelativeWorkloadRun {
  const settings: RouterSettings = DEFAULT_ROUTER_SETTINGS;
  // One stream for every variant (common random numbers): they draw the same calls until their routes differ.
  const random = createRandom(seedFor(seed, 'relative router', real.recorded.name));
  const { requested, cheap } = models;
  const perCall = variant.perCall === true;
  const contract: EvalContract = { ...DEFAULT_CONTRACT, sample_rate: plan.sampleRate, ...(perCall ? { per_call: true } : {}) };
  const goldPolicy = variant.grading === 'gold' ? variantPolicy(variant) : null;
  const judgePrice = (model: RecordedModel): RecordedModel => (variant.judgePrice === 'cheap' ? cheap : model);
  const judging: Judging = {
    error: variant.judgeError,
    grading: variant.grading,
    pairwiseJudge: judgePrice(judgeFor(cheap, [requested, cheap])),
    gradeJudge: judgePrice(judgeFor(requested, [requested, cheap])),
    gradeShare: settings.gradeShare,
    graderCheckShare: settings.graderCheckShare,
  };
  const meter = createTrafficMeter();
  const spacing = DAY_MS / plan.callsPerDay;
  const budget = contract.daily_budget_usd;
  const usdAt = (tokens: number, model: RecordedModel): number => (tokens * model.pricePerMillionTokens) / 1e6;

  let evidence: PairedEvidence = emptyPairedEvidence();
  let shapeTokens = 2; // NO_CALL_SHAPE: a token each way until a call is sampled
  let cooldownUntil = 0;
  let route: { servedModel: string; split: RouteSplit | null } = { servedModel: requested.name, split: null };
  const view: { plan: ExplorationPlan | null; planAt: number; planAskedAt: number } = {
    plan: null,
    planAt: 0,
    planAskedAt: Number.NEGATIVE_INFINITY,
  };
  let detector: CusumState | null = null;
  let detectorModel: string | null = null;
  const probation = new Set<string>();
  let uncheckedCalls = 0;
  let judgeCostPerEval = 0;
  let judgedSamples = 0;
  let nextSelfCheckAt = 1;
  let lastJudge: string | null = null;
  let spentDay = '';
  let spentToday = 0;
  const days = Math.max(1, Math.ceil(plan.calls / plan.callsPerDay));
  const daily = new Float64Array(days);
  const dailyExploration = new Array<number>(days).fill(0);
  const spend: EvalSpend = { candidateReplays: 0, referenceReplays: 0, verdicts: 0, grades: 0, selfChecks: 0 };
  const outcome = {
    samples: { exploration: 0, monitoring: 0 },
    lastExplorationCall: null as number | null,
    firstSavingCall: null as number | null,
    demotions: 0,
    fallbacks: 0,
  };
  const served = { right: 0, requestedRight: 0, rightLater: 0, requestedRightLater: 0 };
  let requestedCost = 0;
  let production = 0;
  let wholeFromCall: number | null = null;
  const graderChecks: JudgeCalibration = {};
  let gradeError: number | null = goldPolicy?.gradeError ?? variant.judgeError;
  /** The route's per-call policies (route-policies.ts; empty unless `perCall`), and what they learn with (sample-processor.ts `learning`). */
  const policies = new Map<string, CandidatePolicies>();
  const learning = perCall ? relativePolicyOf(contract, ASSUMED_JUDGE_ERROR) : null;
  const perCallOutcome: Omit<PerCallOutcome, 'policy' | 'best' | 'policiesMade' | 'learned'> = {
    firstPolicyCall: null,
    policyCalls: 0,
    pickedChecks: { counted: 0, uncounted: 0 },
  };
  /** The call's request as the worker's sample carries it: the prompt's text as one user message. */
  const requestOf = (call: number): GenerationParameters => ({
    messages: [{ role: 'user', content: real.recorded.prompts[real.promptOf(call)]?.text ?? '' }],
  });

  /** The grader's error from its checks (gold grades keep theirs), and the evidence as a decision reads it at that error. */
  const certifyingPolicy = (error: number | null) => goldPolicy ?? relativePolicyOf(DEFAULT_CONTRACT, variant.judgeError, error);
  const gradeErrorNow = (): number | null =>
    goldPolicy === null ? gradeErrorOf(variant.judgeError, graderChecks) : (goldPolicy.gradeError ?? 0);
  const readable = (error: number | null): PairedEvidence => (goldPolicy === null && error === null ? withoutGrades(evidence) : evidence);
  /** route-changes.ts `decide`: ε is the variant's (the self-checks never measure more here); the grader's error from its checks; the project's prior when there is a pool. */
  const decide = (now: number): SplitDecision => {
    gradeError = gradeErrorNow();
    const paired = readable(gradeError);
    const certifying = certifyingPolicy(gradeError);
    const gradesDropped = goldPolicy === null && gradeError === null;
    // With per_call the random share is certified at 1 − 0.8α, the policies share the rest (route-changes.ts `decide`).
    const policy = perCall ? { ...certifying, confidence: randomShareConfidence(certifying.confidence) } : certifying;
    // Latency is within the limit here; before the workload has 20 latencies of its own, the product judges it over the pool, which has them.
    const fit = pool?.fit(policy) ?? null;
    const prior: PriorShare | undefined =
      fit === null
        ? undefined
        : {
            model: cheap.name,
            share: priorShare(fit, paired, policy),
            workloads: fit.workloads,
            samples: fit.samples,
            notLossRate: fit.notLossRate,
          };
    return decideSplit({
      requestedModel: requested.name,
      requestedCostPerCall: usdAt(shapeTokens, requested),
      candidates: [
        {
          model: cheap.name,
          costPerCall: usdAt(shapeTokens, cheap),
          paired,
          constraintsEvaluated: 0,
          constraintsPassed: 0,
          errors: 0,
          latency: { state: 'ok' },
          coolingDown: cooldownUntil > now,
        },
      ],
      policy,
      ...(prior === undefined ? {} : { prior }),
      ...(perCall
        ? {
            policies: offeredPolicies(policies, EVIDENCE_VERSION, certifying, gradesDropped),
            policyPotentials: policyPotentials(policies, EVIDENCE_VERSION, certifying, gradesDropped),
          }
        : {}),
    });
  };
  let decision = decide(START);
  let decidedCooling = false;
  let nextDecisionAt = 1;

  /**
   * applyDecision: the shares are rewritten only when `splitChanged`; another
   * serving model, or a model taking or losing a share, resets the detector,
   * the unchecked-call count and the plan.
   */
  const apply = (next: SplitDecision, now: number): void => {
    const held = route.split;
    const offered: RouteSplit | null =
      next.shares.length > 0
        ? {
            shares: next.shares,
            requestedLower: next.requestedLower,
            qualityBar: contract.quality_bar ?? 1,
            confidence: contract.confidence,
            contractVersion: 1,
            at: now,
          }
        : null;
    const split = splitChanged(held, offered) ? offered : held;
    if (next.servedModel === route.servedModel && split === held) return;
    const from = route.servedModel;
    route = { servedModel: next.servedModel, split };
    if (next.servedModel !== from) wholeFromCall = next.servedModel === cheap.name ? Math.round((now - START) / spacing) : null;
    if (next.servedModel === from && splitModels(held) === splitModels(split)) return;
    detector = null;
    detectorModel = null;
    uncheckedCalls = 0;
    view.plan = null;
  };
  const decideNow = (now: number): void => {
    decision = decide(now);
    decidedCooling = cooldownUntil > now;
    const samples = pairedSampleCount(evidence);
    // With per-call policies after every sample, as the worker: a policy's certificate is not the random share's, and it may overtake it between two looks.
    nextDecisionAt = samples < EVERY_SAMPLE_UNTIL || perCall ? samples + 1 : Math.ceil(samples * 1.01);
    apply(decision, now);
  };
  const decideWhenDue = (now: number): void => {
    if (pairedSampleCount(evidence) >= nextDecisionAt || cooldownUntil > now !== decidedCooling) decideNow(now);
  };

  const pay = (kind: keyof EvalSpend, usd: number, now: number): void => {
    if (usd === 0) return;
    spend[kind] += usd;
    spentToday += usd;
    const day = Math.min(daily.length - 1, Math.floor((now - START) / DAY_MS));
    daily[day] = (daily[day] ?? 0) + usd;
  };
  const monitorBudgetLeft = (): number => budget - spentToday;
  const exploreBudgetLeft = (): number => budget * (1 - settings.monitorBudgetShare) - spentToday;

  const replan = (now: number): ExplorationPlan => {
    const traffic = meter.traffic(ROUTE, now);
    const servedCost = usdAt(shapeTokens, decision.servedModel === requested.name ? requested : cheap);
    const made = planExploration({
      policy: {
        passRate: contract.pass_rate,
        confidence: contract.confidence,
        minSamples: contract.min_samples,
        maxSamples: DEFAULT_ROUTING.maxSamples,
      },
      decision,
      servedCostPerCall: servedCost,
      referenceCostPerSample: decision.servedModel === requested.name ? 0 : usdAt(shapeTokens, requested),
      judgeCostPerEval,
      callsPerDay: traffic.callsPerDay,
      callsSeen: traffic.seen,
      horizonDays: settings.horizonDays,
      fixedRate: contract.sample_rate === 'auto' ? null : contract.sample_rate,
      budgetLeftToday: Math.max(0, exploreBudgetLeft()),
      maxSamplesPerDay: settings.maxSamplesPerDay,
      samplesToday: traffic.samplesToday,
      possibleShares: decision.possibleShares,
    });
    view.plan = made;
    view.planAt = waitsForTraffic(made, { ageMs: traffic.ageMs }) ? 0 : now;
    return made;
  };

  /** One reply of Mixtral scored against GPT-4's: the judge spend, the smoothed judge cost per judged reply, the grader's checks (not yet its evidence: `count`). */
  const judge = (prompt: RealWorkload['prompts'][number], now: number): ScoredSample => {
    // sample-scoring.ts `gradesAllAgreements`: every agreement is graded until the candidate's evidence holds `gradeAllAgreementsUntil` graded ones.
    const scored = scoreSample(prompt, judging, random, evidence.same.right + evidence.same.wrong < settings.gradeAllAgreementsUntil);
    pay('verdicts', scored.verdictUsd, now);
    pay('grades', scored.gradeUsd, now);
    if (scored.judges.length > 0) {
      const judgeUsd = scored.verdictUsd + scored.gradeUsd;
      judgedSamples += 1;
      judgeCostPerEval = judgeCostPerEval === 0 ? judgeUsd : 0.9 * judgeCostPerEval + 0.1 * judgeUsd;
      lastJudge = scored.judges[scored.judges.length - 1] ?? lastJudge;
    }
    if (scored.graderCheck !== undefined) {
      const counts = graderChecks[scored.graderCheck.grader] ?? { compared: 0, differed: 0 };
      graderChecks[scored.graderCheck.grader] = {
        compared: counts.compared + 1,
        differed: counts.differed + Number(scored.graderCheck.differed),
      };
    }
    return scored;
  };
  /** A scored reply enters Mixtral's paired evidence, and trains its per-call policies (sample-processor.ts `learn`). */
  const count = (call: number, scored: ScoredSample): void => {
    evidence = recordPairedSample(evidence, scored.sample);
    if (learning !== null) learnPolicy(policies, cheap.name, EVIDENCE_VERSION, requestOf(call), scored.sample, learning);
  };
  /** Scored and counted: true when not a loss. */
  const score = (call: number, prompt: RealWorkload['prompts'][number], now: number): boolean => {
    const scored = judge(prompt, now);
    count(call, scored);
    return scored.sample.outcome !== 'loss';
  };

  const demote = (now: number): void => {
    const inSplit = route.split?.shares.some((entry) => entry.model === cheap.name) === true;
    if (route.servedModel !== cheap.name && !inSplit) return;
    outcome.demotions += 1;
    evidence = emptyPairedEvidence();
    // Its policies learned from the evidence just forgotten (route-changes.ts `demote`).
    policies.delete(cheap.name);
    cooldownUntil = now + settings.cooldownMs;
    decideNow(now);
  };

  /**
   * The rollback detector on a monitored reply (sample-processor.ts `watch`, at `healthyRateOf`'s rate); true when it demoted.
   * A share on the prior, before the workload has `min_samples` of its own, is held to the pool's not-loss rate: a few own samples cannot tell it.
   */
  const watch = (model: string, passed: boolean, now: number): boolean => {
    const evaluated = pairedSampleCount(evidence);
    const losses = evidence.loss.right + evidence.loss.wrong + evidence.loss.ungraded;
    const pooledRate = route.split?.shares.find((entry) => entry.model === model)?.pooled?.notLossRate;
    const rate =
      pooledRate !== undefined && evaluated < contract.min_samples ? pooledRate : evaluated === 0 ? null : (evaluated - losses) / evaluated;
    const options = cusumOptionsFor(rate === null ? contract.pass_rate : Math.min(0.99, Math.max(0.5, rate)));
    if (detectorModel !== model) {
      detector = probation.delete(model) ? { statistic: options.threshold / 2, observed: 0 } : initialCusum();
      detectorModel = model;
    }
    const updated = updateCusum(detector ?? initialCusum(), passed, options);
    detector = updated.state;
    if (!updated.alarm) return false;
    demote(now);
    return true;
  };

  const fallBack = (now: number): void => {
    const unchecked = route.servedModel !== requested.name || (route.split?.shares.length ?? 0) > 0;
    if (!unchecked) return;
    outcome.fallbacks += 1;
    const spent = dayOf(now) === spentDay ? spentToday : 0;
    cooldownUntil = spent >= budget ? nextDayStart(now) : now + settings.unmonitoredRetryMs;
    probation.add(cheap.name);
    decideNow(now);
  };

  const processSample = (
    call: number,
    prompt: RealWorkload['prompts'][number],
    servedModel: string,
    monitor: boolean,
    explore: boolean,
    now: number,
  ): void => {
    const routed = servedModel !== requested.name;
    shapeTokens = prompt.tokens.prompt + (routed ? prompt.tokens.cheapCompletion : prompt.tokens.requestedCompletion);
    const day = dayOf(now);
    if (day !== spentDay) {
      spentDay = day;
      spentToday = 0;
    }
    const shareEntry = route.split?.shares.find((entry) => entry.model === servedModel);
    // A call drawn into a random share explores nothing; one a per-call policy picked is no random sample (sample-processor.ts).
    const drawn = shareEntry !== undefined && shareEntry.policy === undefined;
    const picked = shareEntry?.policy !== undefined;
    // A sample taken to remake a stale plan of a call C served outright pays no reference when the new plan has nothing to test.
    const exploring = explore && !drawn && (!routed || monitor || replan(now).candidates.length > 0);
    const wanted = (monitor && monitorBudgetLeft() > 0) || (exploring && exploreBudgetLeft() > 0);
    let reference = !routed;
    if (routed && wanted) {
      pay('referenceReplays', prompt.requestedCost, now);
      reference = true;
    }
    if (routed && (monitor || reference) && monitorBudgetLeft() > 0) {
      const scored = judge(prompt, now);
      // A picked call counts when an unpicked one would have: sampled for exploration while the plan tests its model.
      const counted = !picked || (exploring && replan(now).candidates.includes(servedModel));
      if (counted) count(call, scored);
      if (picked) perCallOutcome.pickedChecks[counted ? 'counted' : 'uncounted'] += 1;
      const passed = scored.sample.outcome !== 'loss';
      outcome.samples.monitoring += 1;
      uncheckedCalls = 0;
      if (watch(servedModel, passed, now)) return;
    }
    if (exploring && exploreBudgetLeft() > 0 && reference) {
      const made = replan(now);
      if (made.candidates.length > 0) meter.observeSample(ROUTE, now);
      for (const candidate of made.candidates) {
        if (exploreBudgetLeft() <= 0) break;
        // The model that served the call was scored on its own reply above.
        if (candidate === servedModel || candidate !== cheap.name) continue;
        pay('candidateReplays', prompt.cheapCost, now);
        score(call, prompt, now);
        outcome.samples.exploration += 1;
        outcome.lastExplorationCall = call;
        const day = Math.floor(call / plan.callsPerDay);
        dailyExploration[day] = (dailyExploration[day] ?? 0) + 1;
      }
      if (!routed && lastJudge !== null && judgedSamples >= nextSelfCheckAt) {
        nextSelfCheckAt = judgedSamples + settings.judgeSelfCheckEvery;
        pay('selfChecks', prompt.requestedCost, now);
      }
    }
    decideWhenDue(now);
    replan(now);
  };

  const firstFifth = Math.floor(plan.calls / 5);
  let shareSum = 0;
  let priorCalls = 0;
  const step = (call: number): void => {
    const now = START + call * spacing;
    const prompt = real.prompts[real.promptOf(call)];
    if (prompt === undefined) throw new Error(`no prompt for call ${call}`);
    meter.observe(ROUTE, now);
    const held = route.split?.shares.find((entry) => entry.model === cheap.name);
    // A policy's share is of the calls it picks: of all calls, × the share of its held-out samples it picked.
    shareSum += route.servedModel === cheap.name ? 1 : (held?.share ?? 0) * (held?.policy?.routedShare ?? 1);
    if (route.servedModel !== cheap.name && held?.pooled !== undefined) priorCalls += 1;
    const draw = drawRoute(
      { servedModel: route.servedModel, pinnedModel: null, split: route.split },
      requested.name,
      random,
      perCall ? requestOf(call) : undefined,
    );
    const servedModel = draw.model;
    if (draw.policy) {
      perCallOutcome.policyCalls += 1;
      perCallOutcome.firstPolicyCall ??= call;
    }
    const routed = servedModel !== requested.name;
    if (routed && outcome.firstSavingCall === null) outcome.firstSavingCall = call;
    const right = routed ? prompt.cheapCorrect : prompt.requestedCorrect;
    requestedCost += prompt.requestedCost;
    production += routed ? prompt.cheapCost : prompt.requestedCost;
    served.right += Number(right);
    served.requestedRight += Number(prompt.requestedCorrect);
    if (call >= firstFifth) {
      served.rightLater += Number(right);
      served.requestedRightLater += Number(prompt.requestedCorrect);
    }
    if (routed) {
      uncheckedCalls += 1;
      if (uncheckedCalls > settings.maxUnmonitoredCalls) fallBack(now);
    }
    const monitor = routed && random() < settings.shadowRate;
    const explore = random() < explorationRate(view, contract.sample_rate, now, settings);
    if (monitor || explore) processSample(call, prompt, servedModel, monitor, explore, now);
  };

  const finish = (): RelativeOutcome => {
    const whole = route.servedModel === cheap.name;
    const entry = route.split?.shares.find((share) => share.model === cheap.name);
    const held = policies.get(cheap.name)?.epochs;
    const best = held === undefined ? null : certifiedPolicies(held, certifyingPolicy(gradeErrorNow())).best;
    const bestEpoch = held?.epochs.find((epoch) => epoch.epoch === best?.epoch);
    return {
      ...outcome,
      share: whole ? 1 : (entry?.share ?? 0) * (entry?.policy?.routedShare ?? 1),
      wholeFromCall,
      diffLower: decision.verdicts.find((verdict) => verdict.model === cheap.name)?.lower ?? Number.NEGATIVE_INFINITY,
      requestedLower: decision.requestedLower,
      requestedCost,
      production,
      spend,
      maxDailyEvaluation: Math.max(...daily),
      served,
      daily: { exploration: dailyExploration },
      graderChecks: Object.values(graderChecks).reduce(
        (sum, counts) => ({ compared: sum.compared + counts.compared, differed: sum.differed + counts.differed }),
        { compared: 0, differed: 0 },
      ),
      gradeError,
      meanShare: shareSum / plan.calls,
      priorCalls,
      ...(perCall
        ? {
            perCall: {
              ...perCallOutcome,
              policy:
                entry?.policy === undefined
                  ? null
                  : { epoch: entry.policy.epoch, share: entry.share, routedShare: entry.policy.routedShare, samples: entry.samples },
              best:
                best === null || bestEpoch === undefined
                  ? null
                  : {
                      epoch: best.epoch,
                      callShare: best.callShare,
                      routedShare: best.routedShare,
                      heldOut: held === undefined ? 0 : held.samples - bestEpoch.madeAt,
                    },
              policiesMade: held?.made ?? 0,
              learned: held?.samples ?? 0,
            },
          }
        : {}),
    };
  };

  return { step, evidence: () => readable(gradeErrorNow()), samples: () => pairedSampleCount(evidence), finish };
}
