/**
 * The serving heap flags (src/server/heap-tuning.ts) are on node's command
 * line of every serving process, read from /proc as the kernel has it:
 *   - a bare `node main.js serve` (the `taskgate` command) serves from a child
 *     it starts with them, and stands in for it: the child shares the port's
 *     log, gets the signals, and the command ends as the child did;
 *   - `npm start` and the test and benchmark helpers give them to node, and
 *     then the process serves itself;
 *   - the workers of `serve --workers` are forked with them;
 *   - an operator's own setting of either flag wins.
 * Linux only (/proc).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { heapTuningFlags, missingHeapTuningFlags } from '../src/server/heap-tuning.js';
import { eventually } from './helpers/eventually.js';
import { serveTaskgate, type ServingProcess } from './helpers/taskgate-process.js';
import { temporaryDirectory } from './helpers/temporary-directory.js';

/** node's arguments of a process, as it was started. */
function commandLine(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    .split('\0')
    .filter((part) => part !== '');
}

/** The live processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name (field 2) is in parentheses and may hold spaces: the fields after its ")" are fixed.
      const [state, parent] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(parent) === pid && state !== 'Z') children.push(Number(entry));
    } catch {
      // Gone while we looked.
    }
  }
  return children;
}

/** Running, not gone nor a zombie waiting for its parent. */
function isAlive(pid: number): boolean {
  try {
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
}

let running: ServingProcess[] = [];
afterEach(async () => {
  for (const server of running) {
    if (server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  }
  running = [];
});

async function serve(args: string[], nodeFlags?: readonly string[]): Promise<ServingProcess> {
  const server = await serveTaskgate(['--data-dir', temporaryDirectory('taskgate-heap-flags-'), ...args], {}, { nodeFlags });
  running.push(server);
  return server;
}

describe.skipIf(!existsSync('/proc/self/cmdline'))('the serving heap flags', () => {
  it('`node main.js serve` serves from a child process started with them, which SIGTERM to the command stops (exit 0)', async () => {
    const server = await serve([], []);
    const launcher = server.child.pid as number;
    const [serving, ...others] = childrenOf(launcher);
    expect(others).toEqual([]);
    expect(commandLine(launcher)).not.toContain(heapTuningFlags[0]);
    const servingLine = commandLine(serving as number);
    expect(servingLine.slice(1, 1 + heapTuningFlags.length)).toEqual(heapTuningFlags);
    expect(servingLine.slice(1 + heapTuningFlags.length)).toEqual(commandLine(launcher).slice(1));
    // The child's log is the command's: the helper read the URL from it.
    expect((await fetch(server.baseUrl.replace(/\/v1$/, '/healthz'))).status).toBe(200);

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(server.stderr()).toMatch(/"msg":"stopping: finishing calls in flight","signal":"SIGTERM"/);
    expect(server.stderr()).toMatch(/"msg":"stopped"/);
    expect(isAlive(serving as number)).toBe(false);
  });

  it('the command ends as its child did: killed by a signal, it dies of the same one', async () => {
    const server = await serve([], []);
    const [serving] = childrenOf(server.child.pid as number);
    process.kill(serving as number, 'SIGKILL');
    await server.exited;
    expect(server.child.signalCode).toBe('SIGKILL');
  });

  it('a SIGKILLed command leaves no server behind: its child stops as on SIGTERM', async () => {
    const server = await serve([], []);
    const [serving] = childrenOf(server.child.pid as number);
    server.child.kill('SIGKILL');
    await server.exited;
    await eventually(async () => (isAlive(serving as number) ? undefined : true), 'the orphaned server to stop');
    expect(server.stderr()).toMatch(/"msg":"stopping: finishing calls in flight","signal":"parent process gone"/);
  });

  it('given the flags, as `npm start` gives them, the process serves itself; its workers are forked with them', async () => {
    const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } };
    expect(missingHeapTuningFlags(manifest.scripts.start.split(' '))).toEqual([]);

    const server = await serve(['--workers', '2']);
    const primary = server.child.pid as number;
    expect(commandLine(primary)).toEqual(expect.arrayContaining([...heapTuningFlags]));
    const workers = await eventually(async () => {
      const found = childrenOf(primary);
      return found.length === 2 ? found : undefined;
    }, 'two workers');
    for (const worker of workers) {
      expect(commandLine(worker)).toEqual(expect.arrayContaining([...heapTuningFlags]));
      expect(commandLine(worker).at(-1)).toMatch(/worker-main\.js$/);
    }
  });

  it("an operator's own setting of a flag wins; only the other is added", async () => {
    const server = await serve([], ['--heap-growing-percent=50']);
    const [serving] = childrenOf(server.child.pid as number);
    const line = commandLine(serving as number);
    expect(line).toContain('--heap-growing-percent=50');
    expect(line).toContain('--no-allocation-site-pretenuring');
    expect(line).not.toContain('--heap-growing-percent=30');
    // And then the child has both, and relaunches no further.
    await sleep(200);
    expect(childrenOf(serving as number)).toEqual([]);
  });
});

describe('missingHeapTuningFlags', () => {
  it('names the flags node was not given, in either spelling or sense', () => {
    expect(missingHeapTuningFlags([])).toEqual(heapTuningFlags);
    expect(missingHeapTuningFlags(['--enable-source-maps', ...heapTuningFlags])).toEqual([]);
    expect(missingHeapTuningFlags(['--allocation_site_pretenuring', '--heap_growing_percent=70'])).toEqual([]);
    expect(missingHeapTuningFlags(['--cpu-prof', '--heap-growing-percent=30'])).toEqual(['--no-allocation-site-pretenuring']);
  });
});
