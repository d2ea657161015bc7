/**
 * Every import points down. The folders of `src/` are stacked in `LAYERS`
 * (declared here, once; `docs/architecture.md` explains each): a file may
 * import from its own folder and from folders in lower layers, never from a
 * peer in its own layer nor from above. `src/main.ts`, the composition root,
 * is a layer of its own.
 *
 * Imports are read with TypeScript's own scanner (`ts.preProcessFile`):
 * `import … from`, `import type`, `export … from`, side-effect imports and
 * `import('…')`, but nothing in a comment or a string. Only relative
 * specifiers are ours; packages are not checked. Test files (`*.test.ts`) are
 * left out: a unit test may reach wherever its fixtures are.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/** Bottom to top. Folders of one layer are peers: neither imports the other. */
const LAYERS: readonly (readonly string[])[] = [
  ['api'],
  ['log'],
  ['ipc', 'process', 'redis', 'fast-path'],
  ['catalog', 'store', 'evals', 'cache'],
  ['auth', 'tracking', 'telemetry'],
  ['config'],
  ['models'],
  ['engines', 'limits'],
  ['routing', 'budgets'],
  ['server'],
  ['dashboard'],
  ['main.ts'],
  ['cluster'],
  ['cli'],
];

const root = fileURLToPath(new URL('..', import.meta.url));
const sourceRoot = join(root, 'src');

interface Import {
  /** `src/…`, as a failure names it. */
  file: string;
  line: number;
  specifier: string;
  /** The part (top folder of `src/`, or `main.ts`) of the importing file, and of the imported one (null: outside `src/`). */
  from: string;
  to: string | null;
}

/** The part a path under `src/` belongs to: its top folder, or the module itself at the top (`main.ts`). */
function partOf(pathUnderSource: string): string {
  const [first, ...rest] = pathUnderSource.split(/[\\/]/) as [string, ...string[]];
  // A module at the top of src/, named as imported (`../main.js`) or as it is on disk (`main.ts`).
  if (rest.length === 0 && /\.(js|ts)$/.test(first)) return first.replace(/\.(js|ts)$/, '.ts');
  return first;
}

/** The text of a `## title` section of a Markdown document, up to the next `## `; empty when it has none. */
function section(text: string, title: string): string {
  const start = text.indexOf(`\n## ${title}\n`);
  if (start === -1) return '';
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end === -1 ? undefined : end);
}

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

function importsOf(path: string): Import[] {
  const text = readFileSync(path, 'utf8');
  const from = partOf(relative(sourceRoot, path));
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.filter((imported) => imported.fileName.startsWith('.'))
    .map((imported) => {
      const target = relative(sourceRoot, resolve(dirname(path), imported.fileName));
      const outside = target.startsWith('..') || target === '';
      return {
        file: relative(root, path).split(sep).join('/'),
        line: text.slice(0, imported.pos).split('\n').length,
        specifier: imported.fileName,
        from,
        to: outside ? null : partOf(target),
      };
    });
}

