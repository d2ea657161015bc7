/**
 * `GET /v1/projects/{p}/workloads/{w}/routes`: what the router decided for a
 * workload and on what evidence. Per requested model: its phase
 * (route-lifecycle.ts), the model serving, its certificate, shares and
 * fallbacks, every candidate's counts, bounds, latency and state; what the
 * route saved, what its evaluation cost, and the net;
 * how it explores (the sample rate and the plan's expected net) and how its
 * serving model is watched (calls since the last check, and why a check
 * failed); samples dropped under load. For the workload: the eval spend of
 * the day against its budget, and each judge's own measured error.
 *
 * The candidates are the router's own verdicts of its last decision, in its
 * order (cheapest first at the cost per call it ranks by), as the router
 * process reports them (`RouteActivity.verdicts`, the leader's state on a
 * follower). Only while the router has not decided on the route under the
 * evidence in force (none yet, a restart of an older leader, a contract edit
 * not yet decided on) are they judged here from the evidence, the absolute
 * way, and the route says so (`verdicts_from: 'evidence'`).
 */
import { costOf, type Catalog, type CatalogModel } from '../catalog/catalog.js';
import { DEFAULT_CONTRACT, parseEvalContract, qualitySemantics, type QualitySemantics } from '../evals/eval-contract.js';
import { judgeLatency, latencyLimitMs, latencyPolicyOf, percentileOf } from '../routing/latency-limit.js';
import { catalogPrices, costAt, type PriceOf } from '../routing/model-prices.js';
import { sketchesOf } from '../routing/decide-from-evidence.js';
import { pairedSampleCount } from '../routing/paired-quality.js';
import { judgeCandidate, DEFAULT_ROUTING, type CandidateVerdict, type DecisionPolicy } from '../routing/route-decision.js';
import { phaseOf } from '../routing/route-lifecycle.js';
import type { RouterWorker } from '../routing/router-worker.js';
import type { Scope } from '../api/scope.js';
import type { CandidateCounts, ModelUsage, RouteRecord } from '../store/routing-store.js';
import type { Store } from '../store/store.js';

export interface RoutesViewDependencies {
  store: Store;
  catalog: Catalog;
  /** Activity of the routes in this process (sampling, monitoring, drops); absent: not shown. */
  router?: Pick<RouterWorker, 'activity'>;
  /** The price savings are counted at (`routing.cost`, as eval spend is); the catalog's when absent. */
  priceOf?: PriceOf;
  now?: () => number;
}

const empty = (requestedModel: string, candidateModel: string, contractVersion: number): CandidateCounts => ({
  requestedModel,
  candidateModel,
  contractVersion,
  evaluated: 0,
  passed: 0,
  errors: 0,
  promptTokens: 0,
  completionTokens: 0,
  costUsd: 0,
  latencyMsTotal: 0,
  latency: null,
  ttft: null,
  paired: {
    same: { right: 0, wrong: 0, ungraded: 0 },
    win: { right: 0, wrong: 0, ungraded: 0 },
    loss: { right: 0, wrong: 0, ungraded: 0 },
    tie: { right: 0, wrong: 0, ungraded: 0 },
  },
  constraintsEvaluated: 0,
  constraintsPassed: 0,
  updatedAt: 0,
});

