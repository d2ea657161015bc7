import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { ApiKey } from '../store/store.js';
import { safeNext } from './login-actions.js';
import { cameOverTls, clearedSessionCookie, createSessionStore, isSameOrigin, sessionCookie, sessionIdOf } from './sessions.js';

const key: ApiKey = {
  id: 'key_1',
  accountId: 'acct_1',
  name: null,
  displayPrefix: 'tg_live_AbCd…',
  hash: 'f'.repeat(64),
  environment: 'production',
  role: 'admin',
  requestsPerMinute: null,
  tokensPerMinute: null,
  createdAt: 0,
  lastUsedAt: null,
  revokedAt: null,
};

function request(headers: Record<string, string>, encrypted = false): IncomingMessage {
  return { headers, socket: encrypted ? { encrypted: true } : {} } as unknown as IncomingMessage;
}

describe('session store', () => {
  it('makes unguessable ids that stand for the key without holding its text', () => {
    const sessions = createSessionStore();
    const first = sessions.create(key);
    const second = sessions.create(key);
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 random bytes
    expect(first).not.toBe(second);
    expect(sessions.get(first)).toMatchObject({ keyId: 'key_1', accountId: 'acct_1', keyHash: key.hash });
    sessions.delete(first);
    expect(sessions.get(first)).toBeUndefined();
    expect(sessions.get(second)).toBeDefined();
  });

  it('forgets a session when it expires, and prunes expired ones as new ones come', () => {
    let time = 1_000;
    const sessions = createSessionStore({ ttlMs: 100, now: () => time });
    const old = sessions.create(key);
    time += 99;
    expect(sessions.get(old)).toBeDefined();
    time += 1;
    expect(sessions.get(old)).toBeUndefined();
    const stale = sessions.create(key);
    time += 200;
    sessions.create(key);
    expect(sessions.size).toBe(1);
    expect(sessions.get(stale)).toBeUndefined();
  });

  it('drops the oldest sessions beyond its capacity', () => {
    const sessions = createSessionStore({ maxSessions: 2 });
    const ids = [sessions.create(key), sessions.create(key), sessions.create(key)];
    expect(sessions.size).toBe(2);
    expect(sessions.get(ids[0] as string)).toBeUndefined();
    expect(sessions.get(ids[2] as string)).toBeDefined();
  });
});

describe('cookies', () => {
  it('reads the session id only in its own shape', () => {
    const id = 'a'.repeat(43);
    expect(sessionIdOf(request({ cookie: `other=1; taskgate_session=${id}; x=y` }))).toBe(id);
    expect(sessionIdOf(request({ cookie: 'taskgate_session=short' }))).toBeUndefined();
    expect(sessionIdOf(request({ cookie: `xtaskgate_session=${id}` }))).toBeUndefined();
    expect(sessionIdOf(request({}))).toBeUndefined();
  });

  it('is HttpOnly, SameSite=Strict, scoped to /dashboard, and Secure only over TLS', () => {
    expect(sessionCookie('abc', false)).toBe('taskgate_session=abc; Max-Age=43200; Path=/dashboard; HttpOnly; SameSite=Strict');
    expect(sessionCookie('abc', true)).toMatch(/; Secure$/);
    expect(clearedSessionCookie(false)).toContain('Max-Age=0');
    expect(cameOverTls(request({ 'x-forwarded-proto': 'https' }))).toBe(true);
    expect(cameOverTls(request({ 'x-forwarded-proto': 'http' }, true))).toBe(false);
    expect(cameOverTls(request({}, true))).toBe(true);
    expect(cameOverTls(request({}))).toBe(false);
  });
});

describe('origin check', () => {
  it('accepts a post from this very host and scheme only', () => {
    expect(isSameOrigin(request({ host: '127.0.0.1:8080', origin: 'http://127.0.0.1:8080' }))).toBe(true);
    expect(isSameOrigin(request({ host: '127.0.0.1:8080', referer: 'http://127.0.0.1:8080/dashboard/login' }))).toBe(true);
    expect(isSameOrigin(request({ host: '127.0.0.1:8080', origin: 'http://evil.example' }))).toBe(false);
    expect(isSameOrigin(request({ host: '127.0.0.1:8080', origin: 'https://127.0.0.1:8080' }))).toBe(false);
    expect(isSameOrigin(request({ host: 'gw.example', origin: 'https://gw.example', 'x-forwarded-proto': 'https' }))).toBe(true);
    expect(isSameOrigin(request({ host: '127.0.0.1:8080', origin: 'null' }))).toBe(false);
    expect(isSameOrigin(request({ host: '127.0.0.1:8080' }))).toBe(false);
  });
});

describe('safeNext', () => {
  it('allows only dashboard paths of this site', () => {
    expect(safeNext('/dashboard/projects/shop/workloads/a?since=7d')).toBe('/dashboard/projects/shop/workloads/a?since=7d');
    expect(safeNext('/dashboard')).toBe('/dashboard');
    for (const bad of ['//evil.example/dashboard', 'https://evil.example/dashboard', '/dashboard//evil.example', '/dashboardx', '/dashboard/login', '/v1/keys', '/dashboard/"><script>', null]) {
      expect(safeNext(bad)).toBeUndefined();
    }
  });
});
