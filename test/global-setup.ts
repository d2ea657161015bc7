/**
 * Builds `dist/` once before the suites that run the real `taskgate` command
 * as a child process (CLI, SIGTERM). A failed build does not stop the other
 * suites: those that need `dist/` fail on their own, and `npm test` has
 * already type-checked before vitest starts.
 */
import { execFileSync } from 'node:child_process';

export default function setup(): void {
  try {
    execFileSync(process.execPath, ['scripts/build-if-stale.mjs'], { stdio: 'inherit' });
  } catch {
    process.stderr.write('global-setup: the build failed; the CLI and shutdown tests will fail.\n');
  }
}
