/**
 * Runs the built `taskgate` command as a child process, as a user would, and
 * reads the listening URL from its start-up log line.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { heapTuningFlags } from '../../src/server/heap-tuning.js';

export const CLI = resolve('dist/cli/main.js');

export interface CommandResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function runTaskgate(args: string[], environment: Record<string, string> = {}, options: { cwd?: string } = {}): CommandResult {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', ...environment },
    timeout: 30_000,
    cwd: options.cwd,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

export interface RunningCommand {
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
  interrupt: () => void;
}

/** The built CLI as a child process; asynchronous, so servers in the test's own process keep answering. */
export function startTaskgateCommand(args: string[], environment: Record<string, string> = {}): RunningCommand {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
  child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { stdout: () => stdout, stderr: () => stderr, exited, interrupt: () => child.kill('SIGINT') };
}

export async function runTaskgateAsync(args: string[], environment: Record<string, string> = {}): Promise<CommandResult> {
  const running = startTaskgateCommand(args, environment);
  const status = await running.exited;
  return { status, stdout: running.stdout(), stderr: running.stderr() };
}

export interface ServingProcess {
  child: ChildProcess;
  baseUrl: string;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

/**
 * `taskgate serve` on a free loopback port. Offline unless the test says
 * otherwise (`TASKGATE_OFFLINE: '0'`): a first start must not reach for the
 * public model download from a test.
 *
 * Node gets the serving heap flags, as `npm start` gives them, so `child` is
 * the serving process itself (a signal to it reaches the server, its
 * children are the workers); `nodeFlags: []` starts it as a bare
 * `node main.js serve`, which serves from a child process it starts with
 * them (heap-flags.test.ts).
 */
export async function serveTaskgate(
  args: string[],
  environment: Record<string, string> = {},
  options: { nodeFlags?: readonly string[] } = {},
): Promise<ServingProcess> {
  const nodeFlags = options.nodeFlags ?? heapTuningFlags;
  const child = spawn(process.execPath, [...nodeFlags, CLI, 'serve', '--host', '127.0.0.1', '--port', '0', ...args], {
    env: { PATH: process.env.PATH ?? '', TASKGATE_OFFLINE: '1', ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (data: Buffer) => (stdout += data.toString()));
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  const baseUrl = await new Promise<string>((resolveUrl, reject) => {
    child.stderr?.on('data', (data: Buffer) => {
      stderr += data.toString();
      const match = /"url":"([^"]+)"/.exec(stderr);
      if (match !== null) resolveUrl(match[1] as string);
    });
    void exited.then((code) => reject(new Error(`taskgate exited with ${code} before listening:\n${stderr}`)));
  });
  return { child, baseUrl, stdout: () => stdout, stderr: () => stderr, exited };
}
