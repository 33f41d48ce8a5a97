// The text of a PDF as a reader sees it (poppler's pdftotext), whitespace runs as one space.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

export async function pdfText(pdf: Buffer): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'warmup-report-'));
  try {
    await writeFile(path.join(dir, 'report.pdf'), pdf);
    const { stdout } = await promisify(execFile)('pdftotext', ['-layout', path.join(dir, 'report.pdf'), '-']);
    return stdout.replace(/\s+/g, ' ');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
