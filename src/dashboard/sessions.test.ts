import type { IncomingMessage } from 'node:http';
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { ApiKey, Store } from '../store/store.js';
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
  dailyBudgetUsd: null,
  monthlyBudgetUsd: null,
};

function request(headers: Record<string, string>, encrypted = false): IncomingMessage {
  return { headers, socket: encrypted ? { encrypted: true } : {} } as unknown as IncomingMessage;
}

describe('session store', () => {
  let store: Store;
  beforeEach(async () => {
    store = createSqliteStore({ path: ':memory:' });
    await store.migrate();
  });
  afterEach(() => store.close());

  it('makes unguessable ids that stand for the key without holding its text, and stores only their hash', async () => {
    const sessions = createSessionStore({ store: store.sessions });
    const first = await sessions.create(key);
    const second = await sessions.create(key);
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 random bytes
    expect(first).not.toBe(second);
    expect(await sessions.get(first)).toMatchObject({ keyId: 'key_1', accountId: 'acct_1', keyHash: key.hash });
    expect(await store.sessions.getSession(first, 0)).toBeNull();
    expect(await store.sessions.getSession(createHash('sha256').update(first).digest('hex'), 0)).toMatchObject({ keyId: 'key_1' });
    await sessions.delete(first);
    expect(await sessions.get(first)).toBeUndefined();
    expect(await sessions.get(second)).toBeDefined();
  });

  it('forgets a session when it expires, and prunes expired ones as new ones come', async () => {
    let time = 1_000;
    const sessions = createSessionStore({ store: store.sessions, ttlMs: 100, now: () => time });
    const old = await sessions.create(key);
    time += 99;
    expect(await sessions.get(old)).toBeDefined();
    time += 1;
    expect(await sessions.get(old)).toBeUndefined();
    time += 120_000;
    await sessions.create(key);
    expect(await store.sessions.pruneSessions(time)).toBe(0);
  });

  it('is known to every process on the store: a session made by one is read by another', async () => {
    const made = await createSessionStore({ store: store.sessions }).create(key);
    expect(await createSessionStore({ store: store.sessions }).get(made)).toMatchObject({ keyId: 'key_1' });
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
    for (const bad of [
      '//evil.example/dashboard',
      'https://evil.example/dashboard',
      '/dashboard//evil.example',
      '/dashboardx',
      '/dashboard/login',
      '/v1/keys',
      '/dashboard/"><script>',
      null,
    ]) {
      expect(safeNext(bad)).toBeUndefined();
    }
  });
});
