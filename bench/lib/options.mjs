/**
 * The command line of bench/overhead.mjs: its usage text and the strict
 * parsing of every option into an `Options` object.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { defaultResultsDirectory } from './repository-paths.mjs';

export const defaultPostgresUrl = 'postgres://postgres@127.0.0.1:5432/postgres';
export const defaultRedisUrl = 'redis://127.0.0.1:6379/7';

export const usage = `Usage: node bench/overhead.mjs [options]   (or: npm run bench -- [options])

Options:
  --duration S          seconds per measured run (default 10; --quick: 2)
  --connections N       connections of the saturation runs (default 32)
  --repeat N            measure everything N times and report medians (default 1)
  --rate R              requests per second of the fixed-rate JSON run (default 200)
  --ttfb-rate R         streams per second of the time-to-first-byte run (default 20)
  --ttfb-gap-ms MS      gap between stream events of the mock used for TTFB (default 20)
  --ttfb-turns-seconds S  the first-byte target's run: taskgate and the pass-through in turns,
                        --ttfb-rate streams a second in all, for S seconds (default 90, --quick 10; 0: none)
  --warmup S            seconds of warm-up load per path and kind (default 3; --quick: 1)
  --max-noise P         measure a run again when steal time plus other processes' CPU
                        took more than P% of the machine during it (default 5)
  --retries N           at most N such re-runs per measurement (default 2; 0 to disable)
  --only KIND           json | stream | all (default all)
  --skip-baseline       do not measure the bare node:http + undici pass-through
  --bare-rounds N       rounds of taskgate against the bare pass-through in turns (wrk; default 8;
                        --quick: 2): the CPU-per-call targets are their median ratio
  --skip-undici         do not measure a second taskgate with transport: undici (the reference
                        HTTP client) against the bare pass-through in turns, as the default's
                        figures are (reported beside them, not a target; needs wrk)
  --growth-seconds S    seconds of sustained load (JSON and streams at once) on one taskgate,
                        its RSS read every 10 s: does it grow? (default 300; --quick: 20; 0 to skip)
  --skip-otel           do not measure what OpenTelemetry export costs (pairs of taskgates,
                        one of each exporting every span over OTLP/HTTP to a local sink)
  --otel-pairs N        pairs of taskgates (export off, export on) in that A/B (default 3; --quick: 1)
  --otel-rounds N       rounds per pair and kind of call (default 8; --quick: 2); each round loads
                        the two of a pair in turns (wrk) and takes the ratio of their CPU per call
  --otel-seconds S      each taskgate's share of a round at saturation (default 2)
  --skip-shared         do not measure taskgate on PostgreSQL + Redis (one process, and
                        three processes sharing the database and Redis)
  --postgres-url URL    PostgreSQL where the bench creates (and drops) a fresh database
                        taskgate_bench_<random> (default ${defaultPostgresUrl})
  --redis-url URL       Redis for the rate limits, with a database number other than 0:
                        the bench flushes that database at start and end (default ${defaultRedisUrl})
  --load-generator G    auto | wrk | autocannon (default auto: wrk when installed)
  --cpu-prof DIR        run taskgate under node --cpu-prof, write the profile to DIR
                        (the exporting one of the OTel A/B: to DIR/otel) and print its hot spots
                        (figures are then not comparable)
  --output DIR          where results go (default bench/results)
  --keep                keep the temporary data directory
  --quick               short runs, for a smoke check
  -h, --help            this help`;

/**
 * @typedef {object} Options
 * @property {number} durationSeconds
 * @property {number} connections
 * @property {number} repeat
 * @property {number} rate
 * @property {number} ttfbRate
 * @property {number} ttfbGapMs
 * @property {number} ttfbTurnsSeconds
 * @property {number} warmupSeconds
 * @property {number} maxNoisePercent
 * @property {number} retries
 * @property {'json' | 'stream' | 'all'} only
 * @property {'auto' | 'wrk' | 'autocannon'} loadGenerator
 * @property {string | undefined} cpuProfileDirectory
 * @property {string} outputDirectory
 * @property {boolean} keep
 * @property {boolean} skipBaseline
 * @property {boolean} skipOtel
 * @property {boolean} skipUndici
 * @property {number} otelPairs
 * @property {number} bareRounds
 * @property {number} growthSeconds
 * @property {number} otelRounds
 * @property {number} otelSeconds
 * @property {boolean} skipShared
 * @property {string} postgresUrl
 * @property {string} redisUrl
 * @property {boolean} quick
 */

