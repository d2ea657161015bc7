/**
 * Dashboard sessions, in memory: a random 32-byte id in an HttpOnly cookie
 * stands for an admin key that logged in. The key text never leaves the
 * login request; a session keeps only the key's id, account and SHA-256, and
 * every page looks the key up again by that hash, so a revoked key's session
 * stops at its next page. Sessions do not survive a restart (log in again).
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { ApiKey } from '../store/store.js';

export const SESSION_COOKIE = 'taskgate_session';
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

export interface DashboardSession {
  keyId: string;
  accountId: string;
  keyHash: string;
  expiresAt: number;
}

export interface SessionStore {
  /** A new session for a key that just authenticated; returns its id (the cookie value). */
  create(key: ApiKey): string;
  /** The live session of this id; undefined when unknown or expired (an expired one is dropped). */
  get(id: string): DashboardSession | undefined;
  delete(id: string): void;
  readonly size: number;
}

export function createSessionStore(options: { ttlMs?: number; maxSessions?: number; now?: () => number } = {}): SessionStore {
  const ttlMs = options.ttlMs ?? SESSION_TTL_MS;
  const maxSessions = options.maxSessions ?? 10_000;
  const now = options.now ?? Date.now;
  // Insertion order is creation order, and every session lives as long: the oldest come first.
  const sessions = new Map<string, DashboardSession>();

  function prune(): void {
    const time = now();
    for (const [id, session] of sessions) {
      if (session.expiresAt > time && sessions.size < maxSessions) break;
      sessions.delete(id);
    }
  }

  return {
    create(key) {
      prune();
      const id = randomBytes(32).toString('base64url');
      sessions.set(id, { keyId: key.id, accountId: key.accountId, keyHash: key.hash, expiresAt: now() + ttlMs });
      return id;
    },
    get(id) {
      const session = sessions.get(id);
      if (session === undefined) return undefined;
      if (session.expiresAt <= now()) {
        sessions.delete(id);
        return undefined;
      }
      return session;
    },
    delete(id) {
      sessions.delete(id);
    },
    get size() {
      return sessions.size;
    },
  };
}

/** The session id from the Cookie header, if it has the shape of one. */
export function sessionIdOf(request: IncomingMessage): string | undefined {
  const header = request.headers.cookie;
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const separator = part.indexOf('=');
    if (separator === -1 || part.slice(0, separator).trim() !== SESSION_COOKIE) continue;
    const value = part.slice(separator + 1).trim();
    if (/^[A-Za-z0-9_-]{43}$/.test(value)) return value;
  }
  return undefined;
}

/** TLS at this process or at a proxy in front of it that says so. */
export function cameOverTls(request: IncomingMessage): boolean {
  const forwarded = request.headers['x-forwarded-proto'];
  const proto = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim().toLowerCase();
  if (proto !== undefined) return proto === 'https';
  return 'encrypted' in request.socket && request.socket.encrypted === true;
}

export function sessionCookie(id: string, secure: boolean, ttlMs = SESSION_TTL_MS): string {
  return `${SESSION_COOKIE}=${id}; Max-Age=${Math.floor(ttlMs / 1000)}; Path=/dashboard; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Max-Age=0; Path=/dashboard; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/**
 * CSRF defence for form posts, on top of SameSite=Strict: the Origin (or,
 * without one, the Referer) must be this very host. A post with neither is
 * refused too; every browser sends Origin on a POST.
 */
export function isSameOrigin(request: IncomingMessage): boolean {
  const host = request.headers['x-forwarded-host'] ?? request.headers.host;
  const expectedHost = (Array.isArray(host) ? host[0] : host)?.split(',')[0]?.trim().toLowerCase();
  if (expectedHost === undefined) return false;
  const source = request.headers.origin ?? request.headers.referer;
  if (source === undefined || source === 'null') return false;
  try {
    const url = new URL(source);
    return url.host.toLowerCase() === expectedHost && url.protocol === (cameOverTls(request) ? 'https:' : 'http:');
  } catch {
    return false;
  }
}
