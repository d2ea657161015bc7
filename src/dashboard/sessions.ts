/**
 * Dashboard sessions: a random 32-byte id in an HttpOnly cookie stands for an
 * admin key that logged in. The key text never leaves the login request; a
 * session keeps only the key's id, account and SHA-256, and every page looks
 * the key up again by that hash, so a revoked key's session stops at its next
 * page. Sessions live in the store (`store/session-store.ts`), id hashed, so
 * every process of a fleet knows them and they survive a restart.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { SessionStore as StoredSessions } from '../store/session-store.js';
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
  create(key: ApiKey): Promise<string>;
  /** The live session of this id; undefined when unknown or expired. */
  get(id: string): Promise<DashboardSession | undefined>;
  delete(id: string): Promise<void>;
}

export function createSessionStore(options: { store: StoredSessions; ttlMs?: number; now?: () => number }): SessionStore {
  const { store } = options;
  const ttlMs = options.ttlMs ?? SESSION_TTL_MS;
  const now = options.now ?? Date.now;
  let lastPruneAt = 0;
  const hashOf = (id: string) => createHash('sha256').update(id).digest('hex');
  return {
    async create(key) {
      const time = now();
      // Expired sessions are removed as new ones come, at most once a minute.
      if (time - lastPruneAt > 60_000) {
        lastPruneAt = time;
        await store.pruneSessions(time);
      }
      const id = randomBytes(32).toString('base64url');
      await store.createSession({
        idHash: hashOf(id),
        keyId: key.id,
        accountId: key.accountId,
        keyHash: key.hash,
        expiresAt: time + ttlMs,
      });
      return id;
    },
    async get(id) {
      const session = await store.getSession(hashOf(id), now());
      return session === null
        ? undefined
        : { keyId: session.keyId, accountId: session.accountId, keyHash: session.keyHash, expiresAt: session.expiresAt };
    },
    async delete(id) {
      await store.deleteSession(hashOf(id));
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
