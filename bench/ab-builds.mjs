#!/usr/bin/env node
/**
 * Two builds of taskgate, A/B, for the cost of one change: this checkout's
 * `dist/` against another build (a worktree of an earlier commit, built),
 * each the same config on SQLite + memory, loaded in turns within every
 * round as `npm run bench` measures OpenTelemetry export (one wrk per server,
 * one paused while the other runs, switching every 100 ms): each round's
 * ratio of their CPU per call, and the median over the rounds.
 *
 *   git worktree add /tmp/before <commit> && (cd /tmp/before && ln -s "$PWD/node_modules" . && npx tsc -p tsconfig.build.json)
 *   node bench/ab-builds.mjs --before /tmp/before [--rounds 12] [--seconds 2] [--stream]
 *   node bench/ab-builds.mjs --before . --after-flags="--single-threaded-gc"   (a Node or V8 flag, A/B)
 *   node bench/ab-builds.mjs --bare     (this build against the bare pass-through)
 *
 * (The `ln` names this checkout's node_modules: run it from here.) Needs wrk
 * and `npm run build` first. docs/benchmarks.md has the figures it gave.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startListeningChild, withMockEngine } from './lib/child-processes.mjs';
import { chatBody, chatHeaders, checkReply } from './lib/chat-request.mjs';
import { ratioInTurns } from './lib/cpu-per-call.mjs';
import { runWrk, wrkInstalled } from './lib/load-generators.mjs';
import { bareProxyEntry } from './lib/repository-paths.mjs';
import { median } from './lib/statistics.mjs';
import { newAdminKey, nodeFlagsOf, startTaskgate } from './lib/start-taskgate.mjs';

const { values } = parseArgs({
  options: {
    before: { type: 'string' },
    bare: { type: 'boolean', default: false },
    'after-flags': { type: 'string', default: '' },
    rounds: { type: 'string', default: '12' },
    seconds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    stream: { type: 'boolean', default: false },
  },
});
if (values.before === undefined && !values.bare)
  throw new Error('--before DIR (the other build: a checkout with dist/ built) or --bare (the bare pass-through) is required');
if (!wrkInstalled()) throw new Error('wrk is required (Debian: apt-get install wrk): only it can be paused for the turns');
const connections = Number(values.connections);
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
await withMockEngine({ name: 'ab-builds', gapMs: 0 }, async ({ mock, directory, started }) => {
  const adminKey = newAdminKey();
  const servers = [];
  if (values.bare) {
    const bare = await startListeningChild(
      [bareProxyEntry, '--upstream', mock.line.url.replace(/\/v1$/, '')],
      'bare_proxy',
      'the bare pass-through',
    );
    started.push(bare);
    servers.push({ pid: bare.pid, origin: `http://127.0.0.1:${bare.line.port}` });
  }
  for (const [name, entry] of values.bare
    ? [['after', undefined]]
    : [
        ['before', join(resolve(values.before ?? ''), 'dist', 'cli', 'main.js')],
        ['after', undefined],
      ]) {
    const own = join(directory, name);
    mkdirSync(own);
    const extraNodeFlags = name === 'after' ? nodeFlagsOf(values['after-flags']) : [];
    const server = await startTaskgate({
      directory: own,
      mockUrl: mock.line.url,
      gapMockUrl: mock.line.url,
      adminKey,
      entry,
      extraNodeFlags,
    });
    started.push(server);
    servers.push(server);
  }
  const targets = servers.map((server) => ({
    url: `${server.origin}/v1/chat/completions`,
    headers: chatHeaders(adminKey),
    body: chatBody('bench-model', values.stream),
  }));
  for (const target of targets) {
    await checkReply(target, values.stream, target.url);
    await runWrk(target, { connections, durationSeconds: 2, directory });
  }
  const { cpu, ratio } = await ratioInTurns(servers, targets, { rounds, connections, seconds, directory, label: 'builds A/B' });
  const format = (/** @type {number[]} */ list) => list.map((value) => value.toFixed(0)).join(' ');
  console.log(
    `${values.stream ? 'stream' : 'JSON'}, CPU µs per call, ${rounds} rounds of ${seconds} s each, in turns: ${values.bare ? 'bare' : 'before'} ${format(cpu[0])} | after ${format(cpu[1])}`,
  );
  console.log(
    `after / before ${ratio.toFixed(3)} (the median of the rounds'); medians: before ${median(cpu[0]).toFixed(0)}, after ${median(cpu[1]).toFixed(0)} µs`,
  );
});
