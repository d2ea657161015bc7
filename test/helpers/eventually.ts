/** Polls until `check` returns a value (not undefined), or fails after `timeoutMs`: for values a test reads out of a running process. */
import { setTimeout as sleep } from 'node:timers/promises';

export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}
