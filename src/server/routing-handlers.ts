/**
 * The routing API of a workload: its eval contract, its routes with their
 * evidence and history, pins, and user feedback. Reads take any key of the
 * account; changes take an admin key (feedback takes any key: callers report
 * on their own calls).
 */
import { InvalidRequestError, NotFoundError } from '../api/errors.js';
import { parseJsonObject } from '../api/parse-json-body.js';
import type { Catalog, CatalogModel } from '../catalog/catalog.js';
import { checksKey, DEFAULT_CONTRACT, parseEvalContract, qualitySemantics, qualitySemanticsDetail } from '../evals/eval-contract.js';
import type { PriceOf } from '../routing/model-prices.js';
import type { RouteTable } from '../routing/route-table.js';
import type { RouterWorker } from '../routing/router-worker.js';
import type { Scope } from '../api/scope.js';
import type { RouteChange, RouteRecord } from '../store/routing-store.js';
import type { ApiKey, Store } from '../store/store.js';
import { accountWorkload } from './account-scope.js';
import { routesView } from './routes-view.js';

export interface RoutingHandlersDependencies {
  store: Store;
  catalog: Catalog;
  routes: RouteTable;
  /** Decides routes again after a contract edit, and shows their activity. */
  router?: Pick<RouterWorker, 'activity' | 'decideAgain'>;
  /** The price savings are counted at (`routing.cost`); the catalog's when absent. */
  priceOf?: PriceOf;
  now?: () => number;
}

