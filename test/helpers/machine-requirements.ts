/**
 * What some integration tests need from the machine beyond Node: a browser for
 * the dashboard, PostgreSQL for the store and Redis for the limiter. `npm test` must pass on a machine that has only Node, so a test file
 * that lacks what it needs is skipped, and says so in one printed line naming
 * what is missing and how to get it, never silently. CI sets
 * `TASKGATE_TEST_REQUIRE_<WHAT>=1` (see `.ci/run`), which turns a missing
 * requirement into a failure, so CI never skips.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { connect } from 'node:net';
import { delimiter, join } from 'node:path';
import pg from 'pg';

export interface Requirement<T> {
  /** What the tests need, for the printed line: "a Chromium or Chrome browser". */
  what: string;
  /** How to get it on a machine that lacks it. */
  howToGet: string;
  /** `TASKGATE_TEST_REQUIRE_<name>` makes a missing requirement fail. */
  name: string;
  /** The thing itself (a path, a URL), or the reason it is not there. */
  find(): { found: T } | { missing: string };
}

/**
 * The requirement's value, or null when it is missing and not required (the
 * caller then skips its tests: `describe.skipIf(value === null)`). Throws when
 * it is missing and the environment requires it.
 */
export function requireOrSkip<T>(requirement: Requirement<T>, testFile: string, skipped = 'Its tests are skipped.'): T | null {
  const result = requirement.find();
  return 'found' in result ? result.found : reportMissing(requirement, result.missing, testFile, skipped);
}

/** A service reached over the network: found by connecting to it. */
export interface ServiceRequirement extends Omit<Requirement<string>, 'find'> {
  find(): Promise<{ found: string } | { missing: string }>;
}

/** `requireOrSkip` for a service: the URL to reach it at, or null (skip). Use with top-level await in the test file. */
export async function requireServiceOrSkip(
  requirement: ServiceRequirement,
  testFile: string,
  skipped = 'Its tests are skipped.',
): Promise<string | null> {
  const result = await requirement.find();
  return 'found' in result ? result.found : reportMissing(requirement, result.missing, testFile, skipped);
}

function reportMissing(
  requirement: Pick<Requirement<unknown>, 'what' | 'howToGet' | 'name'>,
  missing: string,
  testFile: string,
  skipped: string,
): null {
  const variable = `TASKGATE_TEST_REQUIRE_${requirement.name}`;
  const line = `${testFile}: ${requirement.what} is missing (${missing}). ${requirement.howToGet}`;
  if (process.env[variable] === '1') throw new Error(`${line} ${variable}=1, so this is a failure, not a skip.`);
  console.warn(`SKIPPED ${line} ${skipped}`);
  return null;
}

/** PostgreSQL at `TASKGATE_TEST_DATABASE_URL` (default the machine's own, trust auth, database `test`). */
export const postgres: ServiceRequirement = {
  what: 'PostgreSQL',
  howToGet:
    'Start one (Debian/Ubuntu: "sudo apt-get install postgresql", then "pg_ctlcluster 15 main start") or point TASKGATE_TEST_DATABASE_URL at one.',
  name: 'POSTGRES',
  async find() {
    const url = process.env.TASKGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return { found: url };
    } catch (error) {
      return { missing: `${redact(url)} does not answer: ${error instanceof Error ? error.message : String(error)}` };
    } finally {
      await client.end().catch(() => undefined);
    }
  },
};

/** Redis at `TASKGATE_TEST_REDIS_URL` (default the machine's own). */
export const redis: ServiceRequirement = {
  what: 'Redis',
  howToGet:
    'Start one (Debian/Ubuntu: "sudo apt-get install redis-server", then "redis-server --daemonize yes") or point TASKGATE_TEST_REDIS_URL at one.',
  name: 'REDIS',
  async find() {
    const url = process.env.TASKGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
    const { hostname, port } = new URL(url);
    const answer = await new Promise<string>((resolve) => {
      const socket = connect({ host: hostname, port: Number(port || 6379), timeout: 2_000 });
      let text = '';
      socket.on('connect', () => socket.write('PING\r\n'));
      socket.on('data', (chunk) => {
        text += chunk.toString();
        if (text.includes('\r\n')) socket.end();
      });
      socket.on('timeout', () => socket.destroy(new Error('timed out')));
      socket.on('error', (error) => resolve(error.message));
      socket.on('close', () => resolve(text));
    });
    // A Redis that wants a password answers -NOAUTH: it is there, and the URL carries the password.
    return answer.startsWith('+PONG') || answer.startsWith('-NOAUTH')
      ? { found: url }
      : { missing: `${redact(url)} does not answer PING (${answer.trim() || 'no reply'})` };
  },
};

/** A URL without its password, for a printed line. */
function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}

const browserNames = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable', 'chrome'];
const macBrowsers = ['/Applications/Google Chrome.app/Contents/MacOS/Google Chrome', '/Applications/Chromium.app/Contents/MacOS/Chromium'];

/** A Chromium-family browser: `CHROME_PATH`, else the first of the usual names on the PATH (Debian's `chromium` among them). */
export const browser: Requirement<string> = {
  what: 'a Chromium or Chrome browser',
  howToGet: 'Install one (Debian/Ubuntu: "sudo apt-get install chromium") or point CHROME_PATH at one.',
  name: 'BROWSER',
  find() {
    const chosen = process.env.CHROME_PATH;
    if (chosen !== undefined && chosen !== '')
      return isExecutableFile(chosen) ? { found: chosen } : { missing: `CHROME_PATH=${chosen} is not an executable file` };
    const directories = (process.env.PATH ?? '').split(delimiter).filter((directory) => directory !== '');
    const candidates = [...directories.flatMap((directory) => browserNames.map((name) => join(directory, name))), ...macBrowsers];
    const found = candidates.find(isExecutableFile);
    return found === undefined ? { missing: `none of ${browserNames.join(', ')} is on the PATH and CHROME_PATH is not set` } : { found };
  },
};

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