/** @returns {Options | null} null when only help was asked for. */
export function readOptions() {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string' },
      connections: { type: 'string', default: '32' },
      repeat: { type: 'string', default: '1' },
      rate: { type: 'string', default: '200' },
      'ttfb-rate': { type: 'string', default: '20' },
      'ttfb-gap-ms': { type: 'string', default: '20' },
      'ttfb-turns-seconds': { type: 'string' },
      warmup: { type: 'string' },
      'max-noise': { type: 'string', default: '5' },
      retries: { type: 'string', default: '2' },
      only: { type: 'string', default: 'all' },
      'load-generator': { type: 'string', default: 'auto' },
      'cpu-prof': { type: 'string' },
      output: { type: 'string', default: defaultResultsDirectory },
      keep: { type: 'boolean', default: false },
      'skip-baseline': { type: 'boolean', default: false },
      'skip-otel': { type: 'boolean', default: false },
      'skip-undici': { type: 'boolean', default: false },
      'bare-rounds': { type: 'string' },
      'growth-seconds': { type: 'string' },
      'otel-pairs': { type: 'string' },
      'otel-rounds': { type: 'string' },
      'otel-seconds': { type: 'string', default: '2' },
      'skip-shared': { type: 'boolean', default: false },
      'postgres-url': { type: 'string', default: defaultPostgresUrl },
      'redis-url': { type: 'string', default: defaultRedisUrl },
      quick: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return null;
  const quick = values.quick === true;
  const only = values.only;
  if (only !== 'json' && only !== 'stream' && only !== 'all') throw new Error(`--only must be json, stream or all, not ${only}`);
  const loadGenerator = values['load-generator'];
  if (loadGenerator !== 'auto' && loadGenerator !== 'wrk' && loadGenerator !== 'autocannon') {
    throw new Error(`--load-generator must be auto, wrk or autocannon, not ${loadGenerator}`);
  }
  return {
    durationSeconds: positiveNumber(values.duration ?? (quick ? '2' : '10'), '--duration', 3_600),
    connections: Math.round(positiveNumber(values.connections, '--connections', 10_000)),
    repeat: Math.round(positiveNumber(values.repeat, '--repeat', 100)),
    rate: positiveNumber(values.rate, '--rate', 100_000),
    ttfbRate: positiveNumber(values['ttfb-rate'], '--ttfb-rate', 10_000),
    ttfbGapMs: positiveNumber(values['ttfb-gap-ms'], '--ttfb-gap-ms', 10_000),
    ttfbTurnsSeconds: nonNegativeNumber(values['ttfb-turns-seconds'] ?? (quick ? '10' : '90'), '--ttfb-turns-seconds', 3_600),
    warmupSeconds: positiveNumber(values.warmup ?? (quick ? '1' : '3'), '--warmup', 600),
    maxNoisePercent: positiveNumber(values['max-noise'], '--max-noise', 100),
    retries: Math.round(nonNegativeNumber(values.retries, '--retries', 10)),
    only,
    loadGenerator,
    cpuProfileDirectory: values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']),
    outputDirectory: resolve(values.output),
    keep: values.keep === true,
    skipBaseline: values['skip-baseline'] === true,
    skipOtel: values['skip-otel'] === true,
    skipUndici: values['skip-undici'] === true,
    growthSeconds: nonNegativeNumber(values['growth-seconds'] ?? (quick ? '20' : '300'), '--growth-seconds', 3_600),
    bareRounds: Math.round(positiveNumber(values['bare-rounds'] ?? (quick ? '2' : '8'), '--bare-rounds', 100)),
    otelPairs: Math.round(positiveNumber(values['otel-pairs'] ?? (quick ? '1' : '3'), '--otel-pairs', 10)),
    otelRounds: Math.round(positiveNumber(values['otel-rounds'] ?? (quick ? '2' : '8'), '--otel-rounds', 100)),
    otelSeconds: positiveNumber(values['otel-seconds'], '--otel-seconds', 600),
    skipShared: values['skip-shared'] === true,
    postgresUrl: urlOption(values['postgres-url'], '--postgres-url', /^postgres(ql)?:$/),
    redisUrl: urlOption(values['redis-url'], '--redis-url', /^rediss?:$/),
    quick,
  };
}

/** @param {string} text @param {string} name @param {RegExp} protocol */
function urlOption(text, name, protocol) {
  let url;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`${name} must be a URL, not ${text}`);
  }
  if (!protocol.test(url.protocol)) throw new Error(`${name}: unexpected scheme ${url.protocol} in ${text}`);
  return text;
}

/** @param {string} text @param {string} name @param {number} maximum */
function nonNegativeNumber(text, name, maximum) {
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0 || value > maximum) throw new Error(`${name} must be a number in [0, ${maximum}], not ${text}`);
  return value;
}

/** @param {string} text @param {string} name @param {number} maximum */
function positiveNumber(text, name, maximum) {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0 || value > maximum) throw new Error(`${name} must be a number in (0, ${maximum}], not ${text}`);
  return value;
}
