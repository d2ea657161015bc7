/**
 * The routes and eval contracts every process keeps in memory, so the hot path
 * decides which model serves a call without a store round trip.
 *
 * Routes: loaded at start, then every `pollIntervalMs` the rows changed since
 * the last poll are read again, so a route the router (or a person, through a
 * pin) changes in any process is used by every process within a second. A
 * change made in this process applies at once (`apply`).
 *
 * Contracts: read on a workload's first call (the default serves until the
 * read returns) and re-read in the background once they are older than
 * `contractTtlMs`; a `PUT .../eval` in this process applies at once.
 */
import { DEFAULT_CONTRACT, parseEvalContract, type EvalContract } from '../evals/eval-contract.js';
import type { Logger } from '../log/logger.js';
import { createRefreshingCache } from '../store/refreshing-cache.js';
import type { RouteRecord, RoutingStore, Scope } from '../store/routing-store.js';

export interface ContractInForce {
  contract: EvalContract;
  /** 0 for the default contract (never stored). */
  version: number;
  /** Whose evidence this version uses: its own, or that of the last version with the same checks (0: the default's). */
  evidenceVersion: number;
}

export interface RouteTable {
  /** The model serving `requestedModel` in this workload: a pin, else the router's choice, else the requested model. */
  servedModel(scope: Scope, requestedModel: string): string;
  route(scope: Scope, requestedModel: string): RouteRecord | undefined;
  contract(scope: Scope): ContractInForce;
  apply(route: RouteRecord): void;
  applyContract(scope: Scope, contract: ContractInForce): void;
  /** Reads every route once (call before serving). */
  load(): Promise<void>;
  close(): Promise<void>;
}

export interface RouteTableOptions {
  routing: RoutingStore;
  logger: Logger;
  pollIntervalMs?: number;
  contractTtlMs?: number;
  now?: () => number;
}

const defaultContract: ContractInForce = { contract: DEFAULT_CONTRACT, version: 0, evidenceVersion: 0 };

export function scopeKey(scope: Scope): string {
  return `${scope.accountId}\u0000${scope.project}\u0000${scope.workload}`;
}

export function createRouteTable(options: RouteTableOptions): RouteTable {
  const { routing, logger } = options;
  const now = options.now ?? Date.now;
  const pollIntervalMs = options.pollIntervalMs ?? 500;
  const routes = new Map<string, Map<string, RouteRecord>>();
  const contracts = createRefreshingCache<Scope, ContractInForce>({
    keyOf: scopeKey,
    read: async (scope) => {
      const stored = await routing.getContract(scope);
      return stored === null ? null : { contract: parseEvalContract(stored.contract), version: stored.version, evidenceVersion: stored.evidenceVersion };
    },
    fallback: defaultContract,
    ttlMs: options.contractTtlMs ?? 5_000,
    onError: (error) => logger.warn('eval contract read failed', { error: error instanceof Error ? error.message : String(error) }),
    now,
  });
  let lastPoll = 0;
  let polling = false;

  function apply(route: RouteRecord): void {
    const key = scopeKey(route.scope);
    let byModel = routes.get(key);
    if (byModel === undefined) routes.set(key, (byModel = new Map()));
    const known = byModel.get(route.requestedModel);
    if (known === undefined || known.updatedAt <= route.updatedAt) byModel.set(route.requestedModel, route);
  }

  async function poll(): Promise<void> {
    if (polling) return;
    polling = true;
    const startedAt = now();
    try {
      // A second of overlap: a row committed while the previous poll ran is read again, not missed.
      for (const route of await routing.listRoutesChangedSince(Math.max(0, lastPoll - 1_000))) apply(route);
      lastPoll = startedAt;
    } catch (error) {
      logger.warn('route table refresh failed', { error: error instanceof Error ? error.message : String(error) });
    } finally {
      polling = false;
    }
  }

  const timer = setInterval(() => void poll(), pollIntervalMs);
  timer.unref();

  return {
    servedModel(scope, requestedModel) {
      const route = routes.get(scopeKey(scope))?.get(requestedModel);
      if (route === undefined) return requestedModel;
      return route.pinnedModel ?? route.servedModel;
    },
    route(scope, requestedModel) {
      return routes.get(scopeKey(scope))?.get(requestedModel);
    },
    contract(scope) {
      return contracts.get(scope);
    },
    apply,
    applyContract(scope, contract) {
      contracts.set(scope, contract);
    },
    async load() {
      await poll();
    },
    async close() {
      clearInterval(timer);
    },
  };
}
