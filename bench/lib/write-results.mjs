/**
 * Where a run's results go: overhead-<start time>.json and .md in the output
 * directory, and the hot spots of taskgate's CPU profile when one was taken.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatProfileSummary, summariseProfile } from '../profile-summary.mjs';
import { log } from './log.mjs';
import { repositoryRoot } from './repository-paths.mjs';

/** @param {string} outputDirectory @param {{ startedAt: string }} report @param {string} markdown */
export function writeResults(outputDirectory, report, markdown) {
  mkdirSync(outputDirectory, { recursive: true });
  const stamp = report.startedAt.replace(/[:.]/g, '-');
  const resultPath = join(outputDirectory, `overhead-${stamp}.json`);
  writeFileSync(resultPath, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(outputDirectory, `overhead-${stamp}.md`), `${markdown}\n`);
  log(`results written to ${resultPath}`);
}

/** The newest profile in the directory: taskgate writes one as it stops. @param {string} cpuProfileDirectory */
export function printProfileSummary(cpuProfileDirectory) {
  const profiles = readdirSync(cpuProfileDirectory).filter((name) => name.endsWith('.cpuprofile'));
  const newest = profiles.sort().at(-1);
  if (newest === undefined) log('no CPU profile was written');
  else {
    const profilePath = join(cpuProfileDirectory, newest);
    process.stdout.write(`\nCPU profile ${profilePath}\n${formatProfileSummary(summariseProfile(profilePath, { repositoryRoot }))}\n`);
  }
}
