// No file over 700 lines (DESIGN.md, house style): a file that long holds more than one thing, and
// is split along its seams instead. Checked over every source, test and bench file git knows of or
// would add (tracked, or new and not ignored), so generated output and node_modules stay out.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const MAX_LINES = 700;
const repo = fileURLToPath(new URL('../../', import.meta.url));
const FOLDERS = ['src', 'test', 'bench', 'bin'];
const CODE = /\.(ts|tsx|js|mjs|cjs)$/;

function codeFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z', ...FOLDERS], {
    cwd: repo,
    encoding: 'utf8',
  });
  return listed.split('\0').filter((file) => CODE.test(file) && fs.existsSync(path.join(repo, file)));
}

/** Lines as `wc -l` and an editor count them: a final newline does not start another line. */
function lineCount(file: string): number {
  const text = fs.readFileSync(path.join(repo, file), 'utf8');
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

describe('file size', () => {
  it('finds the code it is meant to check', () => {
    const files = codeFiles();
    expect(files).toContain('src/main.ts');
    expect(files).toContain('test/foundation/file-size.test.ts');
    expect(files).toContain('bin/warmup.js');
    expect(files.some((file) => file.startsWith('node_modules/') || file.startsWith('dist/'))).toBe(false);
  });

  it(`keeps every source, test and bench file at ${MAX_LINES} lines or fewer`, () => {
    const tooLong = codeFiles()
      .map((file) => ({ file, lines: lineCount(file) }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    expect(tooLong, `split these files along their seams (at most ${MAX_LINES} lines each)`).toEqual([]);
  });
});
