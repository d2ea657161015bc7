#!/usr/bin/env node
/**
 * Two builds of taskgate, A/B, for the time to first byte of a stream: the
 * figure `npm run bench` takes at 20 streams a second through the mock with
 * 20 ms between events, here with the streams alternating between the two
 * builds (the same config on SQLite + memory), so both see the machine's
 * same minutes. Prints each build's quartiles and p99.
 *
 * An A/A run (`--before .`) differs by about 0.05 ms at the p50 with 880
 * streams each (90 s): a change must beat that to show.
 *
 *   git worktree add /tmp/before <commit> && (cd /tmp/before && ln -s "$PWD/node_modules" . && npx tsc -p tsconfig.build.json)
 *   node bench/ab-ttfb.mjs --before /tmp/before [--seconds 90] [--rate 20]
 *   node bench/ab-ttfb.mjs --bare     (this build against the bare pass-through)
 *   node bench/ab-ttfb.mjs --before . --after-flags="--use-largepages=on"   (a Node or V8 flag, A/B)
 *
 * Each server is warmed with 40 streams only: fine between two builds, but
 * against the pass-through (whose code is a fraction of taskgate's to
 * optimise) it overstates taskgate's margin. The target's figure is
 * `npm run bench`'s, taken in turns after a warm-up at saturation.
 *
 * Needs `npm run build` first; sends traffic only to 127.0.0.1.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startListeningChild, withMockEngine } from './lib/child-processes.mjs';
import { bareProxyEntry } from './lib/repository-paths.mjs';
import { chatBody, chatHeaders, checkReply } from './lib/chat-request.mjs';
import { firstByteInTurns } from './lib/first-byte-in-turns.mjs';
import { newAdminKey, nodeFlagsOf, startTaskgate } from './lib/start-taskgate.mjs';

const { values } = parseArgs({
  options: {
    before: { type: 'string' },
    bare: { type: 'boolean', default: false },
    seconds: { type: 'string', default: '90' },
    rate: { type: 'string', default: '20' },
    'after-flags': { type: 'string', default: '' },
  },
});
if (values.before === undefined && !values.bare)
  throw new Error('--before DIR (the other build: a checkout with dist/ built) or --bare (the bare pass-through) is required');
/** The first streams of each build warm it up and are not counted. */
const warmUp = 40;
await withMockEngine({ name: 'ab-ttfb', gapMs: 20 }, async ({ mock, directory, started }) => {
  const adminKey = newAdminKey();
  const builds = [
    { name: values.bare ? 'bare' : 'before', entry: join(resolve(values.before ?? ''), 'dist', 'cli', 'main.js') },
    { name: 'after', entry: undefined },
  ];
  /** @type {{ origin: string }[]} */
  const servers = [];
  if (values.bare) {
    const bare = await startListeningChild(
      [bareProxyEntry, '--upstream', mock.line.url.replace(/\/v1$/, '')],
      'bare_proxy',
      'the bare pass-through',
    );
    started.push(bare);
    servers.push({ origin: `http://127.0.0.1:${bare.line.port}` });
  }
  for (const build of values.bare ? builds.slice(1) : builds) {
    mkdirSync(join(directory, build.name));
    const extraNodeFlags = build.name === 'after' ? nodeFlagsOf(values['after-flags']) : [];
    const server = await startTaskgate({
      directory: join(directory, build.name),
      mockUrl: mock.line.url,
      gapMockUrl: mock.line.url,
      adminKey,
      entry: build.entry,
      extraNodeFlags,
    });
    started.push(server);
    servers.push(server);
  }
  const body = chatBody('bench-model', true);
  const headers = chatHeaders(adminKey);
  for (const server of servers) await checkReply({ url: `${server.origin}/v1/chat/completions`, headers, body }, true, 'ab-ttfb');
  // 20 streams a second in all by default (--rate), dealt to the builds in turns.
  const destinations = servers.map(({ origin }) => ({ origin, path: '/v1/chat/completions', headers, body }));
  const figures = await firstByteInTurns(destinations, {
    rate: Number(values.rate) / servers.length,
    seconds: Number(values.seconds),
    warmUp,
  });
  for (const [index, build] of builds.entries()) {
    const figure = figures[index];
    if (figure === undefined) continue;
    const at = (/** @type {number} */ value) => value.toFixed(3);
    console.log(
      `${build.name}: ${figure.streams} streams, time to first byte p25 ${at(figure.p25Ms)}, p50 ${at(figure.p50Ms)}, p75 ${at(figure.p75Ms)}, p99 ${at(figure.p99Ms)} ms`,
    );
  }
});
