import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(full);
    return entry.name.endsWith('.md') ? [full] : [];
  });
}

const FILES = [
  path.join(ROOT, 'README.md'),
  path.join(ROOT, 'BENCHMARKS.md'),
  ...markdownFiles(path.join(ROOT, 'docs')),
];

/** The text outside fenced code blocks and inline code, where links and headings are. */
function prose(markdown: string): string[] {
  let fenced = false;
  return markdown.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line.replace(/`[^`]*`/g, (code) => (code.length > 2 ? 'code' : ''));
  });
}

/** GitHub's anchor for a heading: its text, lower-cased, without punctuation, spaces as hyphens. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/[*_]{1,3}([^*_]+)[*_]{1,3}/g, '$1');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a Markdown file has: one per heading (repeats get -1, -2 …) and explicit ids. */
function anchors(file: string): Set<string> {
  const markdown = readFileSync(file, 'utf8');
  const found = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1]!);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      found.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const id of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(id[1]!);
  }
  return found;
}

interface Link {
  file: string;
  line: number;
  target: string;
}

function links(file: string): Link[] {
  const found: Link[] = [];
  prose(readFileSync(file, 'utf8')).forEach((text, index) => {
    const targets = [
      ...[...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]!),
      ...[...text.matchAll(/^\s*\[[^\]]+\]:\s+(\S+)/g)].map((match) => match[1]!),
      ...[...text.matchAll(/<(?:img|a)\s[^>]*(?:src|href)="([^"]+)"/g)].map((match) => match[1]!),
    ];
    for (const target of targets) found.push({ file, line: index + 1, target });
  });
  return found.filter((link) => !/^[a-z][a-z0-9+.-]*:/i.test(link.target));
}

/** Why a relative link does not resolve, or undefined when it does. */
function broken({ file, target }: Link): string | undefined {
  const [pathPart, fragment] = target.split('#', 2) as [string, string | undefined];
  const destination = pathPart === '' ? file : path.resolve(path.dirname(file), decodeURIComponent(pathPart));
  if (!existsSync(destination)) return 'no such file';
  if (fragment === undefined || fragment === '') return undefined;
  if (statSync(destination).isDirectory() || !destination.endsWith('.md'))
    return 'an anchor into a file without headings';
  return anchors(destination).has(decodeURIComponent(fragment).toLowerCase()) ? undefined : 'no such heading';
}

describe('links in README.md, BENCHMARKS.md and docs/', () => {
  it('finds the pages and their links', () => {
    expect(FILES.length).toBeGreaterThan(15);
    expect(FILES.flatMap(links).length).toBeGreaterThan(100);
  });

  it('resolves every relative link to a file, and every #anchor to a heading of it', () => {
    const failures = FILES.flatMap(links)
      .map((link) => ({ link, why: broken(link) }))
      .filter(({ why }) => why !== undefined)
      .map(({ link, why }) => `${path.relative(ROOT, link.file)}:${link.line}: ${link.target} (${why})`);
    expect(failures).toEqual([]);
  });

  it('makes anchors the way GitHub does', () => {
    expect(slug('Sign-in with Google and Microsoft (OAuth)')).toBe('sign-in-with-google-and-microsoft-oauth');
    expect(slug('Scale: work is claimed, not scanned (`claims`)')).toBe('scale-work-is-claimed-not-scanned-claims');
    expect(slug("The engine's rules")).toBe('the-engines-rules');
    expect(slug('Statistics at 10,000 mailboxes × 90 days')).toBe('statistics-at-10000-mailboxes--90-days');
    expect(slug('The `warmup` command')).toBe('the-warmup-command');
  });
});
