/**
 * The HTTP application: a route table over node:http, the request id, and the
 * headers every reply carries. Each handler gets its dependencies from
 * `createApp`; nothing here reaches for a global.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { asGatewayError, MethodNotAllowedError, NotFoundError } from '../api/errors.js';
import type { Catalog } from '../catalog/catalog.js';
import type { Engine } from '../engines/engine.js';
import { errorFields, type Logger } from '../log/logger.js';
import type { Store } from '../store/store.js';
import type { CallGate } from './call-gate.js';
import { createChatCompletionsHandler, type ChatCompletionsDependencies } from './chat-completions-handler.js';
import { sendError, sendJson, sendMetrics } from './http-response.js';
import { createManagementHandlers } from './management-handlers.js';
import type { Authenticator } from '../auth/authenticator.js';
import { modelList } from './models-handler.js';
import { checkReadiness } from './readiness.js';
import { readJsonBody } from './read-body.js';
import { newRequestId } from '../fast-path/request-id.js';
import { createRoutingHandlers } from './routing-handlers.js';
import { createTrackingHandlers } from './tracking-handlers.js';
import type { StatsService } from '../tracking/stats-service.js';
import type { PriceOf } from '../routing/model-prices.js';
import type { Metrics } from '../tracking/metrics.js';
import type { Mount } from './mounted-handler.js';

export interface AppDependencies extends Omit<ChatCompletionsDependencies, 'gate'> {
  gate: CallGate;
  authenticator: Authenticator;
  store: Store;
  engines: readonly Engine[];
  catalog: Catalog;
  /** Workload stats from the rollups. */
  stats: StatsService;
  metrics: Metrics;
  logger: Logger;
  /** Why the store's writes fail, or null while they succeed (`/readyz` lists the store as degraded). */
  storeWrites: () => string | null;
  /** Why the rate limits are per process though configured as shared, or null (`/readyz` lists `limits` as degraded). */
  limits: () => string | null;
  /** The price the router counts savings at (`routing.cost`); the catalog's when absent. */
  priceOf?: PriceOf;
  /** A part mounted under a path prefix: every path at or under it goes there (the web dashboard, mounted by `src/main.ts`). */
  mount?: Mount;
}

type Handler = (context: RouteContext) => Promise<void>;

interface RouteContext {
  request: IncomingMessage;
  response: ServerResponse;
  requestId: string;
  headers: OutgoingHttpHeaders;
  parameters: string[];
  query: URLSearchParams;
}

interface Route {
  /** Path segments after the leading slash; `*` matches one segment. */
  pattern: string[];
  methods: Record<string, Handler>;
}

