/**
 * The machine and the code a run measured, recorded with its results so runs
 * can be compared.
 */
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { repositoryRoot } from './repository-paths.mjs';

/** @param {string} loadGenerator */
export function describeEnvironment(loadGenerator) {
  /** @param {string[]} args */
  const git = (args) => {
    try {
      return execFileSync('git', args, {
        cwd: repositoryRoot,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 5_000,
      }).trim();
    } catch {
      return '';
    }
  };
  return {
    cpuModel: cpus()[0]?.model ?? 'unknown CPU',
    cores: cpus().length,
    memoryGigabytes: totalmem() / 1024 ** 3,
    node: process.version,
    commit: git(['rev-parse', '--short', 'HEAD']) || 'unknown commit',
    sourceChanged: git(['status', '--porcelain', '--', 'src']) !== '',
    loadGenerator,
    loadAverageAtStart: loadavg()
      .map((value) => value.toFixed(2))
      .join(' '),
  };
}
