/**
 * The web dashboard under `/dashboard`: server-rendered pages over the same
 * numbers the API serves, behind a login with an admin key. The composition
 * root (`src/main.ts`) mounts it on the app, which hands every `/dashboard…`
 * path here; this routes it.
 *
 *   GET  /dashboard/login, POST /dashboard/login, POST /dashboard/logout
 *   GET  /dashboard                                      overview (?since=24h|7d|30d)
 *   GET  /dashboard/projects/{p}/workloads/{w}           one workload (?since=)
 *   GET  /dashboard/traces/{request_id}                  one call
 *   GET  /dashboard/assets/{name}                        uPlot, the chart script, the stylesheet
 *
 * Any page but the login and the assets needs a session; without one it
 * redirects (303) to the login, which comes back afterwards.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { asGatewayError, ClientAbortError } from '../api/errors.js';
import type { Authenticator } from '../auth/authenticator.js';
import { errorFields, type Logger } from '../log/logger.js';
import type { MountedHandler } from '../server/mounted-handler.js';
import type { Store } from '../store/store.js';
import { createAssets } from './assets.js';
import { messagePage } from './html.js';
import { createLoginActions, safeNext } from './login-actions.js';
import { renderLoginPage } from './login-page.js';
import { renderOverviewPage } from './overview-page.js';
import { createPageData, type PageDataDependencies } from './page-data.js';
import { redirect, sendAsset, sendHtml } from './responses.js';
import { createSessionStore, type SessionStore } from './sessions.js';
import { renderTracePage } from './trace-page.js';
import { renderWorkloadPage } from './workload-page.js';

export interface DashboardDependencies extends Omit<PageDataDependencies, 'now'> {
  authenticator: Authenticator;
  store: Store;
  logger: Logger;
  /** Defaults to sessions kept in `store`. */
  sessions?: SessionStore;
  now?: () => number;
  /** How long the login form's body may take to arrive (`server.request_timeout_ms`). Default 30 s. */
  bodyTimeoutMs?: number;
}

/** Where the composition root mounts the dashboard on the app (its pages' links spell it out). */
export const DASHBOARD_PATH = '/dashboard';

/** The handler of every path at or under `DASHBOARD_PATH`; the app's reply headers (the request id) get the dashboard's own added. */
export function createDashboard(dependencies: DashboardDependencies): MountedHandler {
  const { authenticator, store, logger } = dependencies;
  const sessions = dependencies.sessions ?? createSessionStore({ store: store.sessions });
  const login = createLoginActions({
    authenticator,
    accounts: store.accounts,
    sessions,
    bodyTimeoutMs: dependencies.bodyTimeoutMs ?? 30_000,
  });
  const data = createPageData({
    store,
    stats: dependencies.stats,
    routing: dependencies.routing,
    engineLoad: dependencies.engineLoad,
    now: dependencies.now ?? Date.now,
  });
  const assets = createAssets();

  function methodNotAllowed(response: ServerResponse, allowed: string, headers: OutgoingHttpHeaders): void {
    sendHtml(response, 405, messagePage('Method not allowed', `Use ${allowed} here.`), { ...headers, allow: allowed });
  }

  async function route(
    request: IncomingMessage,
    response: ServerResponse,
    path: string,
    query: URLSearchParams,
    headers: OutgoingHttpHeaders,
  ): Promise<void> {
    const segments = path.split('/').slice(2).map(safeDecode);
    if (segments.length > 0 && segments[segments.length - 1] === '') segments.pop();
    const method = request.method === 'HEAD' ? 'GET' : (request.method ?? 'GET');
    const [first, ...rest] = segments;

    if (first === 'assets' && rest.length === 1) {
      const asset = assets(rest[0] as string);
      if (method !== 'GET') return methodNotAllowed(response, 'GET', headers);
      if (asset === undefined) return sendHtml(response, 404, messagePage('Not found', 'No such file.'), headers);
      return sendAsset(request, response, asset, headers);
    }
    if (first === 'login' && rest.length === 0) {
      if (method === 'POST') return login.logIn(request, response, headers);
      if (method !== 'GET') return methodNotAllowed(response, 'GET, POST', headers);
      return sendHtml(response, 200, renderLoginPage({ next: safeNext(query.get('next')) }), headers);
    }
    if (first === 'logout' && rest.length === 0) {
      return method === 'POST' ? login.logOut(request, response, headers) : methodNotAllowed(response, 'POST', headers);
    }

    const key = await login.currentKey(request);
    if (key === undefined) {
      const here = path + (query.size > 0 ? `?${query.toString()}` : '');
      const next = safeNext(here);
      return redirect(
        response,
        next === undefined || next === '/dashboard' ? '/dashboard/login' : `/dashboard/login?next=${encodeURIComponent(next)}`,
        headers,
      );
    }
    if (method !== 'GET') return methodNotAllowed(response, 'GET', headers);
    if (first === undefined) return sendHtml(response, 200, renderOverviewPage(await data.overview(key, query)), headers);
    if (first === 'projects' && rest.length === 3 && rest[1] === 'workloads') {
      return sendHtml(response, 200, renderWorkloadPage(await data.workload(key, rest[0] as string, rest[2] as string, query)), headers);
    }
    if (first === 'traces' && rest.length === 1)
      return sendHtml(response, 200, renderTracePage(await data.trace(key, rest[0] as string)), headers);
    return sendHtml(response, 404, messagePage('Not found', 'There is no such dashboard page.', await data.accountView(key)), headers);
  }

  return async function dashboard(request, response, path, query, headers = {}) {
    try {
      await route(request, response, path, query, headers);
    } catch (thrown) {
      if (thrown instanceof ClientAbortError) return;
      const error = asGatewayError(thrown);
      if (error.status >= 500)
        logger.error('dashboard page failed', {
          request_id: String(headers['x-request-id'] ?? ''),
          path: path.slice(0, 200),
          ...errorFields(error.cause ?? error),
        });
      const title = error.status === 404 ? 'Not found' : error.status >= 500 ? 'Something went wrong' : 'Request refused';
      sendHtml(
        response,
        error.status,
        messagePage(title, error.status >= 500 ? 'The page could not be made; the log has the details.' : error.message),
        headers,
      );
    }
  };
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
