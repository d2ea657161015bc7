/**
 * The back ends taskgate shares between processes, for the PostgreSQL + Redis
 * rows: a fresh PostgreSQL database per run (`taskgate_bench_<random>`,
 * dropped at the end, on failure and on interrupt) and one numbered Redis
 * database (flushed at start and end: taskgate's limiter has no configurable
 * key prefix, and the machine's Redis is shared, so the bench never touches
 * any other database of it). Also: which processes of those back ends work
 * for the bench, so their CPU is reported and not taken for noise.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import pg from 'pg';
import { Redis } from 'ioredis';
import { cleanUpOnInterrupt, runOnce, withDeadline } from './child-processes.mjs';
import { log } from './log.mjs';

const postgresHowTo =
  'start it (Debian/Ubuntu: "sudo apt-get install postgresql", then "pg_ctlcluster 15 main start"), or point --postgres-url at one whose role may CREATE DATABASE';
const redisHowTo =
  'start it (Debian/Ubuntu: "sudo apt-get install redis-server", then "redis-server --daemonize yes"), or point --redis-url at one';

/** A URL without its password, for logs and reports. @param {string} url */
export function redacted(url) {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}

/**
 * @typedef {object} SharedBackends
 * @property {string} databaseName
 * @property {string} databaseUrl  the bench database, for TASKGATE_DATABASE_URL
 * @property {string} redisUrl     for TASKGATE_REDIS_URL
 * @property {number | null} redisPid  redis-server's process, when it runs on this machine
 * @property {() => Promise<void>} cleanUp  drops the database and flushes the Redis database; safe to call twice
 */

/**
 * Creates the bench database and empties the Redis database. Returns what is
 * missing instead when either does not answer (the caller skips the rows).
 * @param {{ postgresUrl: string, redisUrl: string }} settings
 * @returns {Promise<SharedBackends | { missing: string }>}
 */
