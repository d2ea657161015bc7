/**
 * A `redis-server` the test owns, on a free loopback port, with no
 * persistence (`--save '' --appendonly no`), so a test can kill it mid-run and
 * start it again, empty, on the same port. For destructive things (outages,
 * SCRIPT FLUSH) that must not touch the machine's shared Redis.
 *
 *   const server = await startRedisServer();   // server.url
 *   await server.kill();                       // SIGKILL, as a crash
 *   await server.start();                      // again, same port
 *   await server.stop();                       // in afterAll: process gone, directory removed
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Requirement } from './machine-requirements.js';
import { temporaryDirectory } from './temporary-directory.js';

/** The `redis-server` program: /usr/bin/redis-server, else the one on the PATH. */
export const redisServerProgram: Requirement<string> = {
  what: 'the redis-server program',
  howToGet: 'Install it (Debian/Ubuntu: "sudo apt-get install redis-server").',
  name: 'REDIS',
  find() {
    for (const candidate of ['/usr/bin/redis-server', 'redis-server']) {
      if (spawnSync(candidate, ['--version'], { encoding: 'utf8' }).status === 0) return { found: candidate };
    }
    return { missing: 'neither /usr/bin/redis-server nor redis-server on the PATH runs' };
  },
};

export interface RedisServer {
  readonly url: string;
  readonly port: number;
  /** The server's process id while it runs (to SIGSTOP it, say); null while it does not. */
  readonly pid: number | null;
  /** SIGKILL, as a crash; resolves once the process is gone. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: nothing is persisted); resolves once it answers PING. */
  start(): Promise<void>;
  /** Kills it if it runs and removes its directory. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export async function startRedisServer(program: string): Promise<RedisServer> {
  const directory = temporaryDirectory('taskgate-redis-');
  const port = await freePort();
  let child: ChildProcess | null = null;

  async function start(): Promise<void> {
    if (child !== null) throw new Error('redis-server is already running');
    let output = '';
    const started = spawn(
      program,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', directory, '--daemonize', 'no'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    started.stdout?.on('data', (data: Buffer) => (output += data.toString()));
    started.stderr?.on('data', (data: Buffer) => (output += data.toString()));
    running.add(started);
    started.once('exit', () => running.delete(started));
    child = started;
    const deadline = Date.now() + 10_000;
    while (!(await answersPing(port))) {
      if (started.exitCode !== null || Date.now() > deadline) {
        await kill();
        throw new Error(`redis-server did not start on port ${port}:\n${output}`);
      }
      await sleep(25);
    }
  }

  async function kill(): Promise<void> {
    const current = child;
    child = null;
    if (current === null || current.exitCode !== null || current.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => current.once('exit', () => resolve()));
    current.kill('SIGCONT');
    current.kill('SIGKILL');
    await exited;
  }

  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    get pid() {
      return child?.pid ?? null;
    },
    kill,
    start,
    async stop() {
      await kill();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, timeout: 1_000 });
    let text = '';
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      text += chunk.toString();
      if (text.includes('\r\n')) socket.end();
    });
    socket.on('timeout', () => socket.destroy());
    socket.on('error', () => resolve(false));
    socket.on('close', () => resolve(text.startsWith('+PONG')));
  });
}
