/**
 * Every server the benchmark measures, each in its own process so no CPU is
 * counted for the wrong one: two mock engines (one answering at once, one
 * leaving `--ttfb-gap-ms` between stream events), the bare pass-through,
 * taskgate on SQLite + memory, and three taskgates on one PostgreSQL
 * database and one Redis (the first of them alone is the one-process row).
 * OpenTelemetry export's A/B starts its own (export-cost.mjs).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { startListeningChild } from './child-processes.mjs';
import { chatBody, chatHeaders } from './chat-request.mjs';
import { countAsOwn, countAsOwnWhileRunning } from './process-statistics.mjs';
import { log } from './log.mjs';
import { bareProxyEntry, mockEngineEntry } from './repository-paths.mjs';
import { postgresBackendPids } from './shared-backends.mjs';
import { newAdminKey, startSharedTaskgates, startTaskgate } from './start-taskgate.mjs';

/** taskgate processes on the shared PostgreSQL database and Redis. */
export const sharedProcessCount = 3;

/** @typedef {import('./measurement-paths.mjs').PathName} PathName */
/** @typedef {import('./chat-request.mjs').LoadTarget} LoadTarget */

/**
 * Each server is added to `started` as soon as it runs, so the caller stops
 * the ones already up when a later one fails to start. `backends` is null
 * when the PostgreSQL + Redis paths are not measured.
 * @param {{ options: import('./options.mjs').Options, paths: PathName[], directory: string, backends: import('./shared-backends.mjs').SharedBackends | null }} setup
 * @param {{ child: import('node:child_process').ChildProcess }[]} started
 */
export async function startServers({ options, paths, directory, backends }, started) {
  const mockLine = await startListeningChild([mockEngineEntry, '--port', '0', '--gap-ms', '0'], 'mock_engine', 'the mock engine');
  started.push(mockLine);
  const gapMockLine = await startListeningChild(
    [mockEngineEntry, '--port', '0', '--gap-ms', String(options.ttfbGapMs)],
    'mock_engine',
    'the mock engine with gaps',
  );
  started.push(gapMockLine);
  const mock = { pid: mockLine.pid, url: mockLine.line.url, origin: `http://127.0.0.1:${mockLine.line.port}` };
  const gapMock = { pid: gapMockLine.pid, url: gapMockLine.line.url, origin: `http://127.0.0.1:${gapMockLine.line.port}` };
  let bare = null;
  if (paths.includes('bare')) {
    const bareLine = await startListeningChild(
      [bareProxyEntry, '--upstream', mock.origin, '--gap-upstream', gapMock.origin],
      'bare_proxy',
      'the bare proxy',
    );
    started.push(bareLine);
    bare = { pid: bareLine.pid, origin: `http://127.0.0.1:${bareLine.line.port}` };
  }
  // One key for every taskgate: the shared ones must agree on it (one database), and the load sends one.
  const adminKey = newAdminKey();
  const taskgate = await startTaskgate({
    directory,
    mockUrl: mock.url,
    gapMockUrl: gapMock.url,
    adminKey,
    cpuProfileDirectory: options.cpuProfileDirectory,
  });
  started.push(taskgate);
  log(
    `mock engine pid ${mock.pid}, gap mock pid ${gapMock.pid}${bare === null ? '' : `, bare proxy pid ${bare.pid}`}, taskgate pid ${taskgate.pid} at ${taskgate.origin}`,
  );
  countAsOwn(mock.pid, gapMock.pid, taskgate.pid);
  if (bare !== null) countAsOwn(bare.pid);

  /** @type {Shared | null} */
  let shared = null;
  if (backends !== null && (paths.includes('shared') || paths.includes('fleet'))) {
    const processes = await startSharedTaskgates(
      {
        directory,
        mockUrl: mock.url,
        gapMockUrl: gapMock.url,
        adminKey,
        databaseUrl: backends.databaseUrl,
        redisUrl: backends.redisUrl,
        count: sharedProcessCount,
      },
      started,
    );
    const readiness = await Promise.all(processes.map((server) => readinessOf(server.origin, adminKey, true)));
    processes.forEach((server, index) => {
      const ready = readiness[index];
      log(
        `taskgate ${index + 1}/${processes.length} on PostgreSQL + Redis: pid ${server.pid} at ${server.origin}, router ${ready.router}, store ${ready.store}`,
      );
    });
    countAsOwn(...processes.map((server) => server.pid));
    const { databaseName, redisPid } = backends;
    const findPostgresPids = () => postgresBackendPids(databaseName);
    // Their CPU is the bench's doing: not noise.
    countAsOwnWhileRunning(() => [...findPostgresPids(), ...(redisPid === null ? [] : [redisPid])]);
    // The taskgates hold pooled connections by now: none found means PostgreSQL runs elsewhere.
    const postgresPids = findPostgresPids().length > 0 ? findPostgresPids : null;
    if (postgresPids === null)
      log('the PostgreSQL backends of the bench database are not visible on this machine: their CPU is not reported');
    if (redisPid === null) log('redis-server is not visible on this machine: its CPU is not reported');
    shared = { processes, databaseName, redisPid, postgresPids, readinessAtStart: readiness };
  }
  return { mock, gapMock, bare, taskgate, shared };
}

