/**
 * `taskgate serve --workers N`, as an operator runs it: N worker processes
 * behind one port, what a gateway does once done once (the admin key, the
 * first start's download), `/metrics` summed over the workers whichever one
 * answers, one rate-limit budget per key across them, a dead worker replaced,
 * and SIGTERM stopping them all gracefully.
 *
 * Each call goes on a new connection (`agent: false`): the primary hands out
 * connections in turn, so calls spread over the workers as a load balancer's
 * would, rather than all riding one kept-alive socket to one worker.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redis, requireServiceOrSkip } from './helpers/machine-requirements.js';
import { startModelCatalogServer } from './helpers/model-catalog-server.js';
import { startScriptedEngine, type ScriptedEngine } from './helpers/scripted-engine.js';
import { runTaskgate, serveTaskgate, type ServingProcess } from './helpers/taskgate-process.js';
import { engineConfig } from './helpers/test-gateway.js';
import { temporaryDirectory } from './helpers/temporary-directory.js';
import { eventually } from './helpers/eventually.js';
import { samples, total } from './helpers/prometheus-samples.js';

const redisUrl = await requireServiceOrSkip(redis, 'test/workers.test.ts', 'Its Redis test is skipped.');

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request on a connection of its own. */
function send(url: string, options: { method?: string; key?: string; body?: unknown } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const outgoing = httpRequest(
      url,
      {
        method: options.method ?? (body === undefined ? 'GET' : 'POST'),
        agent: false,
        headers: {
          ...(options.key === undefined ? {} : { authorization: `Bearer ${options.key}` }),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }));
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

const chat = (server: ServingProcess, key: string, content = 'hello') =>
  send(`${server.baseUrl}/chat/completions`, { key, body: { model: 'model-0', messages: [{ role: 'user', content }] } });

/** Calls each live worker finished, by pid, from `taskgate_worker_calls_total`. */
function callsByWorker(text: string): Map<number, number> {
  return new Map(samples(text, 'taskgate_worker_calls_total').map((sample) => [Number(sample.labels.pid), sample.value]));
}

async function scrape(server: ServingProcess, key: string): Promise<string> {
  const reply = await send(`${server.baseUrl.replace(/\/v1$/, '')}/metrics`, { key });
  expect(reply.status, reply.body).toBe(200);
  return reply.body;
}

/** The parent of a process, from /proc (Linux); null elsewhere or once it is gone. */
function parentOf(pid: number): number | null {
  const path = `/proc/${pid}/stat`;
  if (!existsSync(path)) return null;
  // The command name (field 2) is in parentheses and may hold spaces: the fields after its ")" are fixed.
  const stat = readFileSync(path, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

let engine: ScriptedEngine;
beforeAll(async () => {
  engine = await startScriptedEngine();
});
afterAll(() => engine.close());

function configFile(extra = ''): { directory: string; configPath: string } {
  const directory = temporaryDirectory('taskgate-workers-');
  const configPath = join(directory, 'taskgate.yaml');
  writeFileSync(configPath, engineConfig([engine.baseUrl], { extra }));
  return { directory, configPath };
}

describe('serve --workers 2', () => {
  let server: ServingProcess;
  let adminKey: string;
  /** `server.metrics`: the primary's own address, no key. */
  let metricsUrl: string;
  /** Every worker pid seen, for the check that none outlives the primary. */
  const pidsSeen = new Set<number>();

  beforeAll(async () => {
    const { directory, configPath } = configFile('server: { metrics: { host: 127.0.0.1, port: 0 } }\n');
    server = await serveTaskgate(['--config', configPath, '--data-dir', directory, '--workers', '2']);
    adminKey = await eventually(() => /\n(tg_live_\S+)\n/.exec(server.stdout())?.[1], 'the admin key');
  });
  afterAll(async () => {
    if (server.child.exitCode === null) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
  });

  it('prints the admin key once, made by the primary after both workers listen', async () => {
    // Both workers and the primary are up by now: still one key, printed once.
    await eventually(() => (server.stderr().match(/"msg":"worker listening"/g)?.length === 2 ? true : undefined), 'both workers to listen');
    expect(server.stdout().match(/tg_live_/g)).toHaveLength(1);
    expect(server.stdout()).toContain('Created the admin key of account "default". It is shown only this once');
    const listening = JSON.parse(
      server
        .stderr()
        .split('\n')
        .find((line) => line.includes('"msg":"taskgate listening"')) as string,
    ) as { workers: number; url: string; metrics_url: string };
    expect(listening).toMatchObject({
      workers: 2,
      url: server.baseUrl,
      metrics_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/),
    });
    metricsUrl = listening.metrics_url;
  });

  it('answers calls from two worker processes, and /metrics counts every call whichever worker answers the scrape', async () => {
    const before = await scrape(server, adminKey);
    const calls = 12;
    const replies = await Promise.all(Array.from({ length: calls }, (_, index) => chat(server, adminKey, `call ${index}`)));
    expect(replies.map((reply) => reply.status)).toEqual(Array(calls).fill(200));

    const okBefore = total(before, 'taskgate_requests_total', (labels) => labels.status === 'ok');
    const workersBefore = callsByWorker(before);
    // Scrapes land on either worker: every one reports the same sum.
    for (let scrapes = 0; scrapes < 4; scrapes++) {
      const after = await scrape(server, adminKey);
      expect(total(after, 'taskgate_requests_total', (labels) => labels.status === 'ok') - okBefore).toBe(calls);
      expect(total(after, 'taskgate_cluster_workers')).toBe(2);
      const workers = callsByWorker(after);
      expect(workers.size).toBe(2);
      const served = [...workers].map(([pid, count]) => [pid, count - (workersBefore.get(pid) ?? 0)] as const);
      expect(served.reduce((sum, [, count]) => sum + count, 0)).toBe(calls);
      // Both workers served some of the calls, and each is a child process of the primary.
      for (const [pid, count] of served) {
        expect(count).toBeGreaterThan(0);
        pidsSeen.add(pid);
        if (existsSync('/proc')) expect(parentOf(pid)).toBe(server.child.pid);
      }
    }
    // The primary's `server.metrics` address serves the same sum, without a key.
    const primary = await send(metricsUrl);
    expect(primary.status).toBe(200);
    expect(total(primary.body, 'taskgate_requests_total', (labels) => labels.status === 'ok') - okBefore).toBe(calls);
    expect(callsByWorker(primary.body).size).toBe(2);
  });

  it('gives a key with requests_per_minute N exactly N calls across the workers, not N per worker', async () => {
    const created = await send(`${server.baseUrl}/keys`, { key: adminKey, body: { requests_per_minute: 4 } });
    expect(created.status, created.body).toBe(201);
    const limitedKey = (JSON.parse(created.body) as { key: string }).key;
    const before = callsByWorker(await scrape(server, adminKey));

    const replies = await Promise.all(Array.from({ length: 12 }, () => chat(server, limitedKey)));
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(4);
    expect(replies.filter((reply) => reply.status === 429)).toHaveLength(8);
    // Each admitted call took one request from the one budget: no remaining count repeats.
    const remaining = replies
      .filter((reply) => reply.status === 200)
      .map((reply) => Number(reply.headers['x-ratelimit-remaining-requests']));
    expect(remaining.sort()).toEqual([0, 1, 2, 3]);
    // And the calls did reach both workers.
    const after = callsByWorker(await scrape(server, adminKey));
    expect([...after].filter(([pid, count]) => count > (before.get(pid) ?? 0))).toHaveLength(2);
    expect(total(await scrape(server, adminKey), 'taskgate_rate_limits_degraded')).toBe(0);
  });

  it('replaces a worker killed with SIGKILL, and the port keeps answering', async () => {
    const before = callsByWorker(await scrape(server, adminKey));
    const [victim] = [...before.keys()] as [number];
    process.kill(victim, 'SIGKILL');
    await eventually(
      () => (server.stderr().includes('"msg":"worker died; starting another in its place"') ? true : undefined),
      'the primary to notice',
    );
    expect(server.stderr()).toMatch(new RegExp(`"msg":"worker died; starting another in its place".*"pid":${victim}.*"signal":"SIGKILL"`));

    // Meanwhile and after, every call is answered.
    const replies = await Promise.all(Array.from({ length: 6 }, () => chat(server, adminKey)));
    expect(replies.map((reply) => reply.status)).toEqual(Array(6).fill(200));

    const replaced = await eventually(async () => {
      const text = await scrape(server, adminKey);
      const workers = callsByWorker(text);
      return workers.size === 2 && !workers.has(victim) ? { text, workers } : undefined;
    }, "a new worker in the dead one's slot");
    expect(total(replaced.text, 'taskgate_cluster_worker_restarts_total')).toBe(1);
    const newcomer = [...replaced.workers.keys()].find((pid) => !before.has(pid)) as number;
    expect(isAlive(newcomer)).toBe(true);
    if (existsSync('/proc')) expect(parentOf(newcomer)).toBe(server.child.pid);
    for (const pid of replaced.workers.keys()) pidsSeen.add(pid);
    // It serves: calls spread over both again.
    await Promise.all(Array.from({ length: 8 }, () => chat(server, adminKey)));
    expect(callsByWorker(await scrape(server, adminKey)).get(newcomer)).toBeGreaterThan(0);
  });

  it('SIGTERM to the primary lets calls in flight finish, stops every worker and exits 0', async () => {
    engine.scriptNext({ kind: 'reply', content: 'slow', delayMs: 800 });
    const inFlight = chat(server, adminKey, 'slow one');
    await eventually(
      () => (engine.requests.at(-1)?.body.messages as Array<{ content: string }> | undefined)?.[0]?.content === 'slow one' || undefined,
      'the slow call to reach the engine',
    );
    server.child.kill('SIGTERM');
    const reply = await inFlight;
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toMatchObject({ choices: [{ message: { content: 'slow' } }] });
    expect(await server.exited).toBe(0);
    expect(pidsSeen.size).toBe(3);
    for (const pid of pidsSeen) expect(isAlive(pid), `worker ${pid} outlived the primary`).toBe(false);
    expect(server.stderr().match(/"msg":"stopped","worker":/g)).toHaveLength(2);
  });
});

describe('serve --workers', () => {
  it('1 (or none) serves from the one process, as before', async () => {
    const { directory, configPath } = configFile();
    const server = await serveTaskgate(['--config', configPath, '--data-dir', directory, '--workers', '1'], {
      TASKGATE_ADMIN_KEY: 'tg_live_workers_test_admin_key_0123456789',
    });
    try {
      expect((await chat(server, 'tg_live_workers_test_admin_key_0123456789')).status).toBe(200);
      expect(server.stderr()).not.toContain('worker listening');
      expect(server.stderr()).not.toContain('"workers"');
    } finally {
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    }
  });

  it('refuses a count that is not one', () => {
    const result = runTaskgate(['serve', '--workers', 'two']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--workers must be a number of processes');
  });

  it('a start that fails in the workers (port in use) says why in one line, exits 1 and loses no admin key', async () => {
    const { directory, configPath } = configFile();
    const blocker = await serveTaskgate(['--config', configPath, '--data-dir', temporaryDirectory('taskgate-blocker-')], {
      TASKGATE_ADMIN_KEY: 'tg_live_workers_test_admin_key_0123456789',
    });
    try {
      const port = new URL(blocker.baseUrl).port;
      const failed = runTaskgate(['serve', '--config', configPath, '--data-dir', directory, '--port', port, '--workers', '2'], {
        TASKGATE_OFFLINE: '1',
      });
      expect(failed.status).toBe(1);
      expect(failed.stdout).toBe('');
      expect(failed.stderr).toContain(`taskgate: cannot listen on 127.0.0.1:${port}: the port is in use`);
    } finally {
      blocker.child.kill('SIGTERM');
      await blocker.exited;
    }
    // The key was never made, so the start that works prints it.
    const working = await serveTaskgate(['--config', configPath, '--data-dir', directory, '--workers', '2']);
    try {
      await eventually(() => (/\ntg_live_\S+\n/.test(working.stdout()) ? true : undefined), 'the admin key');
    } finally {
      working.child.kill('SIGTERM');
      expect(await working.exited).toBe(0);
    }
  });

  it("the first start's download happens once, in the primary; meanwhile every worker answers 503 model_downloading", async () => {
    const catalog = await startModelCatalogServer();
    catalog.files.switches.stallAfterBytes = Math.floor(catalog.model.sizeBytes / 2);
    const directory = temporaryDirectory('taskgate-workers-pull-');
    const server = await serveTaskgate(['--data-dir', directory, '--workers', '2'], {
      TASKGATE_OFFLINE: '0',
      TASKGATE_MODEL_CATALOG: catalog.catalogPath,
    });
    try {
      const key = await eventually(() => /\n(tg_live_\S+)\n/.exec(server.stdout())?.[1], 'the admin key');
      await eventually(() => (catalog.files.requests.length > 0 ? true : undefined), 'the download to start');
      const before = callsByWorker(await scrape(server, key));
      const replies = await Promise.all(
        Array.from({ length: 8 }, () =>
          send(`${server.baseUrl}/chat/completions`, {
            key,
            body: { model: catalog.model.id, messages: [{ role: 'user', content: 'Hi' }] },
          }),
        ),
      );
      for (const reply of replies) {
        expect(reply.status).toBe(503);
        expect((JSON.parse(reply.body) as { error: { code: string } }).error.code).toBe('model_downloading');
      }
      const after = callsByWorker(await scrape(server, key));
      expect([...after].filter(([pid, count]) => count > (before.get(pid) ?? 0))).toHaveLength(2);
      const readiness = await send(`${server.baseUrl.replace(/\/v1$/, '')}/readyz`);
      expect(readiness.status).toBe(503);
      expect(readiness.body).toMatch(/downloading, \d+%/);
      expect(catalog.files.requests.filter((entry) => entry.path === catalog.path)).toHaveLength(1);
    } finally {
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
      await catalog.close();
    }
  });

  it.skipIf(redisUrl === null)('with Redis, the workers share the Redis budgets: requests_per_minute N is N calls', async () => {
    const { directory, configPath } = configFile();
    const adminKey = 'tg_live_workers_test_admin_key_0123456789';
    const server = await serveTaskgate(['--config', configPath, '--data-dir', directory, '--workers', '2'], {
      TASKGATE_ADMIN_KEY: adminKey,
      TASKGATE_REDIS_URL: redisUrl as string,
    });
    try {
      const created = await send(`${server.baseUrl}/keys`, { key: adminKey, body: { requests_per_minute: 3 } });
      const limitedKey = (JSON.parse(created.body) as { key: string }).key;
      const replies = await Promise.all(Array.from({ length: 9 }, () => chat(server, limitedKey)));
      expect(replies.filter((reply) => reply.status === 200)).toHaveLength(3);
      expect(server.stderr().match(/rate limits: shared in Redis/g)).toHaveLength(2);
    } finally {
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    }
  });
});
