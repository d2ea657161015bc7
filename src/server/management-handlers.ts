/**
 * The management API: keys, projects, workloads and traces, scoped to the
 * caller's account. Reads take any key of the account; anything that changes
 * state takes an admin key. Another account's resources are 404, never 403,
 * so their existence is not revealed.
 */
import { InvalidRequestError, NotFoundError } from '../api/errors.js';
import { parseJsonObject } from '../api/parse-json-body.js';
import { isValidProjectSlug } from '../api/scope.js';
import { issueKey } from '../auth/key-issuer.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { ApiKey, PageRequest, Store, Trace, TraceFilter } from '../store/store.js';
import { engineAttempts } from '../tracking/engine-attempts.js';
import { accountWorkload } from './account-scope.js';
import { parseTime } from './parse-time.js';

export interface ManagementDependencies {
  store: Store;
  authenticator: Authenticator;
}

/** The public view of a key: never its hash. */
export function keyView(key: ApiKey): Record<string, unknown> {
  return {
    id: key.id,
    object: 'api_key',
    name: key.name,
    prefix: key.displayPrefix,
    environment: key.environment,
    role: key.role,
    requests_per_minute: key.requestsPerMinute,
    tokens_per_minute: key.tokensPerMinute,
    created_at: seconds(key.createdAt),
    last_used_at: key.lastUsedAt === null ? null : seconds(key.lastUsedAt),
    revoked_at: key.revokedAt === null ? null : seconds(key.revokedAt),
  };
}

export function traceView(trace: Trace): Record<string, unknown> {
  return {
    object: 'trace',
    request_id: trace.requestId,
    project: trace.project,
    workload: trace.workload,
    environment: trace.environment,
    key_id: trace.keyId,
    user: trace.user,
    requested_model: trace.requestedModel,
    served_model: trace.servedModel,
    route_reason: trace.routeReason,
    route_share: trace.routeShare,
    replica: trace.replica,
    // Always a list here: one attempt (or none) is not stored as one, but is told the same way.
    attempts: engineAttempts(trace),
    status: trace.status,
    error_class: trace.errorClass,
    error_message: trace.errorMessage,
    http_status: trace.httpStatus,
    finish_reason: trace.finishReason,
    prompt_tokens: trace.promptTokens,
    completion_tokens: trace.completionTokens,
    cost_usd: trace.costUsd,
    engine_seconds: trace.engineSeconds,
    measured_cost_usd: trace.measuredCostUsd,
    latency_ms: trace.latencyMs,
    ttft_ms: trace.ttftMs,
    stream: trace.stream,
    metadata: trace.metadata,
    started_at: seconds(trace.startedAt),
    request_body: trace.requestBody,
    reply_body: trace.replyBody,
  };
}

function seconds(milliseconds: number): number {
  return Math.floor(milliseconds / 1000);
}

/** A key's own rate (null or absent: the configured default), an integer from 1 to `maximum`. */
function perMinute(value: unknown, field: string, maximum: number): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > maximum) {
    throw new InvalidRequestError(`${field} must be an integer from 1 to ${maximum}, or null for the configured default.`, field);
  }
  return value;
}

export function pageRequest(query: URLSearchParams): PageRequest {
  const limitText = query.get('limit');
  const limit = limitText === null ? 20 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw new InvalidRequestError('limit must be an integer from 1 to 100.', 'limit');
  return { limit, cursor: query.get('cursor') };
}

