/**
 * Temporary directories that tests make and never leave behind: each is
 * removed after its test file has run, whether its tests passed or failed
 * (`test/setup/remove-temporary-directories.ts` registers the removal for
 * every file).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made = new Set<string>();

/** A new empty directory under the system's temporary folder, named `<prefix>XXXXXX`. */
export function temporaryDirectory(prefix: string): string {
  const directory = mkdtempSync(join(tmpdir(), prefix));
  made.add(directory);
  return directory;
}

export function removeTemporaryDirectories(): void {
  for (const directory of made) rmSync(directory, { recursive: true, force: true, maxRetries: 3 });
  made.clear();
}
