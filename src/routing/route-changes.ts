/**
 * How the router writes a change of route: a certification, a demotion (the
 * rollback detector, or a latency drift), a fallback when the serving model
 * went unchecked for too long, or a decision made again after a contract
 * edit. Every change is stored with its reason, detail and certificate, and
 * applied to this process's route table at once. The decisions are read
 * from the evidence by decide-from-evidence.ts.
 */
import type { CatalogModel } from '../catalog/catalog.js';
import { errorFields } from '../log/logger.js';
import type { Scope } from '../api/scope.js';
import type { RouteChange, RouteRecord, RouteSplit } from '../store/routing-store.js';
import { type CallShape, NO_CALL_SHAPE } from './candidates.js';
import { decideFromEvidence, isSplitDecision } from './decide-from-evidence.js';
import { activityOf } from './route-activity.js';
import { isAllowedTransition, phaseOf } from './route-lifecycle.js';
import type { RouteDecision } from './route-decision.js';
import type { SplitDecision } from './split-decision.js';
import { dayOf, nextDayStart, routeState, type RouteState, type RouterContext } from './router-context.js';

/**
 * Stores and applies the decision when it changes the served model or, under
 * a relative contract, the shares (`splitChanged`); `reason` defaults to
 * certified (cheaper), demoted (dearer) or split (the shares alone).
 */
export async function applyDecision(
  context: RouterContext,
  scope: Scope,
  requested: CatalogModel,
  decision: RouteDecision | SplitDecision,
  change: { reason?: RouteChange['reason']; detail?: string | null; cooldowns?: Record<string, number> } = {},
): Promise<void> {
  const current = context.routes.route(scope, requested.id);
  const from = current?.servedModel ?? requested.id;
  const cooldowns = change.cooldowns ?? current?.cooldowns ?? {};
  const at = context.now();
  const { version, contract } = context.routes.contract(scope);
  const held = current?.split ?? null;
  const split =
    isSplitDecision(decision) && decision.shares.length > 0
      ? {
          shares: decision.shares,
          requestedLower: decision.requestedLower,
          qualityBar: contract.quality_bar ?? 1,
          confidence: contract.confidence,
          contractVersion: version,
          at,
        }
      : null;
  const shares = splitChanged(held, split) ? split : held;
  if (decision.servedModel === from && change.cooldowns === undefined && shares === held) return;
  const certificate = decision.certificate === null ? null : { ...decision.certificate, contractVersion: version, at };
  const toCost = decision.verdicts.find((verdict) => verdict.model === decision.servedModel)?.costPerCall ?? Infinity;
  const fromCost = decision.verdicts.find((verdict) => verdict.model === from)?.costPerCall ?? Infinity;
  const reason = change.reason ?? (decision.servedModel === from ? 'split' : toCost > fromCost ? 'demoted' : 'certified');
  const route: RouteRecord = {
    scope,
    requestedModel: requested.id,
    servedModel: decision.servedModel,
    pinnedModel: current?.pinnedModel ?? null,
    certificate,
    cooldowns,
    fallbacks: fallbacksOf(decision),
    split: shares,
    updatedAt: at,
  };
  const modelsChanged = decision.servedModel !== from || splitModels(held) !== splitModels(shares);
  const detail = change.detail ?? (shares === null ? null : describeSplit(shares));
  // A share that moves to a policy, another policy or the pooled prior (or back) is a change of how the route serves: it is in the history too.
  const history =
    modelsChanged || splitBasis(held) !== splitBasis(shares)
      ? { requestedModel: requested.id, fromModel: from, toModel: decision.servedModel, reason, certificate, detail, at }
      : null;
  const state = routeState(context, scope, requested.id);
  if (history !== null) checkTransition(context, state, current, route, reason);
  await context.routing.saveRoute(route, history);
  context.routes.apply(route);
  // Another model serves, or takes or loses a share: what watched the last ones starts again.
  if (!modelsChanged) return;
  state.detector = null;
  state.detectorModel = null;
  state.uncheckedCalls = 0;
  state.servedLatencies.length = 0;
  state.servedTtfts.length = 0;
  state.plan = null;
  context.logger.info('route changed', {
    project: scope.project,
    workload: scope.workload,
    requested: requested.id,
    from,
    to: decision.servedModel,
    shares: shares === null ? null : describeSplit(shares),
    reason,
  });
}

/**
 * Every change of phase the router makes is one route-lifecycle.ts allows:
 * one that is not is a bug of the router's, logged (the change is still
 * made: the table describes, it does not decide).
 */
