/**
 * The command line of bench/cpu-engine.ts: its usage text and the strict
 * parsing of every option into a `CpuBenchOptions` object.
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { defaultResultsDirectory } from './repository-paths.mjs';

export const usage = `Usage: npm run bench:cpu -- [options]   (or: npx vite-node bench/cpu-engine.ts [options])

Options:
  --tokens N         tokens generated per call (default 128; --quick: 32)
  --concurrency N    sequences per model, and calls sent at once in the concurrent
                     rounds (default 4)
  --repeat N         repetitions: each is one single call and one round of N
                     concurrent calls per path (default 8; --quick: 2)
  --threads LIST     llama.cpp thread counts to measure, e.g. 1,2
                     (default: 1 and os.availableParallelism(), here ${[...new Set([1, availableParallelism()])].join(',')})
  --models LIST      tiny, small or both (default tiny,small)
  --max-noise P      measure a round again when steal time plus other processes'
                     CPU took more than P% of the machine during it (default 10)
  --retries N        at most N such re-runs per round (default 2; 0 to disable)
  --cpu-prof DIR     run taskgate under node --cpu-prof, write its profiles to DIR
                     (figures are then not comparable)
  --output DIR       where results go (default bench/results)
  --keep             keep the temporary directory (models, taskgate data)
  --quick            few short calls, for a smoke check
  -h, --help         this help`;

export type ModelName = 'tiny' | 'small';

export interface CpuBenchOptions {
  tokens: number;
  concurrency: number;
  repeat: number;
  threads: number[];
  models: ModelName[];
  maxNoisePercent: number;
  retries: number;
  cpuProfileDirectory: string | undefined;
  outputDirectory: string;
  keep: boolean;
  quick: boolean;
}

/** Null when only help was asked for. */
export function readOptions(args: string[] = process.argv.slice(2)): CpuBenchOptions | null {
  const { values } = parseArgs({
    args,
    options: {
      tokens: { type: 'string' },
      concurrency: { type: 'string', default: '4' },
      repeat: { type: 'string' },
      threads: { type: 'string' },
      models: { type: 'string', default: 'tiny,small' },
      'max-noise': { type: 'string', default: '10' },
      retries: { type: 'string', default: '2' },
      'cpu-prof': { type: 'string' },
      output: { type: 'string', default: defaultResultsDirectory },
      keep: { type: 'boolean', default: false },
      quick: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help === true) return null;
  const quick = values.quick === true;
  const threads = (values.threads ?? [...new Set([1, availableParallelism()])].join(','))
    .split(',')
    .map((text) => integer(text, '--threads', 1, 256));
  const models = values.models.split(',').map((name) => {
    if (name !== 'tiny' && name !== 'small') throw new Error(`--models takes tiny and/or small, not ${name}`);
    return name;
  });
  return {
    tokens: integer(values.tokens ?? (quick ? '32' : '128'), '--tokens', 2, 3_000),
    concurrency: integer(values.concurrency, '--concurrency', 1, 64),
    repeat: integer(values.repeat ?? (quick ? '2' : '8'), '--repeat', 1, 1_000),
    threads: [...new Set(threads)],
    models: [...new Set(models)],
    maxNoisePercent: number(values['max-noise'], '--max-noise', 0, 100),
    retries: integer(values.retries, '--retries', 0, 10),
    cpuProfileDirectory: values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']),
    outputDirectory: resolve(values.output),
    keep: values.keep === true,
    quick,
  };
}

function number(text: string, name: string, minimum: number, maximum: number): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < minimum || value > maximum)
    throw new Error(`${name} must be a number in [${minimum}, ${maximum}], not ${text}`);
  return value;
}

function integer(text: string, name: string, minimum: number, maximum: number): number {
  const value = number(text, name, minimum, maximum);
  if (!Number.isInteger(value)) throw new Error(`${name} must be a whole number, not ${text}`);
  return value;
}
