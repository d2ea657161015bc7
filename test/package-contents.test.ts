/**
 * What `npm pack` would publish holds no test code: no test files, no
 * contract suites or fixtures, nothing that imports vitest (a devDependency,
 * absent where the package is installed). The suites live in `test/`, and
 * `tsconfig.build.json` builds `src/` without its `*.test.ts`.
 *
 * `dist/` is built the way `npm start` builds it, only when a source is newer
 * (`scripts/build-if-stale.mjs`; the global setup has usually done it already).
 * That script never deletes: a file it built from a source since moved away
 * stays in `dist/` and would be packed. Such a file fails here too, as it
 * should: the fix is `rm -rf dist` and a new build.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

/** A file of the packed list, as `npm pack --json` names it. */
interface PackedFile {
  path: string;
}

/** Names that say a test suite or its data: `.test.`/`.spec.`, and `contract`, `suite` or `fixture`. */
const testNames = /\.(test|spec)\.|contract|suite|fixture/i;
/**
 * In `evals/`, "contract" is the product's eval contract (the checks a
 * workload's calls must pass: `eval-contract.ts`), not a test suite; there
 * only the other words count.
 */
const evalContractFolder = 'dist/evals/';
const testNamesInEvals = /\.(test|spec)\.|suite|fixture/i;
/** An import of vitest in emitted ESM (static, dynamic) or CommonJS. */
const importsVitest = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)['"]vitest(?:\/[^'"]*)?['"]/;

let packed: string[] = [];

beforeAll(() => {
  execFileSync(process.execPath, ['scripts/build-if-stale.mjs'], { stdio: 'inherit' });
  const output = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const [report] = JSON.parse(output) as Array<{ files: PackedFile[] }>;
  packed = (report?.files ?? []).map((file) => file.path);
}, 180_000);

describe('the published package', () => {
  it('holds the built program', () => {
    // Guards the checks below against an empty list passing them.
    expect(packed).toContain('dist/cli/main.js');
    expect(packed).toContain('dist/store/store.js');
  });

  it('holds no file named as test code', () => {
    const named = packed.filter((path) => (path.startsWith(evalContractFolder) ? testNamesInEvals : testNames).test(basename(path)));
    expect(named, 'test files, contract suites or fixtures in the package (a stale dist/? rm -rf dist and build again)').toEqual([]);
  });

  it('holds no JavaScript that imports vitest', () => {
    const importing = packed.filter((path) => /\.[cm]?js$/.test(path) && importsVitest.test(readFileSync(path, 'utf8')));
    expect(importing, 'packed files importing vitest (a stale dist/? rm -rf dist and build again)').toEqual([]);
  });
});
