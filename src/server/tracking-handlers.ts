/**
 * Workload numbers over the API: summaries per workload, one workload's stats
 * (per served model, with its route and eval summary), and its failures with
 * the latest examples. Windows come from `?since=&until=&env=`.
 */
import { InvalidRequestError } from '../api/errors.js';
import { parseJsonObject } from '../api/parse-json-body.js';
import type { RetentionPolicy } from '../store/retention-store.js';
import type { Retention } from '../tracking/retention.js';
import type { ApiKey, Environment, Store, Trace } from '../store/store.js';
import type { CallStats, StatsService, StatsWindow } from '../tracking/stats-service.js';
import { traceView } from './management-handlers.js';
import { accountProject, accountWorkload } from './account-scope.js';
import { parseTime } from './parse-time.js';
import type { createRoutingHandlers } from './routing-handlers.js';

export interface TrackingHandlersDependencies {
  store: Store;
  stats: StatsService;
  retention: Retention;
  routing: ReturnType<typeof createRoutingHandlers>;
  now?: () => number;
}

function statsWindow(query: URLSearchParams, now: number): StatsWindow {
  const since = parseTime(query.get('since') ?? '24h', now, 'since');
  const untilText = query.get('until');
  const until = untilText === null ? now + 1 : parseTime(untilText, now, 'until');
  if (until <= since) throw new InvalidRequestError('until must be after since.', 'until');
  const env = query.get('env') ?? 'production';
  if (env !== 'production' && env !== 'staging' && env !== 'all')
    throw new InvalidRequestError("env must be 'production', 'staging' or 'all'.", 'env');
  return { since, until, environment: env as Environment | 'all' };
}

function callStatsView(stats: CallStats): Record<string, unknown> {
  const tokens = stats.promptTokens + stats.completionTokens;
  return {
    calls: stats.calls,
    errors: stats.errors,
    error_rate: stats.errorRate,
    prompt_tokens: stats.promptTokens,
    completion_tokens: stats.completionTokens,
    cost_usd: stats.costUsd,
    // The catalog's cost per call and per million tokens, and beside it what the engines' time cost (null without a cost_per_hour).
    cost_per_call_usd: stats.calls === 0 ? null : stats.costUsd / stats.calls,
    cost_per_million_tokens_usd: tokens === 0 ? null : (stats.costUsd / tokens) * 1_000_000,
    measured:
      stats.measured === null
        ? null
        : {
            calls: stats.measured.calls,
            cost_usd: stats.measured.costUsd,
            cost_per_call_usd: stats.measured.costPerCallUsd,
            cost_per_million_tokens_usd: stats.measured.costPerMillionTokensUsd,
          },
    latency_ms: stats.latencyMs,
    ttft_ms: stats.ttftMs,
  };
}