function checkTransition(
  context: RouterContext,
  state: RouteState,
  before: RouteRecord | undefined,
  after: RouteRecord,
  reason: RouteChange['reason'],
): void {
  const activity = activityOf(state, 0);
  const now = context.now();
  const from = phaseOf(before, activity, now);
  const to = phaseOf(after, activity, now);
  if (from === to && from !== 'split' && from !== 'certified') return;
  if (!isAllowedTransition(from, to, reason))
    context.logger.warn('route change outside the route lifecycle', {
      workload: state.scope.workload,
      requested: state.requestedModel,
      from,
      to,
      reason,
    });
}

/**
 * Whether new shares are worth a write: another set of models, or a share
 * moved by more than a tenth of itself (and a point). Shares follow the
 * bounds after every sample; writing each wobble would write the route on
 * every sample.
 */
export function splitChanged(held: RouteSplit | null, next: RouteSplit | null): boolean {
  if (splitModels(held) !== splitModels(next)) return true;
  if (held === null || next === null) return false;
  return next.shares.some((entry, index) => {
    const before = held.shares[index]?.share ?? 0;
    if ((entry.pooled === undefined) !== (held.shares[index]?.pooled === undefined)) return true;
    if (entry.policy?.epoch !== held.shares[index]?.policy?.epoch) return true;
    return Math.abs(entry.share - before) > Math.max(0.01, before / 10);
  });
}

/** The models of a split, in order: a change of them is a change of who serves. */
export function splitModels(split: RouteSplit | null): string {
  return split === null ? '' : split.shares.map((entry) => entry.model).join('\u0000');
}

/** What each share of a split rests on: its own certificate, the pooled prior, or a per-call policy (which one). */
function splitBasis(split: RouteSplit | null): string {
  return split === null
    ? ''
    : split.shares
        .map((entry) => (entry.policy !== undefined ? `policy ${entry.policy.epoch}` : entry.pooled !== undefined ? 'pooled' : 'own'))
        .join('\u0000');
}

/** "34% of calls to m (E[c − r] ≥ -0.021 on 412 samples)", for the route's history. */
export function describeSplit(split: RouteSplit): string {
  const parts = split.shares.map((entry) =>
    entry.policy !== undefined
      ? `${(entry.share * 100).toFixed(1)}% of the calls per-call policy #${entry.policy.epoch} picks (${(entry.policy.routedShare * 100).toFixed(1)}% of calls) to ${entry.model} (E[π·(c − r)] ≥ ${entry.diffLower.toFixed(3)} on ${entry.samples} held-out samples)`
      : entry.pooled === undefined
        ? `${(entry.share * 100).toFixed(1)}% of calls to ${entry.model} (E[c − r] ≥ ${entry.diffLower.toFixed(3)} on ${entry.samples} paired samples)`
        : `${(entry.share * 100).toFixed(1)}% of calls to ${entry.model} on the prior of ${entry.pooled.workloads} workloads of the project (${entry.pooled.samples} paired samples; ${entry.samples} of its own)`,
  );
  if (split.shares.some((entry) => entry.pooled !== undefined))
    return `${parts.join('; ')}; estimated to keep the workload ≥ ${split.qualityBar} × the requested model's quality, the project's calls certified at ${split.confidence}`;
  return `${parts.join('; ')}; the requested model's quality ≥ ${split.requestedLower.toFixed(3)}; workload quality certified ≥ ${split.qualityBar} × the requested model's at ${split.confidence}`;
}

/** Takes the serving model off its route (quality or latency): it cools down, and its evidence starts again from zero. */
export async function demote(
  context: RouterContext,
  state: RouteState,
  requested: CatalogModel,
  servedModel: string,
  reason: 'demoted' | 'too_slow',
  detail: string,
): Promise<void> {
  await change(context, state, async () => {
    const current = context.routes.route(state.scope, requested.id);
    const inSplit = current?.split?.shares.some((entry) => entry.model === servedModel) === true;
    if (current === undefined || (current.servedModel !== servedModel && !inSplit)) return;
    const { evidenceVersion } = context.routes.contract(state.scope);
    await context.routing.resetEvidence(state.scope, requested.id, servedModel, evidenceVersion);
    // Its policies learned from the evidence just forgotten, and their held-out streams end here.
    state.policies.delete(servedModel);
    const cooldowns = { ...current.cooldowns, [servedModel]: context.now() + context.settings.cooldownMs };
    context.routes.apply({ ...current, cooldowns });
    await applyDecision(context, state.scope, requested, await decideFromEvidence(context, state.scope, requested, shapeOf(state)), {
      reason,
      detail,
      cooldowns,
    });
  });
}

