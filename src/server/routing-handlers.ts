/**
 * The routing API of a workload: its eval contract, its routes with their
 * evidence and history, pins, and user feedback. Reads take any key of the
 * account; changes take an admin key (feedback takes any key: callers report
 * on their own calls).
 */
import { InvalidRequestError, NotFoundError } from '../api/errors.js';
import { parseJsonObject } from '../api/parse-json-body.js';
import { costOf, type Catalog, type CatalogModel } from '../catalog/catalog.js';
import { DEFAULT_CONTRACT, parseEvalContract } from '../evals/eval-contract.js';
import { judgeCandidate, DEFAULT_ROUTING } from '../routing/route-decision.js';
import type { RouteTable } from '../routing/route-table.js';
import type { RouteChange, RouteRecord, Scope } from '../store/routing-store.js';
import type { ApiKey, Store } from '../store/store.js';
import { accountWorkload } from './account-scope.js';

export interface RoutingHandlersDependencies {
  store: Store;
  catalog: Catalog;
  routes: RouteTable;
  now?: () => number;
}

export function createRoutingHandlers({ store, catalog, routes, now = Date.now }: RoutingHandlersDependencies) {
  const scopeOf = (key: ApiKey, project: string, workload: string) => accountWorkload(store, key, project, workload);

  function catalogModel(name: string, param: string | null): CatalogModel {
    const model = catalog.resolve(name);
    if (model === undefined) throw new NotFoundError(`The model '${name.slice(0, 256)}' does not exist. GET /v1/models lists them.`, 'model_not_found', param);
    return model;
  }

  async function saveRoute(scope: Scope, requestedModel: string, change: (route: RouteRecord) => RouteRecord, reason: RouteChange['reason'], detail: string | null): Promise<RouteRecord> {
    const current = routes.route(scope, requestedModel) ?? { scope, requestedModel, servedModel: requestedModel, pinnedModel: null, certificate: null, cooldowns: {}, fallbacks: [], updatedAt: 0 };
    const next = { ...change(current), updatedAt: now() };
    const from = current.pinnedModel ?? current.servedModel;
    const to = next.pinnedModel ?? next.servedModel;
    await store.routing.saveRoute(next, { requestedModel, fromModel: from, toModel: to, reason, certificate: next.certificate, detail, at: next.updatedAt });
    routes.apply(next);
    return next;
  }

  return {
    async getEval(key: ApiKey, project: string, workload: string) {
      const scope = await scopeOf(key, project, workload);
      const stored = await store.routing.getContract(scope);
      return { object: 'eval_contract', project, workload, version: stored?.version ?? 0, default: stored === null, contract: stored === null ? DEFAULT_CONTRACT : parseEvalContract(stored.contract) };
    },

    /** A new version; certificates made under the old one no longer count, so routes go back to the requested models. */
    async putEval(key: ApiKey, project: string, workload: string, body: string) {
      const scope = await scopeOf(key, project, workload);
      const contract = parseEvalContract(parseJsonObject(body));
      const stored = await store.routing.putContract(scope, contract, now());
      routes.applyContract(scope, { contract, version: stored.version });
      for (const route of await store.routing.listRoutes(scope)) {
        if (route.servedModel === route.requestedModel && route.certificate === null) continue;
        await saveRoute(scope, route.requestedModel, (current) => ({ ...current, servedModel: current.requestedModel, certificate: null }), 'contract_changed', `contract version ${stored.version}`);
      }
      return { object: 'eval_contract', project, workload, version: stored.version, default: false, contract };
    },

    async getRoutes(key: ApiKey, project: string, workload: string) {
      const scope = await scopeOf(key, project, workload);
      const stored = await store.routing.getContract(scope);
      const contract = stored === null ? DEFAULT_CONTRACT : parseEvalContract(stored.contract);
      const version = stored?.version ?? 0;
      const policy = { passRate: contract.pass_rate, confidence: contract.confidence, minSamples: contract.min_samples, maxSamples: DEFAULT_ROUTING.maxSamples };
      const usage = await store.routing.usageByModel(scope);
      const list = [];
      for (const route of await store.routing.listRoutes(scope)) {
        const requested = catalog.resolve(route.requestedModel);
        const evidence = await store.routing.listEvidence(scope, route.requestedModel, version);
        // A demoted model's counts start again from zero: list it while it cools down even without any.
        for (const model of Object.keys(route.cooldowns)) {
          if (!evidence.some((counts) => counts.candidateModel === model)) {
            evidence.push({ requestedModel: route.requestedModel, candidateModel: model, contractVersion: version, evaluated: 0, passed: 0, errors: 0, promptTokens: 0, completionTokens: 0, costUsd: 0, latencyMsTotal: 0, updatedAt: 0 });
          }
        }
        const candidates = evidence
          .map((counts) => {
            const perCall = counts.evaluated > 0 ? counts.costUsd / counts.evaluated : 0;
            const verdict = judgeCandidate({ model: counts.candidateModel, costPerCall: perCall, evaluated: counts.evaluated, passed: counts.passed, errors: counts.errors }, policy);
            const coolingUntil = route.cooldowns[counts.candidateModel] ?? 0;
            return {
              model: counts.candidateModel,
              state: coolingUntil > now() ? 'cooling_down' : verdict.state,
              evaluated: counts.evaluated,
              passed: counts.passed,
              errors: counts.errors,
              pass_rate: counts.evaluated > 0 ? counts.passed / counts.evaluated : null,
              lower_bound: verdict.lower,
              upper_bound: verdict.upper,
              cost_per_call_usd: perCall,
              mean_latency_ms: counts.evaluated > 0 ? counts.latencyMsTotal / counts.evaluated : null,
            };
          })
          .sort((left, right) => left.cost_per_call_usd - right.cost_per_call_usd);
        const rows = usage.filter((row) => requested !== undefined && catalog.resolve(row.requestedModel)?.id === requested.id);
        const routed = rows.filter((row) => row.servedModel !== requested?.id);
        const savings = requested === undefined ? 0 : routed.reduce((sum, row) => sum + costOf(requested, { prompt_tokens: row.promptTokens, completion_tokens: row.completionTokens }) - row.costUsd, 0);
        list.push({
          requested_model: route.requestedModel,
          served_model: route.pinnedModel ?? route.servedModel,
          router_choice: route.servedModel,
          pinned_model: route.pinnedModel,
          certificate: route.certificate,
          /** Where the inline guard re-asks a failing reply: certified models dearer than the served one. */
          fallbacks: route.fallbacks,
          candidates,
          calls: rows.reduce((sum, row) => sum + row.calls, 0),
          routed_calls: routed.reduce((sum, row) => sum + row.calls, 0),
          savings_usd: savings,
        });
      }
      const history = (await store.routing.listRouteChanges(scope, 50)).map((change) => ({
        requested_model: change.requestedModel,
        from_model: change.fromModel,
        to_model: change.toModel,
        reason: change.reason,
        detail: change.detail,
        certificate: change.certificate,
        at: Math.floor(change.at / 1000),
      }));
      const day = new Date(now()).toISOString().slice(0, 10);
      return {
        object: 'workload_routes',
        project,
        workload,
        contract_version: version,
        pass_rate: contract.pass_rate,
        confidence: contract.confidence,
        eval_spend_today_usd: await store.routing.getEvalSpend(scope, day),
        daily_budget_usd: contract.daily_budget_usd,
        routes: list,
        history,
      };
    },

    async pin(key: ApiKey, project: string, workload: string, requestedName: string, body: string) {
      const scope = await scopeOf(key, project, workload);
      const requested = catalogModel(requestedName, null);
      const input = parseJsonObject(body);
      if (typeof input.model !== 'string') throw new InvalidRequestError("Send {\"model\": \"<catalog id>\"}: the model to serve this workload's calls for this model.", 'model');
      const pinned = catalogModel(input.model, 'model');
      const route = await saveRoute(scope, requested.id, (current) => ({ ...current, pinnedModel: pinned.id }), 'pinned', null);
      return { object: 'route', requested_model: requested.id, served_model: pinned.id, pinned_model: route.pinnedModel };
    },

    async unpin(key: ApiKey, project: string, workload: string, requestedName: string) {
      const scope = await scopeOf(key, project, workload);
      const requested = catalogModel(requestedName, null);
      const route = await saveRoute(scope, requested.id, (current) => ({ ...current, pinnedModel: null }), 'unpinned', null);
      return { object: 'route', requested_model: requested.id, served_model: route.servedModel, pinned_model: null };
    },

    /** Stored on the call's trace; a pass/fail on a routed call also counts as evidence for the model that served it. */
    async feedback(key: ApiKey, body: string) {
      const input = parseJsonObject(body);
      for (const field of Object.keys(input)) {
        if (!['request_id', 'pass', 'score', 'comment'].includes(field)) throw new InvalidRequestError(`Unrecognized argument: ${field}`, field, 'unknown_parameter');
      }
      if (typeof input.request_id !== 'string' || input.request_id === '') throw new InvalidRequestError('request_id is required: the x-request-id of the call.', 'request_id');
      const pass = input.pass ?? null;
      if (pass !== null && typeof pass !== 'boolean') throw new InvalidRequestError('pass must be true or false.', 'pass');
      const score = input.score ?? null;
      if (score !== null && (typeof score !== 'number' || !(score >= 0 && score <= 1))) throw new InvalidRequestError('score must be a number from 0 to 1.', 'score');
      const comment = input.comment ?? null;
      if (comment !== null && (typeof comment !== 'string' || comment.length > 2000)) throw new InvalidRequestError('comment must be a string of at most 2000 characters.', 'comment');
      if (pass === null && score === null) throw new InvalidRequestError('Send pass (true or false) or score (0 to 1).', 'pass');

      const trace = await store.traces.get(key.accountId, input.request_id);
      if (trace === null) throw new NotFoundError(`No call '${input.request_id.slice(0, 64)}'. Traces are written within a second of the call.`, 'trace_not_found', 'request_id');
      const at = now();
      await store.routing.recordFeedback({ requestId: trace.requestId, accountId: key.accountId, model: trace.servedModel, project: trace.project, workload: trace.workload, pass, score, comment, createdAt: at });
      const requested = trace.requestedModel === null ? undefined : catalog.resolve(trace.requestedModel);
      const counted = pass !== null && trace.environment === 'production' && trace.project !== null && trace.workload !== null && requested !== undefined && trace.servedModel !== null && trace.servedModel !== requested.id;
      if (counted) {
        const scope = { accountId: key.accountId, project: trace.project!, workload: trace.workload! };
        const { version } = routes.contract(scope);
        await store.routing.addEvidence(scope, requested.id, trace.servedModel!, version, { evaluated: 1, passed: pass ? 1 : 0, errors: 0, promptTokens: 0, completionTokens: 0, costUsd: 0, latencyMsTotal: 0 }, at);
      }
      return { object: 'feedback', request_id: trace.requestId, model: trace.servedModel, pass, score, comment, counted_as_evidence: counted };
    },
  };
}
