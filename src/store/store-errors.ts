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

export function isStoreUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && unavailableCodes.test(code);
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
