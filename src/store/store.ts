/**
 * The Store contract: everything taskgate persists, one interface per domain.
 * SQLite (`sqlite/`) is the embedded back end; PostgreSQL (`postgres/`) serves a
 * fleet of processes. Each keeps a domain in a file of the same name
 * (`sqlite-keys.ts`, `postgres-keys.ts`, …), and both run the same suites,
 * one per domain (`test/contracts/store/`).
 *
 * Rules every back end keeps:
 *   - Times are Unix epoch milliseconds (numbers), ids are strings.
 *   - Everything an account owns is looked up with its account id; a record of
 *     another account is `null`/absent, never an error that reveals it exists.
 *   - "ensure" methods are idempotent and safe under concurrent callers (two
 *     processes creating the same project both get the one row).
 *   - Strings are stored as given, NUL characters included.
 *   - Lists are cursor-paginated: `cursor` is opaque, `nextCursor` is null on
 *     the last page.
 */
import type { Scope } from '../api/scope.js';
import type { BudgetStore } from './budget-store.js';
import type { ChangeFeed } from './change-feed.js';
import type { LeaseStore } from './lease-store.js';
import type { RetentionStore } from './retention-store.js';
import type { RollupStore } from './rollup-store.js';
import type { RoutingStore } from './routing-store.js';
import type { SessionStore } from './session-store.js';

export type Environment = 'production' | 'staging';
export type KeyRole = 'inference' | 'admin';

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface PageRequest {
  /** 1..100; back ends clamp. */
  limit: number;
  cursor?: string | null;
}

export interface Account {
  id: string;
  name: string;
  createdAt: number;
}

export interface ApiKey {
  id: string;
  accountId: string;
  name: string | null;
  /** The first characters of the key, e.g. `tg_live_AbCd`: enough to recognise it, never enough to use it. */
  displayPrefix: string;
  /** Lower-case hex SHA-256 of the whole key text. The key itself is never stored. */
  hash: string;
  environment: Environment;
  role: KeyRole;
  /** Per-key request rate; null means the configured default. */
  requestsPerMinute: number | null;
  /** Per-key token rate (prompt plus completion tokens); null means the configured default (`limits.tokens_per_minute`). */
  tokensPerMinute: number | null;
  /** Spend cap of the key's calls per UTC day, USD; null: none. */
  dailyBudgetUsd: number | null;
  /** Spend cap of the key's calls per UTC month, USD; null: none. */
  monthlyBudgetUsd: number | null;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

/** Optional fields left out are null. */
export type NewApiKey = Omit<
  ApiKey,
  'id' | 'createdAt' | 'lastUsedAt' | 'revokedAt' | 'tokensPerMinute' | 'dailyBudgetUsd' | 'monthlyBudgetUsd'
> & {
  createdAt?: number;
  tokensPerMinute?: number | null;
  dailyBudgetUsd?: number | null;
  monthlyBudgetUsd?: number | null;
};

export interface AccountStore {
  /** The account with this name, created if it does not exist. */
  ensureAccount(name: string): Promise<Account>;
  getAccount(id: string): Promise<Account | null>;

