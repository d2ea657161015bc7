/**
 * The data directory as every command that opens it treats it: said out loud
 * (which one, and from where: `--data-dir`, `TASKGATE_DATA_DIR` or the
 * default), and refused when it is plainly not taskgate's, so a mistyped
 * `--data-dir ~` never fills a home folder with a database and models.
 *
 * Taskgate's: absent (it is created), empty, holding `taskgate.db` or
 * `models/`, or holding only config and model files (`*.yaml`, `*.json`,
 * `*.gguf`), as a folder set up by hand for taskgate does.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Settings } from '../config/load-config.js';
import { CliError } from './cli-error.js';

export function describeDataDirectory(settings: Pick<Settings, 'dataDirectory' | 'dataDirectorySource'>): string {
  const from = settings.dataDirectorySource === 'default' ? 'the default, ./.taskgate' : settings.dataDirectorySource;
  return `data directory ${settings.dataDirectory} (${from})`;
}

/** Throws a `CliError` naming the directory when it is not one taskgate may use. */
export function checkDataDirectory(path: string): void {
  let entries: string[];
  try {
    if (!statSync(path).isDirectory())
      throw new CliError(`${path} is not a directory; give a directory with --data-dir (or TASKGATE_DATA_DIR)`);
    entries = readdirSync(path);
  } catch (error) {
    if (error instanceof CliError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    throw new CliError(
      `cannot open the data directory ${path} (${code ?? String(error)}); check its permissions or choose another with --data-dir`,
    );
  }
  if (entries.includes('taskgate.db') || isDirectory(join(path, 'models'))) return;
  if (entries.every((name) => /\.(ya?ml|json|gguf)$/i.test(name))) return;
  throw new CliError(
    `${path} is not a taskgate data directory: it holds other files (${entries.slice(0, 3).join(', ')}${entries.length > 3 ? ', …' : ''}) and no taskgate.db or models/. ` +
      'Give a new or empty directory with --data-dir (or TASKGATE_DATA_DIR).',
  );
}

/** Checks the directory and says on stderr which one the command opened. */
export function openDataDirectory(settings: Pick<Settings, 'dataDirectory' | 'dataDirectorySource'>): void {
  checkDataDirectory(settings.dataDirectory);
  process.stderr.write(`taskgate: ${describeDataDirectory(settings)}\n`);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