/**
 * Never unmonitored: a serving model that could not be checked for too long
 * leaves its route (its evidence stays) until monitoring can resume: the next
 * UTC day for a spent budget, a few minutes otherwise. Not when the requested
 * model itself cannot serve: an unchecked certified model is better than
 * every call failing.
 */
export async function fallBack(context: RouterContext, state: RouteState, requested: CatalogModel): Promise<void> {
  await change(context, state, async () => {
    const current = context.routes.route(state.scope, requested.id);
    const unchecked =
      current === undefined
        ? []
        : current.servedModel !== requested.id
          ? [current.servedModel]
          : (current.split?.shares.map((entry) => entry.model) ?? []);
    if (current === undefined || unchecked.length === 0) return;
    const requestedPool = context.pools.get(requested.id);
    if (requestedPool === undefined || requestedPool.replicaStates().every((replica) => replica.circuit === 'open')) {
      context.logger.warn('route unmonitored, kept: the requested model cannot serve either', {
        workload: state.scope.workload,
        requested: requested.id,
        served: unchecked.join(', '),
      });
      state.uncheckedCalls = 0;
      return;
    }
    const now = context.now();
    const { contract } = context.routes.contract(state.scope);
    const budgetSpent = (await context.routing.getEvalSpend(state.scope, dayOf(now))) >= contract.daily_budget_usd;
    if (budgetSpent) state.monitoringProblem = `the day's eval budget of $${contract.daily_budget_usd} is spent`;
    const until = budgetSpent ? nextDayStart(now) : now + context.settings.unmonitoredRetryMs;
    const cooldowns = { ...current.cooldowns, ...Object.fromEntries(unchecked.map((model) => [model, until])) };
    for (const model of unchecked) state.probation.add(model);
    context.routes.apply({ ...current, cooldowns });
    const detail = `${unchecked.join(' and ')} went ${state.uncheckedCalls} calls without a check (${state.monitoringProblem ?? 'no check could be made'}); back ${budgetSpent ? `when the budget renews (${dayOf(until)})` : 'in a few minutes'}`;
    await applyDecision(context, state.scope, requested, await decideFromEvidence(context, state.scope, requested, shapeOf(state)), {
      reason: 'unmonitored',
      detail,
      cooldowns,
    });
  });
}

/** After a contract edit that kept the evidence (only the pass rate, confidence or min samples changed): decide again on it. */
export async function decideAgain(context: RouterContext, scope: Scope, detail: string): Promise<void> {
  for (const route of await context.routing.listRoutes(scope)) {
    const requested = context.catalog.resolve(route.requestedModel);
    if (requested === undefined) continue;
    const state = routeState(context, scope, requested.id);
    await change(context, state, async () => {
      const decision = await decideFromEvidence(context, scope, requested, shapeOf(state), true);
      await applyDecision(context, scope, requested, decision, { reason: 'contract_changed', detail });
    });
  }
}

/** The certified models dearer than the one a decision serves, cheapest first: where the inline guard re-asks. */
export function fallbacksOf(decision: RouteDecision): string[] {
  const servedCost = decision.verdicts.find((verdict) => verdict.model === decision.servedModel)?.costPerCall ?? Infinity;
  return decision.verdicts
    .filter((verdict) => verdict.state === 'certified' && verdict.coolingDown !== true && verdict.costPerCall > servedCost)
    .sort((left, right) => left.costPerCall - right.costPerCall)
    .map((verdict) => verdict.model);
}

/** The route's last call shape (costs per call depend on its tokens), or a neutral one before any. */
export function shapeOf(state: RouteState): CallShape {
  return state.shape ?? NO_CALL_SHAPE;
}

/**
 * One change of a route at a time: a second that arrives meanwhile is
 * dropped (the first decided on the same evidence; a fallback that was
 * dropped is asked again by the next unchecked call).
 */
export async function change(context: RouterContext, state: RouteState, work: () => Promise<void>): Promise<void> {
  if (state.changing) return;
  state.changing = true;
  try {
    await work();
  } catch (error) {
    context.logger.warn('route change failed', { workload: state.scope.workload, requested: state.requestedModel, ...errorFields(error) });
  } finally {
    state.changing = false;
  }
}