  createKey(key: NewApiKey): Promise<ApiKey>;
  /** Revoked keys are returned too (with `revokedAt`); the caller decides. */
  findKeyByHash(hash: string): Promise<ApiKey | null>;
  /** Newest first. Revoked keys included. */
  listKeys(accountId: string, page: PageRequest): Promise<Page<ApiKey>>;
  /** Sets `revokedAt` once; false when no such key in this account or already revoked. */
  revokeKey(accountId: string, keyId: string, at: number): Promise<boolean>;
  /** Hashes of keys revoked at or after `since`, so every process can drop them from its cache. */
  listKeysRevokedSince(since: number): Promise<string[]>;
  /** Batched `lastUsedAt` updates (only ever moves forward). */
  touchKeys(uses: ReadonlyArray<{ keyId: string; usedAt: number }>): Promise<void>;
}

export interface Project {
  id: string;
  accountId: string;
  slug: string;
  createdAt: number;
}

export interface Workload {
  id: string;
  projectId: string;
  name: string;
  createdAt: number;
}

export interface ProjectStore {
  /** Project and workload by name, each created on first use. */
  ensureScope(scope: Scope): Promise<{ project: Project; workload: Workload }>;
  getProject(accountId: string, slug: string): Promise<Project | null>;
  /** Oldest first. */
  listProjects(accountId: string, page: PageRequest): Promise<Page<Project>>;
  /** Oldest first; null when the project is not this account's. */
  listWorkloads(accountId: string, projectSlug: string, page: PageRequest): Promise<Page<Workload> | null>;
}

export type TraceStatus = 'ok' | 'error' | 'aborted';

/** One call, as DESIGN section 6 lists. Scope fields are names, null when the call failed before its scope was known. */
export interface Trace {
  requestId: string;
  accountId: string;
  keyId: string;
  environment: Environment;
  project: string | null;
  workload: string | null;
  user: string | null;
  requestedModel: string | null;
  servedModel: string | null;
  /**
   * Why `servedModel` served: `requested` (no route), `routed` (the router's
   * certified model), `split` (drawn into a certified share of a cheaper
   * model), `policy` (picked by a share's per-call policy, then drawn into
   * the share of the calls it picks), `pinned`, `content` (the route's model
   * cannot take the content), `no_engine`, `guard_fallback`. Null when the
   * call failed before it was routed.
   */
  routeReason: string | null;
  /** The share the served model was drawn for: of the workload's calls (`split`), of the calls the policy picks (`policy`); else null. */
  routeShare: number | null;
  /** The engine id that served (or last failed) the call. */
  replica: string | null;
  /**
   * Every upstream attempt, in order, when the call made two or more (the pool
   * tries another replica only when one provably did not start the call):
   * `outcome` is `'ok'` or the attempt's error code (`engine_unavailable`,
   * `engine_connection_closed`, …). Null when the call made at most one
   * attempt: then `replica`, `status` and `errorClass` describe it.
   */
  attempts: Array<{ replica: string; outcome: string }> | null;
  status: TraceStatus;
  /** The error's stable code (`GatewayError.code`), null on success. */
  errorClass: string | null;
  errorMessage: string | null;
  httpStatus: number;
  finishReason: string | null;
  promptTokens: number;
  completionTokens: number;
  /** Tokens × the served model's catalog price; 0 for a call answered from the response cache. */
  costUsd: number;
  /** Answered from the response cache: no engine ran, it cost nothing. */
  cached: boolean;
  /** What a cached call would have cost (the cost of the call whose reply it replayed); null for every other call. */
  costSavedUsd: number | null;
  /**
   * The call's share of its engines' busy time, seconds: its time on the
   * engine divided by the engine's average calls in flight meanwhile
   * (`EngineMeter`); null when it never reached an engine.
   */
  engineSeconds: number | null;
  /** `engineSeconds` at the engine's `cost_per_hour`, USD; null when the engine has no `cost_per_hour` or the call reached none. */
  measuredCostUsd: number | null;
  latencyMs: number;
  /** Time to first token, streams only. */
  ttftMs: number | null;
  stream: boolean;
  metadata: Record<string, string> | null;
  startedAt: number;
  /** The request body as received, when body retention is on. */
  requestBody: string | null;
  /** The reply as sent (JSON, or the assembled stream), when body retention is on. */
  replyBody: string | null;
}

export interface TraceFilter {
  project?: string;
  workload?: string;
  status?: TraceStatus;
  /** Matches the served model. */
  model?: string;
  user?: string;
  environment?: Environment;
  /** Calls started at or after (epoch ms). */
  since?: number;
  /** Calls started before (epoch ms). */
  until?: number;
}

export interface TraceStore {
  /** Inserts a batch atomically; a request id already stored is skipped. Returns how many were new. */
  insertBatch(traces: readonly Trace[]): Promise<number>;
  get(accountId: string, requestId: string): Promise<Trace | null>;
  /** Newest first. */
  list(accountId: string, filter: TraceFilter, page: PageRequest): Promise<Page<Trace>>;
  count(accountId: string, filter: TraceFilter): Promise<number>;
}

export interface Store {
  readonly accounts: AccountStore;
  readonly projects: ProjectStore;
  readonly traces: TraceStore;
  /** Eval contracts, router evidence, routes, feedback: `routing-store.ts`. */
  readonly routing: RoutingStore;
  /** Per-minute stats kept with the traces: `rollup-store.ts`. */
  readonly rollups: RollupStore;
  /** Per-project body retention and pruning: `retention-store.ts`. */
  readonly retention: RetentionStore;
  /** Dashboard sessions: `session-store.ts`. */
  readonly sessions: SessionStore;
  /** Project and workload budgets, cache settings, spend, the store ledger's rows: `budget-store.ts`. */
  readonly budgets: BudgetStore;
  /** Named leases, such as the router leader's: `lease-store.ts`. */
  readonly leases: LeaseStore;
  /** Changes every process hears about within a second: `change-feed.ts`. */
  readonly changes: ChangeFeed;
  /** Brings the schema up to date; safe to run on every start and concurrently. */
  migrate(): Promise<void>;
  /** Resolves when the store answers (used by `/readyz`). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
