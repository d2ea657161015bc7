/**
 * A store that cannot do its work right now (a full disk, a database that is
 * down or locked) answers 503 `store_unavailable` with `retry-after`, never a
 * 500: the request was fine and will succeed once the store recovers. Which
 * back-end errors mean that is decided here, for every back end, and
 * `withStoreErrors` applies it at the composition root, so the back ends stay
 * free of it and a store double's errors are classified like the real ones.
 */
import { GatewayError } from '../api/errors.js';
import type { Store } from './store.js';

export class StoreUnavailableError extends GatewayError {
  constructor(cause: unknown) {
    super(`The store cannot take this now (${describe(cause)}); calls are still served. Retry in a few seconds.`, {
      status: 503,
      code: 'store_unavailable',
      type: 'server_error',
      retryable: true,
      headers: { 'retry-after': '5' },
      cause,
    });
  }
}

/** SQLite result codes of a store that is out of room, unreadable or busy, not of a bad query. */
const unavailableCodes = /^SQLITE_(FULL|IOERR|BUSY|LOCKED|READONLY|CANTOPEN|NOMEM|PROTOCOL)/;

/** Node's socket and DNS errors: PostgreSQL is down, restarting, failing over, or out of reach. */
const connectionCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
  'EAI_AGAIN',
]);

/**
 * PostgreSQL SQLSTATEs of a server that cannot serve now, not of a bad query:
 * class 08 (connection exception), class 53 (insufficient resources: 53100
 * disk full, 53200 out of memory, 53300 too many connections), 57P01-57P03
 * (shut down by an administrator, crashed, not accepting connections yet),
 * 55P03 (a lock not granted within lock_timeout: SQLITE_BUSY's kin) and
 * 25006 (a read-only transaction: after a failover, a standby answering
 * before it is promoted, as SQLITE_READONLY).
 */
const unavailableStates = /^(08...|53...|57P0[123]|55P03|25006)$/;

/** node-postgres's own errors for a connection that broke or never came, which carry no code. */
const connectionMessages =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable|Query read timeout)/;

export function isStoreUnavailable(error: unknown): boolean {
  if (error instanceof StoreUnavailableError) return true;
  if (error instanceof AggregateError && error.errors.some(isStoreUnavailable)) return true;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return unavailableCodes.test(code) || connectionCodes.has(code) || unavailableStates.test(code);
  return error instanceof Error && connectionMessages.test(error.message);
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.slice(0, 200);
}

/** The store with every rejection that means "unavailable" turned into a StoreUnavailableError. */
export function withStoreErrors(store: Store): Store {
  return {
    accounts: translated(store.accounts),
    projects: translated(store.projects),
    traces: translated(store.traces),
    routing: translated(store.routing),
    rollups: translated(store.rollups),
    retention: translated(store.retention),
    sessions: translated(store.sessions),
    leases: translated(store.leases),
    budgets: translated(store.budgets),
    changes: translated(store.changes),
    migrate: () => store.migrate(),
    ping: () => store.ping().catch(translate),
    close: () => store.close(),
  };
}

function translate(error: unknown): never {
  throw isStoreUnavailable(error) ? new StoreUnavailableError(error) : error;
}

function translated<Part extends object>(part: Part): Part {
  const wrappers = new Map<PropertyKey, unknown>();
  return new Proxy(part, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      let wrapper = wrappers.get(name);
      if (wrapper === undefined) {
        wrapper = (...args: unknown[]) => {
          try {
            const result: unknown = (value as (...parameters: unknown[]) => unknown).apply(target, args);
            return result instanceof Promise ? result.catch(translate) : result;
          } catch (error) {
            return translate(error);
          }
        };
        wrappers.set(name, wrapper);
      }
      return wrapper;
    },
  });
}
