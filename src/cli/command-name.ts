/**
 * How the person at this terminal runs taskgate, for commands printed as
 * advice: `taskgate` when it is on the PATH, `npx taskgate` from a checkout
 * (as `npm start` runs it), else `node <path to main.js>`.
 */
import { basename, relative } from 'node:path';

export function commandName(script = process.argv[1] ?? '', directory = process.cwd()): string {
  if (basename(script) !== 'main.js') return 'taskgate';
  const path = relative(directory, script);
  return path === 'dist/cli/main.js' || path === 'dist\\cli\\main.js' ? 'npx taskgate' : `node ${script}`;
}