export async function routesView(
  { store, catalog, router, priceOf = catalogPrices, now = Date.now }: RoutesViewDependencies,
  scope: Scope,
) {
  const stored = await store.routing.getContract(scope);
  const contract = stored === null ? DEFAULT_CONTRACT : parseEvalContract(stored.contract);
  const evidenceVersion = stored?.evidenceVersion ?? 0;
  const semantics = qualitySemantics(contract);
  const policy = {
    passRate: contract.pass_rate,
    confidence: contract.confidence,
    minSamples: contract.min_samples,
    maxSamples: DEFAULT_ROUTING.maxSamples,
  };
  const latencyPolicy = latencyPolicyOf(contract);
  const percentile = latencyPolicy.percentile;
  const usage = await store.routing.usageByModel(scope);
  const spendByRoute = await store.routing.evalSpendByRoute(scope);
  const routes = [];
  for (const route of await store.routing.listRoutes(scope)) {
    const requested = catalog.resolve(route.requestedModel);
    const evidence = await store.routing.listEvidence(scope, route.requestedModel, evidenceVersion);
    const reference = sketchesOf(evidence.find((counts) => counts.candidateModel === route.requestedModel));
    const limit = latencyLimitMs(latencyPolicy, reference.latency);
    const rows = evidence.filter((counts) => counts.candidateModel !== route.requestedModel);
    const activity = router?.activity(scope, route.requestedModel);
    // Listed without evidence too: a demoted model while it cools down (its counts start again from zero), and a candidate the plan weighed but does not test.
    for (const model of [...Object.keys(route.cooldowns), ...(activity?.assessed ?? [])]) {
      if (!rows.some((counts) => counts.candidateModel === model)) rows.push(empty(route.requestedModel, model, evidenceVersion));
    }
    const countsOf = new Map(rows.map((counts) => [counts.candidateModel, counts]));
    const fromRouter = activity !== undefined && verdictsHold(activity.verdicts, route, countsOf, semantics);
    const verdicts = fromRouter
      ? routerVerdicts(activity.verdicts, rows)
      : rows
          .map((counts) => evidenceVerdict(counts, route, policy, latencyPolicy, reference))
          .sort((left, right) => left.verdict.costPerCall - right.verdict.costPerCall);
    const candidates = verdicts.map(({ verdict, considered }) => {
      const counts = countsOf.get(verdict.model) ?? empty(route.requestedModel, verdict.model, evidenceVersion);
      const sketches = sketchesOf(counts);
      const coolingUntil = route.cooldowns[verdict.model] ?? 0;
      // Still open, but the plan does not test it: its tests would cost more than they may save, or it saves nothing on the model serving.
      const paused =
        verdict.state === 'testing' &&
        activity !== undefined &&
        activity.sampleRate !== null &&
        !activity.exploring.includes(verdict.model);
      const state = !considered ? 'not_considered' : coolingUntil > now() ? 'cooling_down' : paused ? 'paused' : verdict.state;
      return {
        model: verdict.model,
        state,
        /** Why it is out or paused, or what it waits for, when that is not its pass rate alone. */
        reason: !considered
          ? 'not weighed by the router now: left the catalog or its engines, or the contract leaves it out'
          : (verdict.reason ?? (paused ? 'not tested further: more tests are expected to cost more than they would save' : null)),
        cooling_down_until: coolingUntil > now() ? Math.floor(coolingUntil / 1000) : null,
        /** The share of the workload's calls the router certified for it (relative contracts; 1: the whole workload); null under absolute ones. */
        share: verdict.share ?? null,
        /** Replies scored and passed as the evidence holds them now (feedback and guard failures count at once, before the router decides again). */
        evaluated: counts.evaluated,
        passed: counts.passed,
        errors: counts.errors,
        pass_rate: counts.evaluated > 0 ? counts.passed / counts.evaluated : null,
        /** The counts the verdict rests on, as the router counted them at its last decision: paired samples and those not lost under a relative contract. */
        verdict_evaluated: verdict.evaluated,
        verdict_passed: verdict.passed,
        /** Pass-rate bounds (absolute), or the lower bound on E[c − r] (relative; null without a share, `upper_bound` always null). */
        lower_bound: finiteOrNull(verdict.lower),
        upper_bound: finiteOrNull(verdict.upper),
        /** Paired outcomes against the requested model, by its own reply's grade (relative contracts; null under absolute ones). */
        paired: semantics === 'relative' ? counts.paired : null,
        /** The router's expected USD per call on this workload (what it ranks by); from the evidence, the replays' mean cost. */
        cost_per_call_usd: verdict.costPerCall,
        eval_cost_per_sample_usd: counts.evaluated > 0 ? counts.costUsd / counts.evaluated : null,
        mean_latency_ms: counts.evaluated > 0 ? counts.latencyMsTotal / counts.evaluated : null,
        latency_ms: percentileOf(sketches.latency, percentile, 1),
        ttft_ms: percentileOf(sketches.ttft, percentile, 1),
        latency_measured: sketches.latency?.count ?? 0,
        in_exploration_plan: activity?.exploring.includes(verdict.model) ?? false,
      };
    });
    const split =
      route.split === null
        ? null
        : {
            shares: route.split.shares.map((entry) => ({
              model: entry.model,
              share: entry.share,
              lower_bound_diff: entry.diffLower,
              samples: entry.samples,
              pooled: entry.pooled === undefined ? null : { workloads: entry.pooled.workloads, samples: entry.pooled.samples },
              /** Set when `share` is of the calls a per-call policy picks (it picks `routed_share` of them), not of all calls; its weights are not shown. */
              policy: entry.policy === undefined ? null : { epoch: entry.policy.epoch, routed_share: entry.policy.routedShare },
            })),
            requested_quality_lower: route.split.requestedLower,
            quality_bar: route.split.qualityBar,
            confidence: route.split.confidence,
          };
    const calls = usage.filter((row) => requested !== undefined && catalog.resolve(row.requestedModel)?.id === requested.id);
    const routed = calls.filter((row) => row.servedModel !== requested?.id);
    const savings =
      requested === undefined
        ? 0
        : routed.reduce((sum, row) => sum + savedOn(row, requested, catalog.resolve(row.servedModel), priceOf), 0);
    const evalSpend = spendByRoute[route.requestedModel] ?? 0;
    routes.push({
      requested_model: route.requestedModel,
      phase: phaseOf(route, activity, now()),
      semantics,
      served_model: route.pinnedModel ?? route.servedModel,
      router_choice: route.servedModel,
      pinned_model: route.pinnedModel,
      certificate: route.certificate,
      /** Shares of the calls drawn to cheaper models; the rest (`served_share`, a policy's share counted as the share of all calls it comes to) go to `router_choice`. */
      split,
      served_share: 1 - (route.split?.shares.reduce((sum, entry) => sum + entry.share * (entry.policy?.routedShare ?? 1), 0) ?? 0),
      /** Where the inline guard re-asks a failing reply: certified models dearer than the served one. */
      fallbacks: route.fallbacks,
      verdicts_from: fromRouter ? ('router' as const) : ('evidence' as const),
      candidates,
      latency: {
        percentile,
        requested_model_ms: percentileOf(reference.latency, percentile, 1),
        requested_model_measured: reference.latency?.count ?? 0,
        limit_ms: limit ?? null,
      },
      calls: calls.reduce((sum, row) => sum + row.calls, 0),
      routed_calls: routed.reduce((sum, row) => sum + row.calls, 0),
      savings_usd: savings,
      eval_spend_usd: evalSpend,
      net_savings_usd: savings - evalSpend,
      exploration: {
        sample_rate: contract.sample_rate === 'auto' ? (activity?.sampleRate ?? null) : contract.sample_rate,
        auto: contract.sample_rate === 'auto',
        exploring: activity?.exploring ?? [],
        expected_net_usd: activity?.expectedNetUsd ?? null,
        calls_per_day: activity?.callsPerDay ?? null,
      },
      monitoring: { unchecked_calls: activity?.uncheckedCalls ?? 0, problem: activity?.monitoringProblem ?? null },
      dropped_samples: activity?.droppedSamples ?? 0,
    });
  }
  const judgeUse = new Map<string, boolean>();
  for (const route of routes)
    for (const judge of router?.activity(scope, route.requested_model).judges ?? [])
      judgeUse.set(judge.model, judge.sameFamily || judgeUse.get(judge.model) === true);
  const judges = (await store.routing.listJudgeChecks(scope)).map((counts) => ({
    model: counts.judgeModel,
    same_family: judgeUse.get(counts.judgeModel) ?? false,
    self_checks: counts.checks,
    false_losses: counts.falseLosses,
    error_rate: counts.checks > 0 ? counts.falseLosses / counts.checks : null,
  }));
  for (const [model, sameFamily] of judgeUse)
    if (!judges.some((judge) => judge.model === model))
      judges.push({ model, same_family: sameFamily, self_checks: 0, false_losses: 0, error_rate: null });
  const history = (await store.routing.listRouteChanges(scope, 50)).map((change) => ({
    requested_model: change.requestedModel,
    from_model: change.fromModel,
    to_model: change.toModel,
    reason: change.reason,
    detail: change.detail,
    certificate: change.certificate,
    at: Math.floor(change.at / 1000),
  }));
  const savings = routes.reduce((sum, route) => sum + route.savings_usd, 0);
  const evalSpend = routes.reduce((sum, route) => sum + route.eval_spend_usd, 0);
  return {
    object: 'workload_routes',
    project: scope.project,
    workload: scope.workload,
    contract_version: stored?.version ?? 0,
    semantics,
    quality_bar: contract.quality_bar,
    pass_rate: contract.pass_rate,
    confidence: contract.confidence,
    eval_spend_today_usd: await store.routing.getEvalSpend(scope, new Date(now()).toISOString().slice(0, 10)),
    daily_budget_usd: contract.daily_budget_usd,
    savings_usd: savings,
    eval_spend_usd: evalSpend,
    net_savings_usd: savings - evalSpend,
    judges,
    routes,
    history,
  };
}

