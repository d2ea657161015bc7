/**
 * What each page shows, loaded for one admin key: stats from the
 * StatsService, routes from the routing API's own handler, traces from the
 * store. The pages themselves are pure functions of these.
 */
import { NotFoundError } from '../api/errors.js';
import type { createRoutingHandlers } from '../server/routing-handlers.js';
import type { EngineLoad } from '../engines/engine-meter.js';
import type { ApiKey, Store, Trace, TraceFilter } from '../store/store.js';
import type { StatsService } from '../tracking/stats-service.js';
import type { OverviewData } from './overview-page.js';
import { selectWindow } from './time-window.js';
import type { TracePageData } from './trace-page.js';
import type { WorkloadPageData } from './workload-page.js';

export interface PageDataDependencies {
  store: Store;
  stats: StatsService;
  routing: Pick<ReturnType<typeof createRoutingHandlers>, 'getRoutes'>;
  /** Each engine's load in this process, for the overview; none: the overview lists no engines. */
  engineLoad?: () => EngineLoad[];
  now: () => number;
}

const RECENT_CALLS = 20;
const FAILURE_EXAMPLES = 50;
/** The overview lists idle workloads too, up to this many (the ones with calls are always all listed). */
const MAX_LISTED_WORKLOADS = 500;

export function createPageData({ store, stats, routing, engineLoad, now }: PageDataDependencies) {
  async function accountView(key: ApiKey): Promise<{ name: string; keyPrefix: string }> {
    const account = await store.accounts.getAccount(key.accountId);
    return { name: account?.name ?? key.accountId, keyPrefix: key.displayPrefix };
  }

  async function knownWorkloads(accountId: string): Promise<Array<{ project: string; workload: string }>> {
    const found: Array<{ project: string; workload: string }> = [];
    let projectCursor: string | null = null;
    do {
      const projects = await store.projects.listProjects(accountId, { limit: 100, cursor: projectCursor });
      for (const project of projects.items) {
        let workloadCursor: string | null = null;
        do {
          const workloads = await store.projects.listWorkloads(accountId, project.slug, { limit: 100, cursor: workloadCursor });
          for (const workload of workloads?.items ?? []) found.push({ project: project.slug, workload: workload.name });
          workloadCursor = workloads?.nextCursor ?? null;
        } while (workloadCursor !== null && found.length < MAX_LISTED_WORKLOADS);
      }
      projectCursor = projects.nextCursor;
    } while (projectCursor !== null && found.length < MAX_LISTED_WORKLOADS);
    return found;
  }

  /** The newest traces of a workload matching `filter` that started in the window. */
  async function tracesInWindow(accountId: string, filter: TraceFilter, since: number, limit: number): Promise<Trace[]> {
    const page = await store.traces.list(accountId, { ...filter, environment: 'production' }, { limit });
    return page.items.filter((trace) => trace.startedAt >= since);
  }

  return {
    async overview(key: ApiKey, query: URLSearchParams): Promise<OverviewData> {
      const window = selectWindow(query, now());
      const [account, summaries, workloads] = await Promise.all([
        accountView(key),
        stats.workloadSummaries(key.accountId, window.stats),
        knownWorkloads(key.accountId),
      ]);
      return { account, window: window.name, summaries, workloads, engines: engineLoad?.() ?? [] };
    },

    async workload(key: ApiKey, project: string, workload: string, query: URLSearchParams): Promise<WorkloadPageData> {
      const window = selectWindow(query, now());
      // First, alone: it refuses (404) a project that is not this account's, before anything else is read.
      const routes = await routing.getRoutes(key, project, workload);
      const scope = { accountId: key.accountId, project, workload };
      const since = window.stats.since;
      const [account, workloadStats, series, recent, failed, aborted] = await Promise.all([
        accountView(key),
        stats.workloadStats(scope, window.stats),
        stats.workloadSeries(scope, window.stats, window.bucketMs),
        tracesInWindow(key.accountId, { project, workload }, since, RECENT_CALLS),
        tracesInWindow(key.accountId, { project, workload, status: 'error' }, since, FAILURE_EXAMPLES),
        tracesInWindow(key.accountId, { project, workload, status: 'aborted' }, since, FAILURE_EXAMPLES),
      ]);
      const failures = [...failed, ...aborted].sort((left, right) => right.startedAt - left.startedAt);
      return { account, project, workload, window: window.name, stats: workloadStats, series, routes, recent, failed: failures };
    },

    async trace(key: ApiKey, requestId: string): Promise<TracePageData> {
      const trace = await store.traces.get(key.accountId, requestId);
      if (trace === null)
        throw new NotFoundError(
          `No trace for request '${requestId.slice(0, 64)}'. Traces are written within a second of the call.`,
          'trace_not_found',
        );
      const [account, feedback] = await Promise.all([accountView(key), store.routing.getFeedback(key.accountId, requestId)]);
      return { account, trace, feedback };
    },

    accountView,
  };
}
