/**
 * Logging in and out, and who is logged in. The key typed into the form is
 * checked with the gateway's Authenticator (admin keys only) and then
 * dropped: the session remembers its hash, and each page looks the key up
 * again by it, so revoking the key ends the session.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { AuthenticationError, GatewayError, UnsupportedMediaTypeError } from '../api/errors.js';
import type { Authenticator } from '../auth/authenticator.js';
import { readBody } from '../server/read-body.js';
import type { AccountStore, ApiKey } from '../store/store.js';
import { renderLoginPage } from './login-page.js';
import { redirect, sendHtml } from './responses.js';
import { cameOverTls, clearedSessionCookie, isSameOrigin, sessionCookie, sessionIdOf, type SessionStore } from './sessions.js';

const FORM_LIMIT_BYTES = 8_192;
const LOGIN_REFUSED = 'That is not an admin key of this taskgate (or it was revoked).';

/** Where to go after logging in: only a dashboard path of this site, never `//elsewhere` or a scheme. */
export function safeNext(next: string | null): string | undefined {
  if (next === null || next.length > 1000) return undefined;
  if (!/^\/dashboard(?:[/?][A-Za-z0-9\-._~%/?=&]*)?$/.test(next) || next.includes('//') || next.startsWith('/dashboard/login'))
    return undefined;
  return next;
}

/** 403: a form post whose Origin is not this site (CSRF), on top of the SameSite=Strict cookie. */
export class CrossSiteRequestError extends GatewayError {
  constructor() {
    super('This form was posted from another site, or without an Origin header. Open the dashboard and try again.', {
      status: 403,
      code: 'cross_site_request',
      type: 'permission_error',
    });
  }
}

function refuseCrossSite(request: IncomingMessage): void {
  if (!isSameOrigin(request)) throw new CrossSiteRequestError();
}

export function createLoginActions(dependencies: {
  authenticator: Authenticator;
  accounts: AccountStore;
  sessions: SessionStore;
  bodyTimeoutMs: number;
}) {
  const { authenticator, accounts, sessions } = dependencies;

  async function readForm(request: IncomingMessage): Promise<URLSearchParams> {
    const type = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/x-www-form-urlencoded') throw new UnsupportedMediaTypeError(request.headers['content-type']);
    return new URLSearchParams(await readBody(request, { maxBytes: FORM_LIMIT_BYTES, timeoutMs: dependencies.bodyTimeoutMs }));
  }

  async function adminKey(text: string): Promise<ApiKey | undefined> {
    if (text === '' || /\s/.test(text)) return undefined;
    try {
      const key = await authenticator.authenticate(`Bearer ${text}`);
      return key.role === 'admin' ? key : undefined;
    } catch (error) {
      if (error instanceof AuthenticationError) return undefined;
      throw error;
    }
  }

  return {
    async logIn(request: IncomingMessage, response: ServerResponse, headers: OutgoingHttpHeaders): Promise<void> {
      refuseCrossSite(request);
      const form = await readForm(request);
      const next = safeNext(form.get('next'));
      const key = await adminKey((form.get('key') ?? '').trim());
      if (key === undefined) {
        sendHtml(response, 401, renderLoginPage({ error: LOGIN_REFUSED, next }), headers);
        return;
      }
      const id = await sessions.create(key);
      redirect(response, next ?? '/dashboard', { ...headers, 'set-cookie': sessionCookie(id, cameOverTls(request)) });
    },

    async logOut(request: IncomingMessage, response: ServerResponse, headers: OutgoingHttpHeaders): Promise<void> {
      refuseCrossSite(request);
      const id = sessionIdOf(request);
      if (id !== undefined) await sessions.delete(id);
      redirect(response, '/dashboard/login', { ...headers, 'set-cookie': clearedSessionCookie(cameOverTls(request)) });
    },

    /** The admin key behind the request's session, or undefined (no session, expired, key revoked or demoted). */
    async currentKey(request: IncomingMessage): Promise<ApiKey | undefined> {
      const id = sessionIdOf(request);
      const session = id === undefined ? undefined : await sessions.get(id);
      if (id === undefined || session === undefined) return undefined;
      const key = await accounts.findKeyByHash(session.keyHash);
      if (key === null || key.id !== session.keyId || key.revokedAt !== null || key.role !== 'admin') {
        await sessions.delete(id);
        return undefined;
      }
      return key;
    },
  };
}
