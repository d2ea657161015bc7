/**
 * The paths a call is measured on (direct to the mock, through the bare
 * proxy, through taskgate), how the report names them, and which process
 * answers on each.
 */

/** @typedef {'direct' | 'bare' | 'through'} PathName */

/** How each path is named in the report. */
export const pathLabels = { direct: 'direct (mock)', bare: 'bare pass-through', through: 'through taskgate' };
/** Which process answers the client on each path. */
export const serverNames = { direct: 'mock', bare: 'bare proxy', through: 'taskgate' };
/** The rows of what a proxy added over direct calls. */
export const addedLabels = { bare: 'added by the bare proxy', through: 'added by taskgate' };

/**
 * @typedef {object} Servers
 * @property {{ pid: number, url: string }} mock
 * @property {{ pid: number, url: string }} gapMock
 * @property {{ pid: number, origin: string } | null} bare
 * @property {{ pid: number, origin: string, adminKey: string }} taskgate
 */

/**
 * The process that answers the client on a path, and the mock behind it (null when the mock answers).
 * @param {PathName} path @param {Servers} servers @param {boolean} gap
 */
export function processesOf(path, servers, gap) {
  const mock = gap ? servers.gapMock : servers.mock;
  if (path === 'direct') return { serverPid: mock.pid, upstreamPid: null };
  const server = path === 'bare' ? servers.bare : servers.taskgate;
  if (server === null) throw new Error(`no server for path ${path}`);
  return { serverPid: server.pid, upstreamPid: mock.pid };
}

