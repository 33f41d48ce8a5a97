import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const eslint = new ESLint({ cwd: root });

/** The layering errors ESLint reports for `code` as if it were the file at `path` (nothing is written). */
async function layeringErrors(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${code}\nexport const used = value;\n`, { filePath: `${root}${path}` });
  return result.messages
    .filter((message) => message.ruleId === '@typescript-eslint/no-restricted-imports')
    .map((message) => message.message);
}

describe('the layering rule in eslint.config.js', () => {
  it('fails a back-reference from the API contract into the engine', async () => {
    const errors = await layeringErrors(
      'src/mailboxes/back-reference.ts',
      "import { value } from '../engine/engine.js';",
    );
    expect(errors).toEqual([expect.stringContaining('never import the engine')]);
  });

  it('fails the foundation importing a domain folder', async () => {
    const errors = await layeringErrors('src/db/back-reference.ts', "import { value } from '../stats/period.js';");
    expect(errors).toEqual([expect.stringContaining('imports no domain folder')]);
  });

  it('fails the engine importing a service file or stats', async () => {
    expect(
      await layeringErrors(
        'src/engine/back-reference.ts',
        "import { value } from '../mailboxes/mailboxes.service.js';",
      ),
    ).toEqual([expect.stringContaining('never by import')]);
    expect(await layeringErrors('src/engine/back-reference.ts', "import { value } from '../stats/period.js';")).toEqual(
      [expect.stringContaining('neither stats/')],
    );
  });

  it('fails a dashboard page importing another page, or server code by value', async () => {
    expect(await layeringErrors('src/dashboard/pages/page.tsx', "import { value } from './overview.js';")).toEqual([
      expect.stringContaining('never imports another page'),
    ]);
    expect(
      await layeringErrors('src/dashboard/pages/page.tsx', "import { value } from '../../http/errors.js';"),
    ).toEqual([expect.stringContaining('pure constant modules')]);
    expect(await layeringErrors('src/dashboard/api.ts', "import { value } from '../engine/planner.js';")).toEqual([
      expect.stringContaining('never imports the database, the engine'),
    ]);
  });

  it('fails code under src/ importing test code', async () => {
    expect(
      await layeringErrors('src/stats/helper.ts', "import { value } from '../../test/helpers/test-app.js';"),
    ).toEqual([expect.stringContaining('never imports test/')]);
  });

  it('lets each layer import what lies below it', async () => {
    expect(await layeringErrors('src/engine/ok.ts', "import { value } from '../calendar.js';")).toEqual([]);
    expect(
      await layeringErrors('src/mailboxes/ok.ts', "import { value } from '../interactions/interactions.schemas.js';"),
    ).toEqual([]);
    expect(
      await layeringErrors('src/dashboard/pages/ok.tsx', "import { value } from '../../mailboxes/warmup-settings.js';"),
    ).toEqual([]);
    expect(
      await layeringErrors('src/dashboard/pages/ok.tsx', "import type { value } from '../../http/errors.js';"),
    ).toEqual([]);
  });
});
