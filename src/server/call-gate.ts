/**
 * Admission for every authenticated endpoint: who is calling, and may they
 * call now. The rate-limit headers are set on `headers` whatever the outcome,
 * so a 429 and a streamed head carry them like every other reply: the
 * request budget's always, the token budget's when the key has one.
 */
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { PermissionError, RateLimitError } from '../api/errors.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { Admission, RateLimiter } from '../limits/rate-limiter.js';
import type { ApiKey } from '../store/store.js';

export interface CallGate {
  authenticate(request: IncomingMessage): ApiKey | Promise<ApiKey>;
  /**
   * Takes one request from the key's budget; throws `RateLimitError` when it
   * has none, or its token budget is spent. Returns a promise only when the
   * limiter must ask elsewhere (Redis): the in-process limiter answers at
   * once, and the call goes on in the same tick.
   */
  limit(key: ApiKey, headers: OutgoingHttpHeaders): void | Promise<void>;
  /** Authenticates and limits in one step; with `role: 'admin'`, refuses other keys with 403. */
  admit(request: IncomingMessage, headers: OutgoingHttpHeaders, role?: 'admin'): Promise<ApiKey>;
  /** Spends a finished call's tokens (prompt plus completion) from the key's token budget, if it has one. Never waits, never throws. */
  spendTokens(key: ApiKey, tokens: number): void;
}

export interface CallGateOptions {
  authenticator: Authenticator;
  limiter: RateLimiter;
  /** `limits.requests_per_minute`: for keys without their own rate. */
  defaultRequestsPerMinute: number;
  /** `limits.tokens_per_minute`: for keys without their own; null for no token limit. */
  defaultTokensPerMinute: number | null;
}

export function createCallGate(options: CallGateOptions): CallGate {
  const { authenticator, limiter, defaultRequestsPerMinute, defaultTokensPerMinute } = options;

  function limit(key: ApiKey, headers: OutgoingHttpHeaders): void | Promise<void> {
    const tokensPerMinute = key.tokensPerMinute ?? defaultTokensPerMinute;
    const admission = limiter.admit(key.id, { requestsPerMinute: key.requestsPerMinute ?? defaultRequestsPerMinute, tokensPerMinute });
    if (admission instanceof Promise) return admission.then((answer) => applyAdmission(answer, headers));
    applyAdmission(admission, headers);
  }

  function applyAdmission(admission: Admission, headers: OutgoingHttpHeaders): void {
    const { requests, tokens } = admission;
    headers['x-ratelimit-limit-requests'] = requests.limit;
    headers['x-ratelimit-remaining-requests'] = requests.remaining;
    headers['x-ratelimit-reset-requests'] = requests.resetSeconds;
    if (tokens !== null) {
      headers['x-ratelimit-limit-tokens'] = tokens.limit;
      headers['x-ratelimit-remaining-tokens'] = tokens.remaining;
      headers['x-ratelimit-reset-tokens'] = tokens.resetSeconds;
    }
    if (!admission.allowed) {
      const refusing = admission.refusedBy === 'tokens' && tokens !== null ? tokens : requests;
      throw new RateLimitError(refusing.limit, admission.retryAfterSeconds, admission.refusedBy ?? 'requests');
    }
  }

  return {
    authenticate: (request) => authenticator.authenticate(request.headers.authorization),
    limit,
    async admit(request, headers, role) {
      const key = await authenticator.authenticate(request.headers.authorization);
      await limit(key, headers);
      if (role === 'admin' && key.role !== 'admin')
        throw new PermissionError('This action needs an admin key; the key used has the inference role.');
      return key;
    },
    spendTokens(key, tokens) {
      const tokensPerMinute = key.tokensPerMinute ?? defaultTokensPerMinute;
      if (tokensPerMinute !== null && tokens > 0) limiter.spendTokens(key.id, tokensPerMinute, tokens);
    },
  };
}