export function createManagementHandlers({ store, authenticator }: ManagementDependencies) {
  return {
    async listKeys(key: ApiKey, query: URLSearchParams) {
      const page = await store.accounts.listKeys(key.accountId, pageRequest(query));
      return { object: 'list', data: page.items.map(keyView), next_cursor: page.nextCursor };
    },

    async createKey(key: ApiKey, body: string) {
      const input = body.trim() === '' ? {} : parseJsonObject(body);
      for (const field of Object.keys(input)) {
        if (!['environment', 'role', 'name', 'requests_per_minute', 'tokens_per_minute'].includes(field))
          throw new InvalidRequestError(`Unrecognized argument: ${field}`, field, 'unknown_parameter');
      }
      const environment = input.environment ?? 'production';
      if (environment !== 'production' && environment !== 'staging')
        throw new InvalidRequestError("environment must be 'production' or 'staging'.", 'environment');
      const role = input.role ?? 'inference';
      if (role !== 'inference' && role !== 'admin') throw new InvalidRequestError("role must be 'inference' or 'admin'.", 'role');
      const name = input.name ?? null;
      if (name !== null && (typeof name !== 'string' || name.length > 128))
        throw new InvalidRequestError('name must be a string of at most 128 characters.', 'name');
      const requestsPerMinute = perMinute(input.requests_per_minute, 'requests_per_minute', 1_000_000);
      const tokensPerMinute = perMinute(input.tokens_per_minute, 'tokens_per_minute', 1_000_000_000);
      const issued = await issueKey(store.accounts, {
        accountId: key.accountId,
        environment,
        role,
        name,
        requestsPerMinute,
        tokensPerMinute,
      });
      return { ...keyView(issued.key), key: issued.text };
    },

    async revokeKey(key: ApiKey, keyId: string) {
      if (!(await store.accounts.revokeKey(key.accountId, keyId, Date.now()))) {
        throw new NotFoundError(`No active key with id '${keyId.slice(0, 64)}'.`, 'key_not_found');
      }
      authenticator.forgetKey(keyId);
      return { id: keyId, object: 'api_key', revoked: true };
    },

    async listProjects(key: ApiKey, query: URLSearchParams) {
      const page = await store.projects.listProjects(key.accountId, pageRequest(query));
      return {
        object: 'list',
        data: page.items.map((project) => ({ object: 'project', slug: project.slug, created_at: seconds(project.createdAt) })),
        next_cursor: page.nextCursor,
      };
    },

    async listWorkloads(key: ApiKey, project: string, query: URLSearchParams) {
      const page = isValidProjectSlug(project) ? await store.projects.listWorkloads(key.accountId, project, pageRequest(query)) : null;
      if (page === null) throw new NotFoundError(`No project '${project.slice(0, 64)}'.`, 'project_not_found');
      return {
        object: 'list',
        data: page.items.map((workload) => ({ object: 'workload', project, name: workload.name, created_at: seconds(workload.createdAt) })),
        next_cursor: page.nextCursor,
      };
    },

    async listTraces(key: ApiKey, project: string, workload: string, query: URLSearchParams) {
      // Another account's workload is a 404 like one that never existed, never an empty list.
      await accountWorkload(store, key, project, workload);
      const filter: TraceFilter = { project, workload };
      const status = query.get('status');
      if (status !== null) {
        if (status !== 'ok' && status !== 'error' && status !== 'aborted')
          throw new InvalidRequestError("status must be 'ok', 'error' or 'aborted'.", 'status');
        filter.status = status;
      }
      const model = query.get('model');
      if (model !== null) filter.model = model;
      const user = query.get('user');
      if (user !== null) filter.user = user;
      const since = query.get('since');
      if (since !== null) filter.since = parseTime(since, Date.now(), 'since');
      const until = query.get('until');
      if (until !== null) filter.until = parseTime(until, Date.now(), 'until');
      const page = await store.traces.list(key.accountId, filter, pageRequest(query));
      return { object: 'list', data: page.items.map(traceView), next_cursor: page.nextCursor };
    },

    async getTrace(key: ApiKey, requestId: string) {
      const trace = await store.traces.get(key.accountId, requestId);
      if (trace === null)
        throw new NotFoundError(
          `No trace for request '${requestId.slice(0, 64)}'. Traces are written within a second of the call.`,
          'trace_not_found',
        );
      const feedback = await store.routing.getFeedback(key.accountId, requestId);
      return {
        ...traceView(trace),
        feedback:
          feedback === null
            ? null
            : { pass: feedback.pass, score: feedback.score, comment: feedback.comment, created_at: seconds(feedback.createdAt) },
      };
    },
  };
}

export type ManagementHandlers = ReturnType<typeof createManagementHandlers>;
