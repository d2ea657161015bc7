// `npm start` builds only when a source file is newer than the build, so a
// fresh clone serves after one `tsc` run and later starts cost nothing.
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';

function newestModification(directory) {
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    const time = entry.isDirectory() ? newestModification(path) : statSync(path).mtimeMs;
    if (time > newest) newest = time;
  }
  return newest;
}

const marker = 'dist/cli/main.js';
const sourceTime = Math.max(newestModification('src'), statSync('tsconfig.json').mtimeMs, statSync('tsconfig.build.json').mtimeMs);
if (!existsSync(marker) || statSync(marker).mtimeMs < sourceTime) {
  process.stderr.write('taskgate: building (tsc)...\n');
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
}
