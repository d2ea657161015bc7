/**
 * What some integration tests need from the machine beyond Node: a browser for
 * the dashboard (and, as the store and limiter grow back ends, PostgreSQL and
 * Redis). `npm test` must pass on a machine that has only Node, so a test file
 * that lacks what it needs is skipped, and says so in one printed line naming
 * what is missing and how to get it, never silently. CI sets
 * `TASKGATE_TEST_REQUIRE_<WHAT>=1` (see `.ci/run`), which turns a missing
 * requirement into a failure, so CI never skips.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

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
  if ('found' in result) return result.found;
  const variable = `TASKGATE_TEST_REQUIRE_${requirement.name}`;
  const line = `${testFile}: ${requirement.what} is missing (${result.missing}). ${requirement.howToGet}`;
  if (process.env[variable] === '1') throw new Error(`${line} ${variable}=1, so this is a failure, not a skip.`);
  console.warn(`SKIPPED ${line} ${skipped}`);
  return null;
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
    if (chosen !== undefined && chosen !== '') return isExecutableFile(chosen) ? { found: chosen } : { missing: `CHROME_PATH=${chosen} is not an executable file` };
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