interface ShownVerdict {
  verdict: CandidateVerdict;
  /** False for a model with evidence that the router no longer weighs. */
  considered: boolean;
}

/**
 * Whether the router's last verdicts are its judgement of the evidence and
 * route in force: no verdict counts more than the evidence holds (evidence
 * that started again: new checks, a demotion), and they choose what the route
 * serves (not a decision made since on the same evidence, such as a stricter
 * pass rate, before the router decided again).
 */
function verdictsHold(
  verdicts: readonly CandidateVerdict[],
  route: RouteRecord,
  countsOf: ReadonlyMap<string, CandidateCounts>,
  semantics: QualitySemantics,
): boolean {
  if (verdicts.length === 0) return false;
  const counted = (counts: CandidateCounts | undefined) =>
    counts === undefined ? 0 : semantics === 'relative' ? pairedSampleCount(counts.paired) : counts.evaluated;
  if (verdicts.some((verdict) => verdict.evaluated > counted(countsOf.get(verdict.model)))) return false;
  const serves = (verdict: CandidateVerdict) =>
    verdict.coolingDown !== true &&
    (semantics === 'relative' ? (verdict.share ?? 0) >= 1 : verdict.state === 'certified' && !route.fallbacks.includes(verdict.model));
  const served = verdicts.find(serves)?.model ?? route.requestedModel;
  if (served !== route.servedModel) return false;
  if (semantics === 'absolute') return true;
  const shared = (models: string[]) => models.sort().join('\u0000');
  const inSplit = verdicts.filter((verdict) => (verdict.share ?? 0) > 0 && (verdict.share ?? 0) < 1).map((verdict) => verdict.model);
  return shared(inSplit) === shared(route.split?.shares.map((entry) => entry.model) ?? []);
}