export async function prepareSharedBackends({ postgresUrl, redisUrl }) {
  const redisDatabase = Number(new URL(redisUrl).pathname.slice(1) || '0');
  if (!Number.isInteger(redisDatabase) || redisDatabase < 1) {
    // Database 0 is the one everything else on a shared Redis uses: never flush it.
    return {
      missing: `--redis-url must name a Redis database other than 0 (e.g. redis://127.0.0.1:6379/7), not ${redacted(redisUrl)}: the bench flushes it`,
    };
  }
  const redisProblem = await flushRedis(redisUrl).then(
    () => null,
    (error) => (error instanceof Error ? error.message : String(error)),
  );
  if (redisProblem !== null) return { missing: `Redis at ${redacted(redisUrl)} does not answer (${redisProblem}): ${redisHowTo}` };

  const databaseName = `taskgate_bench_${randomBytes(6).toString('hex')}`;
  /** @type {pg.Client} */
  let admin;
  try {
    admin = await connectPostgres(postgresUrl);
  } catch (error) {
    return {
      missing: `PostgreSQL at ${redacted(postgresUrl)} does not answer (${error instanceof Error ? error.message : String(error)}): ${postgresHowTo}`,
    };
  }
  try {
    const leftovers = await admin.query("SELECT datname FROM pg_database WHERE datname LIKE 'taskgate\\_bench\\_%'");
    if (leftovers.rows.length > 0) {
      log(
        `PostgreSQL holds ${leftovers.rows.length} taskgate_bench_* databases from other runs (running now, or killed): ` +
          `${leftovers.rows.map((row) => row.datname).join(', ')}; left alone`,
      );
    }
    await admin.query(`CREATE DATABASE ${databaseName}`);
  } catch (error) {
    await admin.end().catch(() => undefined);
    return {
      missing: `PostgreSQL at ${redacted(postgresUrl)} would not create a database (${error instanceof Error ? error.message : String(error)}): ${postgresHowTo}`,
    };
  }
  await admin.end().catch(() => undefined);

  const databaseUrl = new URL(postgresUrl);
  databaseUrl.pathname = `/${databaseName}`;
  const cleanUp = runOnce(async () => {
    const problems = [];
    try {
      await dropDatabase(postgresUrl, databaseName);
    } catch (error) {
      problems.push(
        `could not drop database ${databaseName} (drop it by hand: psql -c 'DROP DATABASE ${databaseName}'): ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    try {
      await flushRedis(redisUrl);
    } catch (error) {
      problems.push(`could not flush ${redacted(redisUrl)}: ${error instanceof Error ? error.message : String(error)}`);
    }
    for (const problem of problems) log(problem);
    if (problems.length === 0) log(`dropped database ${databaseName}, flushed ${redacted(redisUrl)}`);
  });
  cleanUpOnInterrupt(cleanUp);
  log(`created database ${databaseName} on ${redacted(postgresUrl)}; Redis ${redacted(redisUrl)} flushed`);
  return { databaseName, databaseUrl: databaseUrl.toString(), redisUrl, redisPid: await redisServerPid(redisUrl), cleanUp };
}

/** @param {string} url */
async function connectPostgres(url) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000, query_timeout: 30_000 });
  // A client that fails later (its server gone) must not crash the bench.
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** @param {string} postgresUrl @param {string} databaseName */
async function dropDatabase(postgresUrl, databaseName) {
  const admin = await connectPostgres(postgresUrl);
  try {
    // FORCE (PostgreSQL 13+) ends any connection left behind, by a taskgate that was killed, say.
    await admin.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`).catch(async (error) => {
      if (/** @type {{ code?: string }} */ (error).code !== '42601') throw error;
      await admin.query(`DROP DATABASE IF EXISTS ${databaseName}`);
    });
  } finally {
    await admin.end().catch(() => undefined);
  }
}

/** FLUSHDB on the URL's database only (never FLUSHALL). @param {string} url */
async function flushRedis(url) {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 2_000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  // ioredis's connect() rejects with "Connection is closed."; the cause (ECONNREFUSED...) comes as an 'error' event.
  let cause = '';
  redis.on('error', (error) => {
    cause = error instanceof Error ? error.message : String(error);
  });
  try {
    await withDeadline(redis.connect(), 3_000, 'no connection within 3 s');
    await withDeadline(redis.flushdb(), 5_000, 'FLUSHDB took more than 5 s');
  } catch (error) {
    throw new Error(cause || (error instanceof Error ? error.message : String(error)), { cause: error });
  } finally {
    redis.disconnect();
  }
}

/** redis-server's pid, if it runs on this machine (same process namespace). @param {string} url */
async function redisServerPid(url) {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 2_000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    await withDeadline(redis.connect(), 3_000, 'no connection within 3 s');
    const info = await withDeadline(redis.info('server'), 3_000, 'INFO took more than 3 s');
    const pid = Number(/^process_id:(\d+)/m.exec(info)?.[1]);
    if (!Number.isInteger(pid) || !readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('redis-server')) return null;
    return pid;
  } catch {
    return null;
  } finally {
    redis.disconnect();
  }
}

/**
 * The PostgreSQL backends serving the bench database, when PostgreSQL runs on
 * this machine: found by their process title ("postgres: [cluster: ]user
 * database host(port) state"), which PostgreSQL sets unless
 * update_process_title is off. Pools open and close connections, so the set
 * is read again at every measurement.
 * @param {string} databaseName
 * @returns {number[]}
 */
export function postgresBackendPids(databaseName) {
  const pattern = new RegExp(`^postgres: (?:[^ ]+: )?[^ ]+ ${databaseName} `);
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (pattern.test(readFileSync(`/proc/${entry}/cmdline`, 'utf8'))) pids.push(Number(entry));
    } catch {
      // Gone since the listing, or not ours to read.
    }
  }
  return pids;
}

/**
 * Traces stored in the bench database, and which taskgate process holds the
 * router's lease (its pid, from the lease holder `<pid>-<random>`).
 * @param {string} databaseUrl
 * @returns {Promise<{ traces: number | null, routerLeaderPid: number | null }>}
 */
export async function readSharedDatabase(databaseUrl) {
  let client;
  try {
    client = await connectPostgres(databaseUrl);
  } catch {
    return { traces: null, routerLeaderPid: null };
  }
  try {
    const traces = await client.query('SELECT count(*)::int AS count FROM traces').then(
      (result) => /** @type {number} */ (result.rows[0].count),
      () => null,
    );
    const routerLeaderPid = await client.query("SELECT holder FROM leases WHERE name = 'router'").then(
      (result) => {
        const pid = Number(String(result.rows[0]?.holder ?? '').split('-')[0]);
        return Number.isInteger(pid) && pid > 0 ? pid : null;
      },
      () => null,
    );
    return { traces, routerLeaderPid };
  } finally {
    await client.end().catch(() => undefined);
  }
}
