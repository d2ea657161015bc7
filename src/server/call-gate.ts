/**
 * Admission for every authenticated endpoint: who is calling, and may they
 * call now. The rate-limit headers are set on `headers` whatever the outcome,
 * so a 429 and a streamed head carry them like every other reply.
 */
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { PermissionError, RateLimitError } from '../api/errors.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import type { ApiKey } from '../store/store.js';

export interface CallGate {
  authenticate(request: IncomingMessage): ApiKey | Promise<ApiKey>;
  /** Takes one request from the key's budget; throws `RateLimitError` when there is none. */
  limit(key: ApiKey, headers: OutgoingHttpHeaders): Promise<void>;
  /** Authenticates and limits in one step; with `role: 'admin'`, refuses other keys with 403. */
  admit(request: IncomingMessage, headers: OutgoingHttpHeaders, role?: 'admin'): Promise<ApiKey>;
}

export function createCallGate(options: { authenticator: Authenticator; limiter: RateLimiter; defaultRequestsPerMinute: number }): CallGate {
  const { authenticator, limiter, defaultRequestsPerMinute } = options;

  async function limit(key: ApiKey, headers: OutgoingHttpHeaders): Promise<void> {
    const rate = key.requestsPerMinute ?? defaultRequestsPerMinute;
    const decision = await limiter.take(key.id, rate);
    headers['x-ratelimit-limit-requests'] = decision.limit;
    headers['x-ratelimit-remaining-requests'] = decision.remaining;
    headers['x-ratelimit-reset-requests'] = decision.resetSeconds;
    if (!decision.allowed) throw new RateLimitError(decision.limit, decision.retryAfterSeconds);
  }

  return {
    authenticate: (request) => authenticator.authenticate(request.headers.authorization),
    limit,
    async admit(request, headers, role) {
      const key = await authenticator.authenticate(request.headers.authorization);
      await limit(key, headers);
      if (role === 'admin' && key.role !== 'admin') throw new PermissionError('This action needs an admin key; the key used has the inference role.');
      return key;
    },
  };
}
