/**
 * The first-byte tools' setup: the bare pass-through and one taskgate
 * (SQLite + memory) beside the mock engine, each checked to answer a
 * stream, and the stream request both are sent.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startListeningChild } from './child-processes.mjs';
import { chatBody, chatHeaders, checkReply } from './chat-request.mjs';
import { bareProxyEntry } from './repository-paths.mjs';
import { newAdminKey, startTaskgate } from './start-taskgate.mjs';

/**
 * @typedef {{ name: 'pass-through' | 'taskgate', pid: number, origin: string }} ServerBesideBare
 * @param {import('./child-processes.mjs').MockSetup} setup  as `withMockEngine` gives it
 * @param {{ label: string, bareFlags?: string[], taskgateFlags?: string[] }} options  Node flags for each (a profiler, say)
 * @returns {Promise<{ servers: [ServerBesideBare, ServerBesideBare], children: Array<{ child: import('node:child_process').ChildProcess }>, streams: Array<{ origin: string, path: string, headers: Record<string, string>, body: string }> }>}
 */
export async function startBesideBare({ mock, directory, started }, { label, bareFlags = [], taskgateFlags = [] }) {
  const adminKey = newAdminKey();
  const bare = await startListeningChild(
    [...bareFlags, bareProxyEntry, '--upstream', mock.line.url.replace(/\/v1$/, '')],
    'bare_proxy',
    'the bare pass-through',
  );
  started.push(bare);
  mkdirSync(join(directory, 'taskgate'));
  const taskgate = await startTaskgate({
    directory: join(directory, 'taskgate'),
    mockUrl: mock.line.url,
    gapMockUrl: mock.line.url,
    adminKey,
    extraNodeFlags: taskgateFlags,
  });
  started.push(taskgate);
  /** @type {[ServerBesideBare, ServerBesideBare]} */
  const servers = [
    { name: 'pass-through', pid: bare.pid, origin: `http://127.0.0.1:${bare.line.port}` },
    { name: 'taskgate', pid: taskgate.pid, origin: taskgate.origin },
  ];
  const body = chatBody('bench-model', true);
  const headers = chatHeaders(adminKey);
  for (const server of servers) await checkReply({ url: `${server.origin}/v1/chat/completions`, headers, body }, true, label);
  return {
    servers,
    children: [bare, taskgate],
    streams: servers.map(({ origin }) => ({ origin, path: '/v1/chat/completions', headers, body })),
  };
}
