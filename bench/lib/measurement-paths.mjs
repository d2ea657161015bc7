/**
 * The paths a call is measured on (direct to the mock, through the bare
 * proxy, through taskgate on SQLite + memory, through taskgate on
 * PostgreSQL + Redis, one process and three), how the report names them,
 * and which processes answer on each. OpenTelemetry export's cost is
 * measured apart, A/B (export-cost.mjs).
 */

/** @typedef {'direct' | 'bare' | 'through' | 'shared' | 'fleet'} PathName */

/** How each path is named in the report. */
export const pathLabels = {
  direct: 'direct (mock)',
  bare: 'bare pass-through',
  through: 'through taskgate (SQLite + memory)',
  shared: 'through taskgate (PostgreSQL + Redis)',
  fleet: 'through 3 taskgates (PostgreSQL + Redis)',
};
/** Which process answers the client on each path. */
export const serverNames = { direct: 'mock', bare: 'bare proxy', through: 'taskgate', shared: 'taskgate', fleet: '3 taskgates, summed' };
/** The rows of what a proxy added over direct calls. */
export const addedLabels = {
  bare: 'added by the bare proxy',
  through: 'added by taskgate (SQLite + memory)',
  shared: 'added by taskgate (PostgreSQL + Redis)',
  fleet: 'added by 3 taskgates (PostgreSQL + Redis)',
};
/** The paths on PostgreSQL + Redis. */
export const sharedPaths = /** @type {const} */ (['shared', 'fleet']);

/**
 * @typedef {object} Servers
 * @property {{ pid: number, url: string }} mock
 * @property {{ pid: number, url: string }} gapMock
 * @property {{ pid: number, origin: string } | null} bare
 * @property {{ pid: number, origin: string, adminKey: string }} taskgate
 * @property {{ processes: { pid: number, origin: string }[], postgresPids: (() => number[]) | null, redisPid: number | null } | null} shared
 */

/**
 * @typedef {object} PathProcesses
 * @property {number[]} serverPids   the processes that answer the client (three on the fleet path)
 * @property {number | null} upstreamPid  the mock behind them (null when the mock answers)
 * @property {number[]} idlePids     taskgates on the same back ends that get no calls on this path (the one-process path's two siblings)
 * @property {{ postgresPids: (() => number[]) | null, redisPid: number | null } | null} backends  on the PostgreSQL + Redis paths: the backends of the bench database (found anew each time) and redis-server (null when either is not on this machine)
 */

/**
 * The processes that answer the client on a path, and those behind or beside them.
 * @param {PathName} path @param {Servers} servers @param {boolean} gap
 * @returns {PathProcesses}
 */
export function processesOf(path, servers, gap) {
  const mock = gap ? servers.gapMock : servers.mock;
  if (path === 'direct') return { serverPids: [mock.pid], upstreamPid: null, idlePids: [], backends: null };
  if (path === 'shared' || path === 'fleet') {
    if (servers.shared === null) throw new Error(`no servers for path ${path}`);
    const pids = servers.shared.processes.map((server) => server.pid);
    const serving = path === 'shared' ? pids.slice(0, 1) : pids;
    const { postgresPids, redisPid } = servers.shared;
    return {
      serverPids: serving,
      upstreamPid: mock.pid,
      idlePids: pids.filter((pid) => !serving.includes(pid)),
      backends: { postgresPids, redisPid },
    };
  }
  const server = path === 'bare' ? servers.bare : servers.taskgate;
  if (server === null) throw new Error(`no server for path ${path}`);
  return { serverPids: [server.pid], upstreamPid: mock.pid, idlePids: [], backends: null };
}
