/**
 * The routes and eval contracts every process keeps in memory, so the hot path
 * decides which model serves a call without a store round trip.
 *
 * Routes: loaded at start, then the routes written since the last read are
 * read again whenever the change feed says a route changed (`refresh`), so a
 * route the router (or a person, through a pin) changes in any process is used
 * by every process within a second; every `pollIntervalMs` as well, in case a
 * notice was missed. A change made in this process applies at once (`apply`).
 *
 * What is newer is the store's word, never a clock's: a read asks for the
 * writes after the highest revision it has seen (`Revised`: the database
 * numbers writes in commit order), and the route it reads replaces the one
 * held, whatever either's `updatedAt` (the writing process's clock, which may
 * be seconds off this one's).
 *
 * Contracts: read on a workload's first call (the default serves until the
 * read returns), again when the change feed says one changed
 * (`refreshContract`), and in the background once older than
 * `contractTtlMs`; a `PUT .../eval` in this process applies at once.
 */
import { DEFAULT_CONTRACT, parseEvalContract, type EvalContract } from '../evals/eval-contract.js';
import type { Logger } from '../log/logger.js';
import { createRefreshingCache } from '../store/refreshing-cache.js';
import type { Scope } from '../api/scope.js';
import type { Revised, RouteRecord, RoutingStore } from '../store/routing-store.js';

/** A route as this process holds it. */
interface HeldRoute {
  route: RouteRecord;
  /** The revision of the last write of it read from the store (0: none read yet). */
  revision: number;
  /** Which of this process's `apply` calls set it last (0: set by a read). */
  appliedLocally: number;
}

export interface ContractInForce {
  contract: EvalContract;
  /** 0 for the default contract (never stored). */
  version: number;
  /** Whose evidence this version uses: its own, or that of the last version with the same checks (0: the default's). */
  evidenceVersion: number;
}

export interface RouteTable {
  /**
   * The route of `requestedModel` in this workload as held, undefined when it
   * has none. Which model serves a call is drawn from it (route-reason.ts
   * `drawRoute`: a pin, else a draw among a split's shares, else the serving model).
   */
  route(scope: Scope, requestedModel: string): RouteRecord | undefined;
  contract(scope: Scope): ContractInForce;
  /**
   * A route this process has just stored (or, with the `updatedAt` of the one
   * held, edited before storing it), used at once. The next read that starts
   * after it replaces it with the store's latest write of the route.
   */
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
  const routes = new Map<string, Map<string, HeldRoute>>();
  const contracts = createRefreshingCache<Scope, ContractInForce>({
    keyOf: scopeKey,
    read: async (scope) => {
      const stored = await routing.getContract(scope);
      return stored === null
        ? null
        : { contract: parseEvalContract(stored.contract), version: stored.version, evidenceVersion: stored.evidenceVersion };
    },
    fallback: defaultContract,
    ttlMs: options.contractTtlMs ?? 5_000,
    onError: (error) => logger.warn('eval contract read failed', { error: error instanceof Error ? error.message : String(error) }),
    now,
  });
  /** The highest revision read: the next read asks for the writes after it. */
  let lastRevision = 0;
  /** Lower than `lastRevision` when the next read must read some routes again (`apply`). */
  let rereadAfter = Number.POSITIVE_INFINITY;
  let localApplies = 0;
  let reading: Promise<void> | null = null;
  let readAgain = false;

  function routesOf(scope: Scope): Map<string, HeldRoute> {
    const key = scopeKey(scope);
    let byModel = routes.get(key);
    if (byModel === undefined) routes.set(key, (byModel = new Map()));
    return byModel;
  }

  function apply(route: RouteRecord): void {
    const byModel = routesOf(route.scope);
    const held = byModel.get(route.requestedModel);
    // A write stored here may have committed before a write of another process that a read
    // finished meanwhile has already brought: the store's order, not this call's, says which
    // is newer, so the next read reads the route again. An edit of the route held (the same
    // updatedAt: cooldowns noted before the write that stores them) is not a write.
    if (held !== undefined && held.revision > 0 && held.route.updatedAt !== route.updatedAt)
      rereadAfter = Math.min(rereadAfter, held.revision - 1);
    byModel.set(route.requestedModel, { route, revision: held?.revision ?? 0, appliedLocally: ++localApplies });
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
    const after = Math.min(lastRevision, rereadAfter);
    rereadAfter = Number.POSITIVE_INFINITY;
    const appliedBefore = localApplies;
    let changed: Array<Revised<RouteRecord>>;
    try {
      changed = await routing.listRoutesChangedAfter(after);
    } catch (error) {
      rereadAfter = Math.min(rereadAfter, after);
      logger.warn('route table refresh failed', { error: error instanceof Error ? error.message : String(error) });
      return;
    }
    let readUpTo = changed.at(-1)?.revision ?? after;
    for (const { record, revision } of changed) {
      const byModel = routesOf(record.scope);
      if ((byModel.get(record.requestedModel)?.appliedLocally ?? 0) > appliedBefore) {
        // Applied here while this read ran, which may not have seen the write: read it again.
        readUpTo = Math.min(readUpTo, revision - 1);
        readAgain = true;
        continue;
      }
      byModel.set(record.requestedModel, { route: record, revision, appliedLocally: 0 });
    }
    lastRevision = readUpTo;
  }

  const timer = setInterval(() => void poll(), pollIntervalMs);
  timer.unref();

  return {
    route(scope, requestedModel) {
      return routes.get(scopeKey(scope))?.get(requestedModel)?.route;
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