export function createTrackingHandlers({ store, stats, retention, routing, now = Date.now }: TrackingHandlersDependencies) {
  const scopeOf = (key: ApiKey, project: string, workload: string) => accountWorkload(store, key, project, workload);

  /** The latest failed calls of a workload, grouped by error class. */
  async function latestFailures(key: ApiKey, project: string, workload: string, perClass: number): Promise<Map<string, Trace[]>> {
    const groups = new Map<string, Trace[]>();
    for (const status of ['error', 'aborted'] as const) {
      const page = await store.traces.list(key.accountId, { project, workload, status }, { limit: 100 });
      for (const trace of page.items) {
        const errorClass = trace.errorClass ?? 'unknown';
        const group = groups.get(errorClass) ?? [];
        if (group.length < perClass) group.push(trace);
        groups.set(errorClass, group);
      }
    }
    return groups;
  }

  return {
    async getRetention(key: ApiKey, project: string) {
      const policy = await retention.policy(key.accountId, await accountProject(store, key, project));
      return retentionView(project, policy);
    },

    async putRetention(key: ApiKey, project: string, body: string) {
      await accountProject(store, key, project);
      const policy = parseRetention(parseJsonObject(body));
      await retention.setPolicy(key.accountId, project, policy);
      return retentionView(project, { ...policy, own: true });
    },

    async workloadSummaries(key: ApiKey, project: string, query: URLSearchParams) {
      await accountProject(store, key, project);
      const window = statsWindow(query, now());
      return new Map((await stats.workloadSummaries(key.accountId, window, project)).map((summary) => [summary.workload, summary]));
    },

    async workload(key: ApiKey, project: string, workload: string, query: URLSearchParams) {
      const scope = await scopeOf(key, project, workload);
      const window = statsWindow(query, now());
      const result = await stats.workloadStats(scope, window);
      const routes = await routing.getRoutes(key, project, workload);
      return {
        object: 'workload',
        project,
        workload,
        window: { since: Math.floor(window.since / 1000), until: Math.floor(window.until / 1000), env: window.environment },
        stats: {
          ...callStatsView(result),
          failures: Object.fromEntries(result.failures.map((failure) => [failure.errorClass, failure.count])),
        },
        models: result.models.map((model) => ({ model: model.model, ...callStatsView(model) })),
        routes: routes.routes.map((route) => ({
          requested_model: route.requested_model,
          served_model: route.served_model,
          certificate: route.certificate,
          savings_usd: route.savings_usd,
        })),
        quality: {
          contract_version: routes.contract_version,
          pass_rate: routes.pass_rate,
          candidates: routes.routes.flatMap((route) =>
            route.candidates.map((candidate) => ({
              requested_model: route.requested_model,
              model: candidate.model,
              state: candidate.state,
              evaluated: candidate.evaluated,
              pass_rate: candidate.pass_rate,
              interval: [candidate.lower_bound, candidate.upper_bound],
            })),
          ),
          feedback: (await store.routing.feedbackSummary(scope)).map((entry) => ({
            model: entry.model,
            count: entry.count,
            passed: entry.passed,
            failed: entry.failed,
            mean_score: entry.meanScore,
          })),
          notice: routes.routes.length === 0 ? 'no evidence yet: the router has not sampled this workload' : null,
        },
      };
    },

    async failures(key: ApiKey, project: string, workload: string, query: URLSearchParams) {
      const scope = await scopeOf(key, project, workload);
      const result = await stats.workloadStats(scope, statsWindow(query, now()));
      const examples = await latestFailures(key, project, workload, 3);
      return {
        object: 'list',
        data: result.failures.map((failure) => ({
          error_class: failure.errorClass,
          count: failure.count,
          latest: (examples.get(failure.errorClass) ?? []).map(traceView),
        })),
      };
    },
  };
}

function retentionView(project: string, policy: RetentionPolicy & { own: boolean }): Record<string, unknown> {
  return {
    object: 'retention',
    project,
    default: !policy.own,
    bodies: policy.bodies,
    sample_rate: policy.sampleRate,
    bodies_ttl_days: policy.bodiesTtlDays,
    traces_ttl_days: policy.tracesTtlDays,
  };
}

function parseRetention(input: Record<string, unknown>): RetentionPolicy {
  for (const field of Object.keys(input)) {
    if (!['bodies', 'sample_rate', 'bodies_ttl_days', 'traces_ttl_days'].includes(field))
      throw new InvalidRequestError(`Unrecognized argument: ${field}`, field, 'unknown_parameter');
  }
  const bodies = input.bodies ?? 'all';
  if (bodies !== 'all' && bodies !== 'sample' && bodies !== 'none')
    throw new InvalidRequestError("bodies must be 'all', 'sample' or 'none'.", 'bodies');
  const sampleRate = input.sample_rate ?? (bodies === 'sample' ? 0.1 : 1);
  if (typeof sampleRate !== 'number' || !(sampleRate >= 0 && sampleRate <= 1))
    throw new InvalidRequestError('sample_rate must be a number from 0 to 1.', 'sample_rate');
  const days = (field: 'bodies_ttl_days' | 'traces_ttl_days'): number | null => {
    const value = input[field] ?? null;
    if (value !== null && (typeof value !== 'number' || !(value > 0) || value > 36_500))
      throw new InvalidRequestError(`${field} must be a number of days above 0, or null to keep.`, field);
    return value as number | null;
  };
  return { bodies, sampleRate, bodiesTtlDays: days('bodies_ttl_days'), tracesTtlDays: days('traces_ttl_days') };
}
