/**
 * Every server the benchmark measures, each in its own process so no CPU is
 * counted for the wrong one: two mock engines (one answering at once, one
 * leaving `--ttfb-gap-ms` between stream events), the bare pass-through and
 * taskgate.
 */
import { startListeningChild } from './child-processes.mjs';
import { chatBody, chatHeaders } from './chat-request.mjs';
import { countAsOwn } from './process-statistics.mjs';
import { log } from './log.mjs';
import { bareProxyEntry, mockEngineEntry } from './repository-paths.mjs';
import { startTaskgate } from './start-taskgate.mjs';

/** @typedef {import('./measurement-paths.mjs').PathName} PathName */
/** @typedef {import('./chat-request.mjs').LoadTarget} LoadTarget */

/**
 * Each server is added to `started` as soon as it runs, so the caller stops
 * the ones already up when a later one fails to start.
 * @param {{ options: import('./options.mjs').Options, paths: PathName[], directory: string }} setup
 * @param {{ child: import('node:child_process').ChildProcess }[]} started
 */
export async function startServers({ options, paths, directory }, started) {
  const mockLine = await startListeningChild([mockEngineEntry, '--port', '0', '--gap-ms', '0'], 'mock_engine', 'the mock engine');
  started.push(mockLine);
  const gapMockLine = await startListeningChild([mockEngineEntry, '--port', '0', '--gap-ms', String(options.ttfbGapMs)], 'mock_engine', 'the mock engine with gaps');
  started.push(gapMockLine);
  const mock = { pid: mockLine.pid, url: mockLine.line.url, origin: `http://127.0.0.1:${mockLine.line.port}` };
  const gapMock = { pid: gapMockLine.pid, url: gapMockLine.line.url, origin: `http://127.0.0.1:${gapMockLine.line.port}` };
  let bare = null;
  if (paths.includes('bare')) {
    const bareLine = await startListeningChild([bareProxyEntry, '--upstream', mock.origin, '--gap-upstream', gapMock.origin], 'bare_proxy', 'the bare proxy');
    started.push(bareLine);
    bare = { pid: bareLine.pid, origin: `http://127.0.0.1:${bareLine.line.port}` };
  }
  const taskgate = await startTaskgate({ directory, mockUrl: mock.url, gapMockUrl: gapMock.url, cpuProfileDirectory: options.cpuProfileDirectory });
  started.push(taskgate);
  log(`mock engine pid ${mock.pid}, gap mock pid ${gapMock.pid}${bare === null ? '' : `, bare proxy pid ${bare.pid}`}, taskgate pid ${taskgate.pid} at ${taskgate.origin}`);
  countAsOwn(mock.pid, gapMock.pid, taskgate.pid);
  if (bare !== null) countAsOwn(bare.pid);
  return { mock, gapMock, bare, taskgate };
}

/**
 * The request to send on a path: JSON or stream, to the plain mock or to the one with gaps.
 * @param {Awaited<ReturnType<typeof startServers>>} servers
 */
export function targetsOf({ mock, gapMock, bare, taskgate }) {
  const headers = chatHeaders(taskgate.adminKey);
  /** @param {PathName} path @param {string} kind @param {boolean} [gap] @returns {LoadTarget} */
  return (path, kind, gap = false) => {
    const base = path === 'direct' ? (gap ? gapMock.url : mock.url) : path === 'bare' ? `${bare?.origin}${gap ? '/gap' : ''}/v1` : `${taskgate.origin}/v1`;
    // taskgate reaches the mock with gaps through its own model; the others by address.
    const model = path === 'through' && gap ? 'bench-model-gap' : 'bench-model';
    return { url: `${base}/chat/completions`, headers, body: chatBody(model, kind === 'stream') };
  };
}
