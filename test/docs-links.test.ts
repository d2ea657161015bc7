/**
 * Every link of the README and of `docs/` leads somewhere: a relative link to
 * a file that is in the repository, and a `#fragment` to a heading of that
 * file (or of the same file), with the anchors GitHub makes of headings.
 * Pages were split and moved; this is what keeps their cross-references true.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

const documents = [
  'README.md',
  ...readdirSync('docs', { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name)),
];

/** The text without fenced code blocks and inline code, where `#` and `](` mean nothing. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, 'code');
}

/** GitHub's anchor of a heading (github-slugger): lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const [, title] of withoutFences.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const text = (title as string).replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[*`]/g, '');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Each link's target, as written: `[text](target)` and `![alt](target)`, outside code. */
function linkTargets(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)/g)].map((match) => match[1] as string);
}

/** What is wrong with one link of `document`, or null. */
function brokenLink(document: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null;
  const [path, fragment] = target.split('#', 2) as [string, string | undefined];
  const file = path === '' ? document : normalize(join(dirname(document), decodeURIComponent(path)));
  if (!existsSync(file)) return `${document} → ${target}: no file ${file}`;
  if (fragment === undefined || !file.endsWith('.md')) return null;
  return headingAnchors(readFileSync(file, 'utf8')).has(decodeURIComponent(fragment))
    ? null
    : `${document} → ${target}: no heading #${fragment} in ${file}`;
}

describe('the documentation', () => {
  it('makes the anchors GitHub makes', () => {
    const anchors = headingAnchors(
      "# Routing: how taskgate picks\n## CPU engine (llama-cpp)\n## A project's pooled prior\n## Notes\n## Notes\n```sh\n# not a heading\n```\n### `npm run bench` and **more**\n",
    );
    expect([...anchors]).toEqual([
      'routing-how-taskgate-picks',
      'cpu-engine-llama-cpp',
      'a-projects-pooled-prior',
      'notes',
      'notes-1',
      'npm-run-bench-and-more',
    ]);
    expect(linkTargets('[a](b.md#c) `[x](not-a-link.md)` ![i](images/d.png)\n```\n[y](nor-this.md)\n```\n')).toEqual([
      'b.md#c',
      'images/d.png',
    ]);
  });

  it('links only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const document of documents) {
      for (const target of linkTargets(readFileSync(document, 'utf8'))) {
        const problem = brokenLink(document, target);
        if (problem !== null) broken.push(problem);
      }
    }
    expect(broken).toEqual([]);
  });

  it('the README sends no one to design notes that are not in the repository', () => {
    expect(readFileSync('README.md', 'utf8')).not.toMatch(/DESIGN/);
  });
});
