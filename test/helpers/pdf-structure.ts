// What a PDF's pages and tags look like to a reader: each word's box as poppler lays it out
// (pdftotext -bbox-layout), whatever poppler warned on stderr, and the marked-content operators
// of every content stream with the document's structure tree.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { inflateSync } from 'node:zlib';

export interface WordBox {
  page: number;
  text: string;
  xMin: number;
  yMin: number;
  xMax: number;
  yMax: number;
}

/** Every word of every page with its box, and what pdftotext printed on stderr (warnings). */
export async function pdfWordBoxes(pdf: Buffer): Promise<{ words: WordBox[]; warnings: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'warmup-report-'));
  try {
    await writeFile(path.join(dir, 'report.pdf'), pdf);
    const { stdout, stderr } = await promisify(execFile)(
      'pdftotext',
      ['-bbox-layout', path.join(dir, 'report.pdf'), '-'],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    const words: WordBox[] = [];
    let page = 0;
    for (const match of stdout.matchAll(
      /<page\b|<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g,
    )) {
      if (match[0] === '<page') {
        page++;
        continue;
      }
      words.push({
        page,
        text: match[5]!,
        xMin: Number(match[1]),
        yMin: Number(match[2]),
        xMax: Number(match[3]),
        yMax: Number(match[4]),
      });
    }
    return { words, warnings: stderr };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Pairs of words on one page drawn over each other or crowded onto each other: their boxes share
 * more than a point across and come closer than `gap` points down (overlapping boxes count as a
 * negative distance). poppler's word box spans the font's ascent and descent, so lines set at the
 * font's own line height keep about 2 points apart at the report's sizes; a subtitle that wraps
 * into the next line keeps less than one.
 */
export function crowdedWords(words: WordBox[], gap = 1): Array<[WordBox, WordBox]> {
  const pairs: Array<[WordBox, WordBox]> = [];
  const byPage = new Map<number, WordBox[]>();
  for (const word of words) byPage.set(word.page, [...(byPage.get(word.page) ?? []), word]);
  for (const pageWords of byPage.values()) {
    const sorted = [...pageWords].sort((a, b) => a.yMin - b.yMin);
    for (let i = 0; i < sorted.length; i++) {
      const a = sorted[i]!;
      for (let j = i + 1; j < sorted.length && sorted[j]!.yMin < a.yMax + gap; j++) {
        const b = sorted[j]!;
        const across = Math.min(a.xMax, b.xMax) - Math.max(a.xMin, b.xMin);
        if (across <= 1) continue;
        // words of one line side by side never share width; the same line twice is text over text
        const apart = Math.max(a.yMin, b.yMin) - Math.min(a.yMax, b.yMax);
        if (apart < gap) pairs.push([a, b]);
      }
    }
  }
  return pairs;
}

export interface MarkedContentReport {
  /** Per page content stream: the tags opened (BDC/BMC) and closed (EMC), and whether an EMC ever came with none open. */
  streams: Array<{ opened: number; closed: number; underflow: boolean }>;
  /** The catalog names a structure tree root and says the document is marked. */
  hasStructTree: boolean;
  marked: boolean;
  /** Structure elements (a type /S and a parent /P) in the file. */
  structElements: number;
}

/** Reads the raw objects of a PDF (as pdfkit writes them: one object per `n 0 obj`, Flate streams). */
export function markedContent(pdf: Buffer): MarkedContentReport {
  const text = pdf.toString('latin1');
  const objects = new Map<number, { dict: string; stream?: Buffer }>();
  for (const match of text.matchAll(/(\d+) 0 obj\s*([\s\S]*?)endobj/g)) {
    const body = match[2]!;
    const at = body.indexOf('stream');
    if (at < 0) {
      objects.set(Number(match[1]), { dict: body });
      continue;
    }
    const dict = body.slice(0, at);
    let start = at + 'stream'.length;
    if (body[start] === '\r') start++;
    if (body[start] === '\n') start++;
    const end = body.lastIndexOf('endstream');
    let raw = Buffer.from(body.slice(start, end), 'latin1');
    if (/\/Filter\s*\/FlateDecode/.test(dict)) raw = inflateSync(raw);
    objects.set(Number(match[1]), { dict, stream: raw });
  }
  const contentRefs = new Set<number>();
  let hasStructTree = false;
  let marked = false;
  let structElements = 0;
  for (const { dict } of objects.values()) {
    if (/\/Type\s*\/Page\b(?!s)/.test(dict)) {
      const contents = /\/Contents\s*(\[[^\]]*\]|\d+ 0 R)/.exec(dict)?.[1] ?? '';
      for (const ref of contents.matchAll(/(\d+) 0 R/g)) contentRefs.add(Number(ref[1]));
    }
    if (/\/Type\s*\/Catalog/.test(dict)) {
      hasStructTree = /\/StructTreeRoot\s+\d+ 0 R/.test(dict);
      // the mark information inline, or in an object of its own
      const markInfoRef = /\/MarkInfo\s+(\d+) 0 R/.exec(dict)?.[1];
      const markInfo = markInfoRef ? (objects.get(Number(markInfoRef))?.dict ?? '') : dict;
      marked = /\/Marked\s+true/.test(markInfo);
    }
    // a structure element: its type (/S) and its parent (/P); /Type /StructElem is optional
    if (/\/S\s*\/\w+/.test(dict) && /\/P\s+\d+ 0 R/.test(dict)) structElements++;
  }
  const streams = [...contentRefs]
    .sort((a, b) => a - b)
    .map((ref) => {
      const content = objects.get(ref)?.stream?.toString('latin1') ?? '';
      let depth = 0;
      let opened = 0;
      let closed = 0;
      let underflow = false;
      // operators stand alone between whitespace; strings in (...) never hold these words as tokens here
      for (const token of content.split(/\s+/)) {
        if (token === 'BDC' || token === 'BMC') {
          opened++;
          depth++;
        } else if (token === 'EMC') {
          closed++;
          depth--;
          if (depth < 0) underflow = true;
        }
      }
      return { opened, closed, underflow };
    });
  return { streams, hasStructTree, marked, structElements };
}