/** The router's verdicts in its order, then any model with evidence it no longer weighs. */
function routerVerdicts(verdicts: readonly CandidateVerdict[], rows: readonly CandidateCounts[]): ShownVerdict[] {
  const weighed = new Set(verdicts.map((verdict) => verdict.model));
  const dropped = rows
    .filter((counts) => !weighed.has(counts.candidateModel))
    .map((counts) => ({
      verdict: {
        model: counts.candidateModel,
        state: 'eliminated' as const,
        lower: Number.NaN,
        upper: Number.NaN,
        evaluated: counts.evaluated,
        passed: counts.passed,
        costPerCall: counts.evaluated > 0 ? counts.costUsd / counts.evaluated : 0,
      },
      considered: false,
    }));
  return [...verdicts.map((verdict) => ({ verdict, considered: true })), ...dropped];
}

/**
 * A candidate judged here from its evidence, the absolute way, before the
 * router has verdicts of its own; ordered by its replays' mean cost. A model
 * the route serves (its certificate, or a share) is certified: the route
 * record is the router's word on that.
 */
function evidenceVerdict(
  counts: CandidateCounts,
  route: RouteRecord,
  policy: DecisionPolicy,
  latencyPolicy: ReturnType<typeof latencyPolicyOf>,
  reference: ReturnType<typeof sketchesOf>,
): ShownVerdict {
  const model = counts.candidateModel;
  const serving =
    (route.servedModel === model && route.certificate?.model === model) ||
    route.split?.shares.some((entry) => entry.model === model) === true;
  const latency = judgeLatency(latencyPolicy, sketchesOf(counts), reference);
  const costPerCall = counts.evaluated > 0 ? counts.costUsd / counts.evaluated : 0;
  const verdict = judgeCandidate(
    { model, costPerCall, evaluated: counts.evaluated, passed: counts.passed, errors: counts.errors, latency, certified: serving },
    policy,
  );
  const share = route.split?.shares.find((entry) => entry.model === model)?.share;
  return { verdict: share === undefined ? verdict : { ...verdict, share }, considered: true };
}

function finiteOrNull(value: number): number | null {
  return Number.isFinite(value) ? value : null;
}

/**
 * What a route's routed calls saved against the requested model, at the
 * router's price (`routing.cost`). A call's recorded cost is at catalog
 * prices and includes what its guard re-asks spent: that extra stays at its
 * catalog figure.
 */
function savedOn(row: ModelUsage, requested: CatalogModel, served: CatalogModel | undefined, priceOf: PriceOf): number {
  const tokens = { prompt_tokens: row.promptTokens, completion_tokens: row.completionTokens };
  if (served === undefined) return costAt(priceOf, requested, tokens) - row.costUsd;
  const guardExtra = row.costUsd - costOf(served, tokens);
  return costAt(priceOf, requested, tokens) - costAt(priceOf, served, tokens) - guardExtra;
}