const imports = sourceFiles(sourceRoot).flatMap(importsOf);
/** Imports that leave their own part. */
const crossing = imports.filter((entry) => entry.to !== entry.from);
const layerOf = new Map(LAYERS.flatMap((parts, index) => parts.map((part) => [part, index] as const)));
const parts = readdirSync(sourceRoot, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() || (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')))
  .map((entry) => (entry.isDirectory() ? entry.name : partOf(entry.name)));

function describeImport(entry: Import): string {
  return `${entry.file}:${entry.line} imports '${entry.specifier}' (${entry.from} → ${entry.to ?? 'outside src/'})`;
}

/** The imports of `from` that reach any of `forbidden`, as failure lines. */
function importsInto(from: string, forbidden: readonly string[]): string[] {
  return crossing.filter((entry) => entry.from === from && entry.to !== null && forbidden.includes(entry.to)).map(describeImport);
}

describe('import layers', () => {
  it('declares every part of src/ in exactly one layer, and no part that is gone', () => {
    const declared = LAYERS.flat();
    expect(
      parts.filter((part) => !layerOf.has(part)),
      'folders (or top-level files) of src/ missing from LAYERS',
    ).toEqual([]);
    expect(
      declared.filter((part) => !parts.includes(part)),
      'LAYERS names parts src/ no longer has',
    ).toEqual([]);
    expect(
      declared.filter((part, index) => declared.indexOf(part) !== index),
      'parts declared twice',
    ).toEqual([]);
  });

  it('finds the imports it checks (the scanner reads this tree)', () => {
    // A reader that found nothing would pass every rule below.
    expect(crossing.length).toBeGreaterThan(100);
    expect(crossing.some((entry) => entry.file === 'src/main.ts' && entry.to === 'server')).toBe(true);
  });

  it('has every import point down: a part imports only from parts in lower layers', () => {
    const upward = crossing.filter((entry) => {
      const fromLayer = layerOf.get(entry.from);
      const toLayer = entry.to === null ? undefined : layerOf.get(entry.to);
      // Undeclared parts fail the first test; here they fail too, so the list names their imports.
      return fromLayer === undefined || toLayer === undefined || toLayer >= fromLayer;
    });
    expect(upward.map(describeImport), 'imports that point sideways or up the declared layers').toEqual([]);
  });

  it('keeps the store below tracking and config: it imports neither', () => {
    expect(importsInto('store', ['tracking', 'config']), 'store imports of tracking or config').toEqual([]);
  });

  it('keeps the engines free of the store, routing and the server', () => {
    expect(importsInto('engines', ['store', 'routing', 'server']), 'engines imports of store, routing or server').toEqual([]);
  });

  it('keeps api self-contained: it imports nothing of ours outside its folder', () => {
    const leaving = crossing.filter((entry) => entry.from === 'api').map(describeImport);
    expect(leaving, 'api imports of other parts').toEqual([]);
  });

  it('has no cycle between folders', () => {
    expect(
      folderCycles().map((cycle) => cycle.join('\n  ')),
      'cycles between folders',
    ).toEqual([]);
  });

  it('names every folder of src/ in docs/architecture.md, and none that is gone', () => {
    const architecture = join(root, 'docs', 'architecture.md');
    expect(existsSync(architecture), 'docs/architecture.md exists').toBe(true);
    const text = readFileSync(architecture, 'utf8');
    const named = new Set([...text.matchAll(/\bsrc\/([\w.-]+)/g)].map((match) => partOf(match[1] as string)));
    expect(
      parts.filter((part) => !named.has(part)),
      'parts of src/ docs/architecture.md does not name (as `src/<folder>`)',
    ).toEqual([]);
    expect(
      [...named].filter((part) => !parts.includes(part)),
      'parts docs/architecture.md names that src/ no longer has',
    ).toEqual([]);
  });

  it('lists the layers in docs/architecture.md in the declared order', () => {
    const text = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');
    // The numbered list of "## Layers": one layer a line, its parts in backticks.
    const listed = [...section(text, 'Layers').matchAll(/^\d+\.\s+(.*)$/gm)].map((match) =>
      [...(match[1] as string).matchAll(/`([^`]+)`/g)].map((part) => partOf(part[1] as string)),
    );
    expect(listed).toEqual(LAYERS.map((layer) => [...layer]));
  });
});

/**
 * Every strongly connected set of folders (Tarjan), each shown as one loop
 * through it and one import for every step between two of its folders.
 */
function folderCycles(): string[][] {
  const edges = new Map<string, Map<string, Import>>();
  for (const entry of crossing) {
    if (entry.to === null) continue;
    const targets = edges.get(entry.from) ?? new Map<string, Import>();
    if (!targets.has(entry.to)) targets.set(entry.to, entry);
    edges.set(entry.from, targets);
  }
  const index = new Map<string, number>();
  const lowest = new Map<string, number>();
  const stack: string[] = [];
  const components: string[][] = [];
  const visit = (part: string): void => {
    index.set(part, index.size);
    lowest.set(part, index.get(part) as number);
    stack.push(part);
    for (const next of edges.get(part)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        lowest.set(part, Math.min(lowest.get(part) as number, lowest.get(next) as number));
      } else if (stack.includes(next)) {
        lowest.set(part, Math.min(lowest.get(part) as number, index.get(next) as number));
      }
    }
    if (lowest.get(part) === index.get(part)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        component.push(member);
      } while (member !== part);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const part of [...edges.keys()].sort()) if (!index.has(part)) visit(part);

  // One loop per component: from its first folder, the shortest way back to it inside the component.
  return components.map((component) => {
    const start = component[0] as string;
    const cameFrom = new Map<string, Import>();
    const queue = [start];
    while (queue.length > 0) {
      const part = queue.shift() as string;
      for (const [next, entry] of edges.get(part) ?? []) {
        if (!component.includes(next) || cameFrom.has(next)) continue;
        cameFrom.set(next, entry);
        if (next !== start) queue.push(next);
      }
      if (cameFrom.has(start)) break;
    }
    const steps: Import[] = [];
    let at = start;
    do {
      const step = cameFrom.get(at) as Import;
      steps.unshift(step);
      at = step.from;
    } while (at !== start);
    const inside = component.flatMap((part) =>
      [...(edges.get(part) ?? [])].filter(([next]) => component.includes(next)).map(([, entry]) => entry),
    );
    return [
      `${component.join(', ')} import each other, e.g. ${steps.map((step) => step.from).join(' → ')} → ${start}; one import per step between them:`,
      ...inside.map(describeImport),
    ];
  });
}