export function createRoutingHandlers({ store, catalog, routes, router, priceOf, now = Date.now }: RoutingHandlersDependencies) {
  const scopeOf = (key: ApiKey, project: string, workload: string) => accountWorkload(store, key, project, workload);

  function catalogModel(name: string, param: string | null): CatalogModel {
    const model = catalog.resolve(name);
    if (model === undefined)
      throw new NotFoundError(`The model '${name.slice(0, 256)}' does not exist. GET /v1/models lists them.`, 'model_not_found', param);
    return model;
  }

  async function saveRoute(
    scope: Scope,
    requestedModel: string,
    change: (route: RouteRecord) => RouteRecord,
    reason: RouteChange['reason'],
    detail: string | null,
  ): Promise<RouteRecord> {
    const current = routes.route(scope, requestedModel) ?? {
      scope,
      requestedModel,
      servedModel: requestedModel,
      pinnedModel: null,
      certificate: null,
      cooldowns: {},
      fallbacks: [],
      split: null,
      updatedAt: 0,
    };
    const next = { ...change(current), updatedAt: now() };
    const from = current.pinnedModel ?? current.servedModel;
    const to = next.pinnedModel ?? next.servedModel;
    await store.routing.saveRoute(next, {
      requestedModel,
      fromModel: from,
      toModel: to,
      reason,
      certificate: next.certificate,
      detail,
      at: next.updatedAt,
    });
    routes.apply(next);
    return next;
  }

  return {
    async getEval(key: ApiKey, project: string, workload: string) {
      const scope = await scopeOf(key, project, workload);
      const stored = await store.routing.getContract(scope);
      const contract = stored === null ? DEFAULT_CONTRACT : parseEvalContract(stored.contract);
      return {
        object: 'eval_contract',
        project,
        workload,
        version: stored?.version ?? 0,
        default: stored === null,
        contract,
        semantics: qualitySemantics(contract),
        semantics_detail: qualitySemanticsDetail(contract),
      };
    },

    /**
     * A new version. Evidence depends on the checks alone: new checks start it
     * again (routes go back to the requested models until certified anew); a
     * new pass rate, confidence or min samples decides again on the same
     * evidence; the budget, sample rate and candidate list keep it all.
     */
    async putEval(key: ApiKey, project: string, workload: string, body: string) {
      const scope = await scopeOf(key, project, workload);
      const contract = parseEvalContract(parseJsonObject(body));
      const previous = routes.contract(scope).contract;
      const keepEvidence = checksKey(contract) === checksKey(previous);
      const stored = await store.routing.putContract(scope, contract, now(), keepEvidence);
      routes.applyContract(scope, { contract, version: stored.version, evidenceVersion: stored.evidenceVersion });
      const decisive = (['pass_rate', 'quality_bar', 'confidence', 'min_samples'] as const).filter(
        (field) => contract[field] !== previous[field],
      );
      if (!keepEvidence) {
        for (const route of await store.routing.listRoutes(scope)) {
          if (route.servedModel === route.requestedModel && route.certificate === null) continue;
          await saveRoute(
            scope,
            route.requestedModel,
            (current) => ({ ...current, servedModel: current.requestedModel, certificate: null, split: null }),
            'contract_changed',
            `contract version ${stored.version}: new checks, evidence starts again`,
          );
        }
      } else if (decisive.length > 0 && router !== undefined) {
        const changes = decisive.map((field) => `${field} ${String(previous[field])} → ${String(contract[field])}`).join(', ');
        await router.decideAgain(scope, `contract version ${stored.version}: ${changes}, decided again on the same evidence`);
      }
      return {
        object: 'eval_contract',
        project,
        workload,
        version: stored.version,
        default: false,
        evidence_kept: keepEvidence,
        contract,
        semantics: qualitySemantics(contract),
        semantics_detail: qualitySemanticsDetail(contract),
      };
    },

    async getRoutes(key: ApiKey, project: string, workload: string) {
      return routesView({ store, catalog, router, priceOf, now }, await scopeOf(key, project, workload));
    },

    async pin(key: ApiKey, project: string, workload: string, requestedName: string, body: string) {
      const scope = await scopeOf(key, project, workload);
      const requested = catalogModel(requestedName, null);
      const input = parseJsonObject(body);
      if (typeof input.model !== 'string')
        throw new InvalidRequestError('Send {"model": "<catalog id>"}: the model to serve this workload\'s calls for this model.', 'model');
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
        if (!['request_id', 'pass', 'score', 'comment'].includes(field))
          throw new InvalidRequestError(`Unrecognized argument: ${field}`, field, 'unknown_parameter');
      }
      if (typeof input.request_id !== 'string' || input.request_id === '')
        throw new InvalidRequestError('request_id is required: the x-request-id of the call.', 'request_id');
      const pass = input.pass ?? null;
      if (pass !== null && typeof pass !== 'boolean') throw new InvalidRequestError('pass must be true or false.', 'pass');
      const score = input.score ?? null;
      if (score !== null && (typeof score !== 'number' || !(score >= 0 && score <= 1)))
        throw new InvalidRequestError('score must be a number from 0 to 1.', 'score');
      const comment = input.comment ?? null;
      if (comment !== null && (typeof comment !== 'string' || comment.length > 2000))
        throw new InvalidRequestError('comment must be a string of at most 2000 characters.', 'comment');
      if (pass === null && score === null) throw new InvalidRequestError('Send pass (true or false) or score (0 to 1).', 'pass');

      const trace = await store.traces.get(key.accountId, input.request_id);
      if (trace === null)
        throw new NotFoundError(
          `No call '${input.request_id.slice(0, 64)}'. Traces are written within a second of the call.`,
          'trace_not_found',
          'request_id',
        );
      const at = now();
      const previous = await store.routing.getFeedback(key.accountId, trace.requestId);
      const requested = trace.requestedModel === null ? undefined : catalog.resolve(trace.requestedModel);
      const counted =
        pass !== null &&
        trace.environment === 'production' &&
        trace.project !== null &&
        trace.workload !== null &&
        requested !== undefined &&
        trace.servedModel !== null &&
        trace.servedModel !== requested.id;
      const scope = counted ? { accountId: key.accountId, project: trace.project!, workload: trace.workload! } : null;
      const evidenceVersion = scope === null ? null : routes.contract(scope).evidenceVersion;
      await store.routing.recordFeedback({
        requestId: trace.requestId,
        accountId: key.accountId,
        model: trace.servedModel,
        project: trace.project,
        workload: trace.workload,
        pass,
        score,
        comment,
        evidenceVersion,
        createdAt: at,
      });
      if (scope !== null && evidenceVersion !== null) {
        // Idempotent: a second post for a call replaces the first in the evidence it counted in. Evidence
        // reset since then (new checks, a demotion) no longer holds the first: the second counts afresh.
        const rows = await store.routing.listEvidence(scope, requested!.id, evidenceVersion);
        const row = rows.find((counts) => counts.candidateModel === trace.servedModel);
        const heldPass = previous?.pass === true && (row?.passed ?? 0) >= 1;
        const heldFail = previous?.pass === false && (row?.evaluated ?? 0) - (row?.passed ?? 0) >= 1;
        const held = previous?.evidenceVersion === evidenceVersion && (heldPass || heldFail);
        const delta = {
          evaluated: held ? 0 : 1,
          passed: (pass ? 1 : 0) - (held && previous?.pass === true ? 1 : 0),
          errors: 0,
          promptTokens: 0,
          completionTokens: 0,
          costUsd: 0,
          latencyMsTotal: 0,
        };
        if (delta.evaluated !== 0 || delta.passed !== 0)
          await store.routing.addEvidence(scope, requested!.id, trace.servedModel!, evidenceVersion, delta, at);
      }
      return {
        object: 'feedback',
        request_id: trace.requestId,
        model: trace.servedModel,
        pass,
        score,
        comment,
        counted_as_evidence: counted,
      };
    },
  };
}
