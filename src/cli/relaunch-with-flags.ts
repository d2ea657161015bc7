/**
 * Runs this same command again in a child node process with `flags` added
 * to node's own options, for settings node reads only as a process starts
 * (`server/heap-tuning.ts`). This process stays as the child's stand-in, so
 * whoever started it sees no difference:
 *   - the child shares its stdin, stdout and stderr, and its process group
 *     (Ctrl-C and a signal to the group reach both);
 *   - SIGTERM, SIGINT and SIGHUP sent to this process alone are passed on (a
 *     serving process takes a second stop signal as the one it is already
 *     acting on, `process/stop-and-exit.ts`);
 *   - it ends as the child did: with its exit code, or killed by the same
 *     signal; and the child stops when it ends first (even by SIGKILL).
 * The child has the flags, so it does not relaunch again (`main.ts`).
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';

const passedOn = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

export function relaunchWithFlags(flags: readonly string[]): Promise<void> {
  // The IPC channel closes when this process ends, however: the child stops then, rather than serve on orphaned (`process/stop-and-exit.ts`).
  const child = spawn(process.execPath, [...process.execArgv, ...flags, ...process.argv.slice(1)], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
  });
  const passOn = (signal: NodeJS.Signals) => {
    child.kill(signal);
  };
  for (const signal of passedOn) process.on(signal, passOn);
  return new Promise((resolve, reject) => {
    child.once('error', (error) => {
      for (const signal of passedOn) process.off(signal, passOn);
      reject(error);
    });
    child.once('exit', (code, signal) => {
      for (const each of passedOn) process.off(each, passOn);
      if (signal !== null) {
        // Without listeners the signal's default action ends this process too; the exit code is the shell's form, should it not.
        process.exitCode = 128 + (constants.signals[signal] ?? 0);
        process.kill(process.pid, signal);
      } else {
        process.exitCode = code ?? 1;
      }
      resolve();
    });
  });
}