export function createApp(dependencies: AppDependencies): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  const { gate, store, engines, catalog, logger } = dependencies;
  const chat = createChatCompletionsHandler(dependencies);
  const management = createManagementHandlers({ store, authenticator: dependencies.authenticator });
  const routing = createRoutingHandlers({
    store,
    catalog,
    routes: dependencies.routes,
    router: dependencies.router,
    priceOf: dependencies.priceOf,
  });
  const tracking = createTrackingHandlers({ store, stats: dependencies.stats, retention: dependencies.retention, routing });
  const startedAt = Math.floor(Date.now() / 1000);
  const { mount } = dependencies;
  const mountedUnder = `${mount?.prefix ?? ''}/`;

  /** An authenticated JSON endpoint: admit, run, reply. */
  function json(
    role: 'admin' | undefined,
    produce: (context: RouteContext, key: Awaited<ReturnType<CallGate['admit']>>) => Promise<unknown> | unknown,
    status = 200,
  ): Handler {
    return async (context) => {
      const key = await gate.admit(context.request, context.headers, role);
      sendJson(context.response, status, await produce(context, key), context.headers);
    };
  }

  /** A management write's JSON body: 415 for another content type, 413 over `maxBytes`, 408 when it trickles. */
  const body = (context: RouteContext, maxBytes: number) =>
    readJsonBody(context.request, { maxBytes, timeoutMs: dependencies.bodyTimeoutMs });

  const routes: Route[] = [
    {
      pattern: ['v1', 'chat', 'completions'],
      methods: { POST: (context) => chat(context.request, context.response, context.requestId, context.headers) },
    },
    { pattern: ['v1', 'models'], methods: { GET: json(undefined, () => modelList(catalog, startedAt)) } },
    {
      // Behind an admin key here (Prometheus sends it as a Bearer token); `server.metrics` serves it keyless on its own address.
      pattern: ['metrics'],
      methods: {
        GET: async (context) => {
          await gate.admit(context.request, context.headers, 'admin');
          await sendMetrics(dependencies.metrics, context.response, context.headers);
        },
      },
    },
    { pattern: ['healthz'], methods: { GET: async (context) => sendJson(context.response, 200, { status: 'ok' }, context.headers) } },
    {
      pattern: ['readyz'],
      methods: {
        GET: async (context) => {
          const report = await checkReadiness({
            store,
            engines,
            catalog,
            storeWrites: dependencies.storeWrites,
            limits: dependencies.limits,
            routerLeads: () => dependencies.router.isLeader(),
          });
          sendJson(context.response, report.ready ? 200 : 503, report, context.headers);
        },
      },
    },
    {
      pattern: ['v1', 'keys'],
      methods: {
        GET: json(undefined, (context, key) => management.listKeys(key, context.query)),
        POST: json('admin', async (context, key) => management.createKey(key, await body(context, 65_536)), 201),
      },
    },
    {
      pattern: ['v1', 'keys', '*'],
      methods: { DELETE: json('admin', (context, key) => management.revokeKey(key, context.parameters[0] as string)) },
    },
    { pattern: ['v1', 'projects'], methods: { GET: json(undefined, (context, key) => management.listProjects(key, context.query)) } },
    {
      pattern: ['v1', 'projects', '*', 'workloads'],
      methods: {
        GET: json(undefined, async (context, key) => {
          const project = context.parameters[0] as string;
          const list = await management.listWorkloads(key, project, context.query);
          const summaries = await tracking.workloadSummaries(key, project, context.query);
          const none = { calls: 0, errors: 0, errorRate: 0, costUsd: 0 };
          return {
            ...list,
            data: list.data.map((workload) => {
              const summary = summaries.get(workload.name) ?? none;
              return {
                ...workload,
                calls: summary.calls,
                errors: summary.errors,
                error_rate: summary.errorRate,
                cost_usd: summary.costUsd,
              };
            }),
          };
        }),
      },
    },
    {
      pattern: ['v1', 'projects', '*', 'retention'],
      methods: {
        GET: json(undefined, (context, key) => tracking.getRetention(key, context.parameters[0] as string)),
        PUT: json('admin', async (context, key) =>
          tracking.putRetention(key, context.parameters[0] as string, await body(context, 65_536)),
        ),
      },
    },
    {
      pattern: ['v1', 'projects', '*', 'workloads', '*'],
      methods: { GET: json(undefined, (context, key) => tracking.workload(key, ...workloadOf(context), context.query)) },
    },
    {
      pattern: ['v1', 'projects', '*', 'workloads', '*', 'failures'],
      methods: { GET: json(undefined, (context, key) => tracking.failures(key, ...workloadOf(context), context.query)) },
    },
    {
      pattern: ['v1', 'projects', '*', 'workloads', '*', 'traces'],
      methods: {
        GET: json(undefined, (context, key) =>
          management.listTraces(key, context.parameters[0] as string, context.parameters[1] as string, context.query),
        ),
      },
    },
    {
      pattern: ['v1', 'traces', '*'],
      methods: { GET: json(undefined, (context, key) => management.getTrace(key, context.parameters[0] as string)) },
    },
    {
      pattern: ['v1', 'projects', '*', 'workloads', '*', 'eval'],
      methods: {
        GET: json(undefined, (context, key) => routing.getEval(key, ...workloadOf(context))),
        PUT: json('admin', async (context, key) => routing.putEval(key, ...workloadOf(context), await body(context, 1_048_576))),
      },
    },
    {
      pattern: ['v1', 'projects', '*', 'workloads', '*', 'routes'],
      methods: { GET: json(undefined, (context, key) => routing.getRoutes(key, ...workloadOf(context))) },
    },
    {
      pattern: ['v1', 'projects', '*', 'workloads', '*', 'routes', '*', 'pin'],
      methods: {
        PUT: json('admin', async (context, key) =>
          routing.pin(key, ...workloadOf(context), context.parameters[2] as string, await body(context, 65_536)),
        ),
        DELETE: json('admin', (context, key) => routing.unpin(key, ...workloadOf(context), context.parameters[2] as string)),
      },
    },
    {
      pattern: ['v1', 'feedback'],
      methods: { POST: json(undefined, async (context, key) => routing.feedback(key, await body(context, 65_536))) },
    },
  ];

  // Paths without a parameter (the inference endpoint among them) are found with one lookup.
  const staticRoutes = new Map(
    routes.filter((route) => !route.pattern.includes('*')).map((route) => [`/${route.pattern.join('/')}`, route]),
  );
  const noParameters: string[] = [];
  /** Shared by every request without a query string (the inference calls): handlers only read a query. */
  const noQuery = new URLSearchParams();

  function match(path: string): { route: Route; parameters: string[] } | undefined {
    const exact = staticRoutes.get(path);
    if (exact !== undefined) return { route: exact, parameters: noParameters };
    const segments = path.split('/').slice(1);
    if (segments.length > 1 && segments[segments.length - 1] === '') segments.pop();
    for (const route of routes) {
      if (route.pattern.length !== segments.length) continue;
      const parameters: string[] = [];
      let matched = true;
      for (let index = 0; index < segments.length && matched; index++) {
        const segment = segments[index] as string;
        if (route.pattern[index] === '*') parameters.push(safeDecode(segment));
        else matched = route.pattern[index] === segment;
      }
      if (matched) return { route, parameters };
    }
    return undefined;
  }

  return function handle(request, response) {
    const requestId = newRequestId();
    const headers: OutgoingHttpHeaders = { 'x-request-id': requestId };
    const url = request.url ?? '/';
    const queryStart = url.indexOf('?');
    const path = queryStart === -1 ? url : url.slice(0, queryStart);
    const found = match(path);
    const method = request.method ?? 'GET';
    const handler = found?.route.methods[method === 'HEAD' && found.route.methods.GET !== undefined ? 'GET' : method];

    let work: Promise<void>;
    if (mount !== undefined && (path === mount.prefix || path.startsWith(mountedUnder))) {
      work = mount.handler(request, response, path, new URLSearchParams(queryStart === -1 ? '' : url.slice(queryStart + 1)), headers);
    } else if (found === undefined) {
      work = Promise.reject(
        new NotFoundError(`Unknown path ${path.slice(0, 200)}. The inference endpoint is POST /v1/chat/completions.`, 'unknown_path'),
      );
    } else if (handler === undefined) {
      work = Promise.reject(new MethodNotAllowedError(method, path, Object.keys(found.route.methods)));
    } else {
      const query = queryStart === -1 ? noQuery : new URLSearchParams(url.slice(queryStart + 1));
      work = handler({ request, response, requestId, headers, parameters: found.parameters, query });
    }
    return work.catch((thrown: unknown) => {
      const error = asGatewayError(thrown);
      if (error.status >= 500)
        logger.error('request failed', { request_id: requestId, path: path.slice(0, 200), ...errorFields(error.cause ?? error) });
      sendError(response, error, headers);
    });
  };
}

function workloadOf(context: RouteContext): [project: string, workload: string] {
  return [context.parameters[0] as string, context.parameters[1] as string];
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
