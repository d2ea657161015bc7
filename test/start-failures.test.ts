/**
 * `taskgate serve` when it cannot start, and where it listens when it can.
 * A start that fails says so in one line with what to do, prints no stack,
 * exits non-zero and loses nothing: the admin key is made only once the port
 * is taken, so the next, successful start prints it.
 */
import { createServer, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runTaskgateAsync, serveTaskgate, startTaskgateCommand } from './helpers/taskgate-process.js';
import { temporaryDirectory } from './helpers/temporary-directory.js';

const offline = { TASKGATE_OFFLINE: '1' };
let blocker: Server | null = null;
afterEach(async () => {
  await new Promise<void>((resolve) => (blocker === null ? resolve() : blocker.close(() => resolve())));
  blocker = null;
});

/** One line on stderr, no stack frames, nothing on stdout. */
function expectOneLine(result: { status: number | null; stdout: string; stderr: string }): string {
  expect(result.status).toBe(1);
  expect(result.stdout).toBe('');
  const lines = result.stderr.split('\n').filter((line) => line !== '' && !line.startsWith('{'));
  expect(lines).toHaveLength(1);
  expect(result.stderr).not.toMatch(/^\s+at /m);
  return lines[0] as string;
}

describe('a start that fails', () => {
  it('on a taken port says so in one line, and keeps the admin key for the start that works', async () => {
    blocker = createServer();
    await new Promise<void>((resolve) => blocker!.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const dataDirectory = temporaryDirectory('taskgate-port-');
    const failed = await runTaskgateAsync(['serve', '--port', String(port), '--data-dir', dataDirectory], offline);
    expect(expectOneLine(failed)).toBe(
      `taskgate: cannot listen on 127.0.0.1:${port}: the port is in use (another taskgate?). Stop that process, or choose another port with --port N (or PORT).`,
    );

    const working = await serveTaskgate(['--data-dir', dataDirectory], offline);
    try {
      for (let attempt = 0; attempt < 200 && !working.stdout().includes('tg_live_'); attempt++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      expect(working.stdout()).toMatch(/\ntg_live_\S+\n/);
    } finally {
      working.child.kill('SIGTERM');
      expect(await working.exited).toBe(0);
    }
  });

  it('on a host that is not this machine says so in one line', async () => {
    const failed = await runTaskgateAsync(
      ['serve', '--host', '203.0.113.7', '--port', '0', '--data-dir', temporaryDirectory('taskgate-host-')],
      offline,
    );
    expect(expectOneLine(failed)).toContain('203.0.113.7 is not an address of this machine');
  });

  it('refuses a data directory that is a file, holds something else, or has a broken database', async () => {
    const directory = temporaryDirectory('taskgate-dirs-');
    writeFileSync(join(directory, 'a-file'), 'x');
    expect(expectOneLine(await runTaskgateAsync(['serve', '--data-dir', join(directory, 'a-file')], offline))).toContain(
      'is not a directory',
    );

    const project = join(directory, 'my-project');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), '{}');
    writeFileSync(join(project, 'index.js'), '');
    const foreign = expectOneLine(await runTaskgateAsync(['serve', '--data-dir', project], offline));
    expect(foreign).toBe(
      `taskgate: ${project} is not a taskgate data directory: it holds other files (index.js, package.json) and no taskgate.db or models/. Give a new or empty directory with --data-dir (or TASKGATE_DATA_DIR).`,
    );
    // Commands that open the data directory refuse it alike.
    expect(expectOneLine(await runTaskgateAsync(['keys', 'list', '--data-dir', project]))).toBe(foreign);

    const broken = join(directory, 'broken');
    mkdirSync(broken);
    writeFileSync(join(broken, 'taskgate.db'), 'this is not a database, but a text file of some length '.repeat(100));
    expect(expectOneLine(await runTaskgateAsync(['serve', '--data-dir', broken, '--port', '0'], offline))).toMatch(
      /^taskgate: cannot use the database .*broken\/taskgate\.db \(SQLITE_NOTADB: .*\)\. Is it a taskgate database, and writable\?/,
    );
  });

  it('on a bad config names the bad paths, without a stack', async () => {
    const directory = temporaryDirectory('taskgate-bad-config-');
    writeFileSync(join(directory, 'taskgate.yaml'), 'server: { port: eighty }\n');
    const failed = await runTaskgateAsync(['serve', '--config', join(directory, 'taskgate.yaml'), '--data-dir', directory], offline);
    expect(failed.status).toBe(1);
    expect(failed.stderr).toContain('server.port');
    expect(failed.stderr).not.toMatch(/^\s+at /m);
  });
});

describe('where it listens', () => {
  it('binds 127.0.0.1 unless told otherwise, so other machines cannot reach it', async () => {
    const command = startTaskgateCommand(['serve', '--port', '0', '--data-dir', temporaryDirectory('taskgate-bind-')], offline);
    try {
      for (let attempt = 0; attempt < 500 && !command.stderr().includes('"url"'); attempt++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      const url = /"url":"([^"]+)"/.exec(command.stderr())?.[1] as string;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      expect((await fetch(url.replace('/v1', '/healthz'))).status).toBe(200);
      // This machine's own non-loopback addresses, as another machine would dial them.
      const port = new URL(url).port;
      const external = Object.values(networkInterfaces())
        .flat()
        .filter((entry) => entry !== undefined && entry.family === 'IPv4' && !entry.internal);
      for (const address of external) {
        await expect(fetch(`http://${address!.address}:${port}/healthz`)).rejects.toThrow();
      }
    } finally {
      command.interrupt();
      expect(await command.exited).toBe(0);
    }
  });
});
