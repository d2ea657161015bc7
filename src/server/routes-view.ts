/**
 * `GET /v1/projects/{p}/workloads/{w}/routes`: what the router decided for a
 * workload and on what evidence. Per requested model: the model serving,
 * its certificate and fallbacks, every candidate's counts, bounds, latency
 * and state; what the route saved, what its evaluation cost, and the net;
 * how it explores (the sample rate and the plan's expected net) and how its
 * serving model is watched (calls since the last check, and why a check
 * failed); samples dropped under load. For the workload: the eval spend of
 * the day against its budget, and each judge's own measured error.
 */
import { costOf, type Catalog, type CatalogModel } from '../catalog/catalog.js';
import { DEFAULT_CONTRACT, parseEvalContract } from '../evals/eval-contract.js';
import { judgeLatency, latencyLimitMs, latencyPolicyOf, percentileOf } from '../routing/latency-limit.js';
import { catalogPrices, costAt, type PriceOf } from '../routing/model-prices.js';
import { sketchesOf } from '../routing/route-changes.js';
import { judgeCandidate, DEFAULT_ROUTING } from '../routing/route-decision.js';
import type { RouterWorker } from '../routing/router-worker.js';
import type { CandidateCounts, ModelUsage, Scope } from '../store/routing-store.js';
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
  updatedAt: 0,
});

export async function routesView({ store, catalog, router, priceOf = catalogPrices, now = Date.now }: RoutesViewDependencies, scope: Scope) {
  const stored = await store.routing.getContract(scope);
  const contract = stored === null ? DEFAULT_CONTRACT : parseEvalContract(stored.contract);
  const evidenceVersion = stored?.evidenceVersion ?? 0;
  const policy = { passRate: contract.pass_rate, confidence: contract.confidence, minSamples: contract.min_samples, maxSamples: DEFAULT_ROUTING.maxSamples };
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
    const candidates = rows
      .map((counts) => {
        const perCall = counts.evaluated > 0 ? counts.costUsd / counts.evaluated : 0;
        const sketches = sketchesOf(counts);
        const latency = judgeLatency(latencyPolicy, sketches, reference);
        const verdict = judgeCandidate({ model: counts.candidateModel, costPerCall: perCall, evaluated: counts.evaluated, passed: counts.passed, errors: counts.errors, latency }, policy);
        const coolingUntil = route.cooldowns[counts.candidateModel] ?? 0;
        // Still open, but the plan does not test it: its tests would cost more than they may save, or it saves nothing on the model serving.
        const paused = verdict.state === 'testing' && activity !== undefined && activity.sampleRate !== null && !activity.exploring.includes(counts.candidateModel);
        return {
          model: counts.candidateModel,
          state: coolingUntil > now() ? 'cooling_down' : paused ? 'paused' : verdict.state,
          /** Why it is out or paused, or what it waits for, when that is not its pass rate alone. */
          reason: verdict.reason ?? (paused ? 'not tested further: more tests are expected to cost more than they would save' : null),
          cooling_down_until: coolingUntil > now() ? Math.floor(coolingUntil / 1000) : null,
          evaluated: counts.evaluated,
          passed: counts.passed,
          errors: counts.errors,
          pass_rate: counts.evaluated > 0 ? counts.passed / counts.evaluated : null,
          lower_bound: verdict.lower,
          upper_bound: verdict.upper,
          cost_per_call_usd: perCall,
          mean_latency_ms: counts.evaluated > 0 ? counts.latencyMsTotal / counts.evaluated : null,
          latency_ms: percentileOf(sketches.latency, percentile, 1),
          ttft_ms: percentileOf(sketches.ttft, percentile, 1),
          latency_measured: sketches.latency?.count ?? 0,
          in_exploration_plan: activity?.exploring.includes(counts.candidateModel) ?? false,
        };
      })
      .sort((left, right) => left.cost_per_call_usd - right.cost_per_call_usd);
    const calls = usage.filter((row) => requested !== undefined && catalog.resolve(row.requestedModel)?.id === requested.id);
    const routed = calls.filter((row) => row.servedModel !== requested?.id);
    const savings = requested === undefined ? 0 : routed.reduce((sum, row) => sum + savedOn(row, requested, catalog.resolve(row.servedModel), priceOf), 0);
    const evalSpend = spendByRoute[route.requestedModel] ?? 0;
    routes.push({
      requested_model: route.requestedModel,
      served_model: route.pinnedModel ?? route.servedModel,
      router_choice: route.servedModel,
      pinned_model: route.pinnedModel,
      certificate: route.certificate,
      /** Where the inline guard re-asks a failing reply: certified models dearer than the served one. */
      fallbacks: route.fallbacks,
      candidates,
      latency: { percentile, requested_model_ms: percentileOf(reference.latency, percentile, 1), requested_model_measured: reference.latency?.count ?? 0, limit_ms: limit ?? null },
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
  for (const route of routes) for (const judge of router?.activity(scope, route.requested_model).judges ?? []) judgeUse.set(judge.model, judge.sameFamily || judgeUse.get(judge.model) === true);
  const judges = (await store.routing.listJudgeChecks(scope)).map((counts) => ({
    model: counts.judgeModel,
    same_family: judgeUse.get(counts.judgeModel) ?? false,
    self_checks: counts.checks,
    false_losses: counts.falseLosses,
    error_rate: counts.checks > 0 ? counts.falseLosses / counts.checks : null,
  }));
  for (const [model, sameFamily] of judgeUse) if (!judges.some((judge) => judge.model === model)) judges.push({ model, same_family: sameFamily, self_checks: 0, false_losses: 0, error_rate: null });
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
