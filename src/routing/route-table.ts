/**
 * The routes and eval contracts every process keeps in memory, so the hot path
 * decides which model serves a call without a store round trip.
 *
 * Routes: loaded at start, then the rows changed since the last read are read
 * again whenever the change feed says a route changed (`refresh`), so a route
 * the router (or a person, through a pin) changes in any process is used by
 * every process within a second; every `pollIntervalMs` as well, in case a
 * notice was missed. A change made in this process applies at once (`apply`).
 *
 * Contracts: read on a workload's first call (the default serves until the
 * read returns), again when the change feed says one changed
 * (`refreshContract`), and in the background once older than
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
  /** Reads the routes changed since the last read (another process changed one). */
  refresh(): Promise<void>;
  /** Reads a workload's contract again (another process stored a new version). */
  refreshContract(scope: Scope): void;
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
  const pollIntervalMs = options.pollIntervalMs ?? 5_000;
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
  let reading: Promise<void> | null = null;
  let readAgain = false;

  function apply(route: RouteRecord): void {
    const key = scopeKey(route.scope);
    let byModel = routes.get(key);
    if (byModel === undefined) routes.set(key, (byModel = new Map()));
    const known = byModel.get(route.requestedModel);
    if (known === undefined || known.updatedAt <= route.updatedAt) byModel.set(route.requestedModel, route);
  }

  /** One read at a time; a read asked for while one runs runs again after it, so no notice is lost. */
  function poll(): Promise<void> {
    if (reading !== null) {
      readAgain = true;
      return reading;
    }
    reading = (async () => {
      do {
        readAgain = false;
        await readChanged();
      } while (readAgain);
    })().finally(() => (reading = null));
    return reading;
  }

  async function readChanged(): Promise<void> {
    const startedAt = now();
    try {
      // A second of overlap: a row committed while the previous read ran is read again, not missed.
      for (const route of await routing.listRoutesChangedSince(Math.max(0, lastPoll - 1_000))) apply(route);
      lastPoll = startedAt;
    } catch (error) {
      logger.warn('route table refresh failed', { error: error instanceof Error ? error.message : String(error) });
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
    refresh: poll,
    refreshContract(scope) {
      contracts.refresh(scope);
    },
    async close() {
      clearInterval(timer);
    },
  };
}