/**
 * @typedef {object} Shared
 * @property {Awaited<ReturnType<typeof startSharedTaskgates>>} processes  the first alone is the one-process path
 * @property {string} databaseName
 * @property {number | null} redisPid
 * @property {(() => number[]) | null} postgresPids  the PostgreSQL backends of the bench database, as found now (null: not on this machine)
 * @property {any[]} readinessAtStart
 */

/**
 * A taskgate's /readyz (with the admin key, for the details). With
 * `mustBeClean`, throws unless it is ready and nothing is degraded (limits
 * on Redis, store writes going through), retrying for up to 10 s while Redis
 * connects.
 * @param {string} origin @param {string} adminKey @param {boolean} mustBeClean
 */
export async function readinessOf(origin, adminKey, mustBeClean) {
  let last = '';
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      const response = await fetch(`${origin}/readyz`, {
        headers: { authorization: `Bearer ${adminKey}` },
        signal: AbortSignal.timeout(3_000),
      });
      const report = await response.json();
      if (!mustBeClean || (report.ready === true && Array.isArray(report.degraded) && report.degraded.length === 0)) return report;
      last = JSON.stringify(report).slice(0, 800);
    } catch (error) {
      if (!mustBeClean) return { error: error instanceof Error ? error.message : String(error) };
      last = error instanceof Error ? error.message : String(error);
    }
    await sleep(200);
  }
  throw new Error(`taskgate at ${origin} is not ready with nothing degraded after 10 s: ${last}`);
}

/**
 * The request to send on a path: JSON or stream, to the plain mock or to the one with gaps.
 * @param {Awaited<ReturnType<typeof startServers>>} servers
 */
export function targetsOf({ mock, gapMock, bare, taskgate, shared }) {
  const headers = chatHeaders(taskgate.adminKey);
  /** @param {PathName} path @param {string} kind @param {boolean} [gap] @returns {LoadTarget} */
  return (path, kind, gap = false) => {
    // taskgate reaches the mock with gaps through its own model; the others by address.
    const model = gap && path !== 'direct' && path !== 'bare' ? 'bench-model-gap' : 'bench-model';
    const body = chatBody(model, kind === 'stream');
    if (path === 'shared' || path === 'fleet') {
      if (shared === null) throw new Error(`no servers for path ${path}`);
      const origins = (path === 'shared' ? shared.processes.slice(0, 1) : shared.processes).map((server) => server.origin);
      const urls = origins.map((origin) => `${origin}/v1/chat/completions`);
      // Several URLs: the load spreads its connections (and the fixed-rate runs their requests) over them in turn.
      return { url: /** @type {string} */ (urls[0]), ...(urls.length > 1 ? { urls } : {}), headers, body };
    }
    const base =
      path === 'direct'
        ? gap
          ? gapMock.url
          : mock.url
        : path === 'bare'
          ? `${bare?.origin}${gap ? '/gap' : ''}/v1`
          : `${taskgate.origin}/v1`;
    return { url: `${base}/chat/completions`, headers, body };
  };
}
