import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { FLOORS, placeOf, UPWARD_IMPORTS } from '../../layers.config.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const eslint = new ESLint({ cwd: root });

/** The errors of one rule ESLint reports for `code` as if it were the file at `path` (nothing is written). */
async function errorsOf(rule: string, path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${code}\nexport const used = value;\n`, { filePath: `${root}${path}` });
  return result.messages.filter((message) => message.ruleId === rule).map((message) => message.message);
}
const floorErrors = (path: string, code: string) => errorsOf('layers/floors', path, code);
const layeringErrors = (path: string, code: string) => errorsOf('@typescript-eslint/no-restricted-imports', path, code);

/** A file of each place of the table (under src/), to import from or to write in. */
function fileIn(place: string, name: string): string {
  if (place.includes('*')) return place.replace('*/*', `stats/${name}`);
  return /\.[cm]?[jt]sx?$/.test(place) ? place : `${place}/${name}.ts`;
}
/** How `importer` names `target` (both under src/) in an import: relative, with a `.js` suffix. */
function specifier(importer: string, target: string): string {
  const path = posix.relative(posix.dirname(importer), target).replace(/\.[cm]?[jt]sx?$/, '.js');
  return path.startsWith('.') ? path : `./${path}`;
}

describe('the floors of layers.config.js', () => {
  it('fails a back-reference from every place to the floor above it and to the top', async () => {
    const bare = (path: string) => path.replace(/\.[cm]?[jt]sx?$/, '');
    const listed = new Set(UPWARD_IMPORTS.map(({ from, to }) => `${bare(from)} -> ${bare(to)}`));
    const passed: string[] = [];
    for (const [floor, places] of FLOORS.entries()) {
      for (const place of places) {
        const importer = fileIn(place, 'back-reference');
        // The next floor is the nearest back-reference; the top floor, the farthest.
        for (const above of floor + 1 < FLOORS.length ? [...FLOORS[floor + 1], ...FLOORS.at(-1)!] : []) {
          const target = fileIn(above, 'target');
          if (listed.has(`src/${bare(importer)} -> src/${bare(target)}`)) continue;
          const errors = await floorErrors(
            `src/${importer}`,
            `import { value } from '${specifier(importer, target)}';`,
          );
          if (!errors.some((error) => error.includes('Imports point down'))) passed.push(`${importer} -> ${target}`);
        }
      }
    }
    expect(passed).toEqual([]);
  });

  it('fails the back-references the old rule let through', async () => {
    expect(
      await floorErrors('src/mail/back-reference.ts', "import { value } from '../webhooks/webhooks.service.js';"),
    ).toEqual([expect.stringContaining('src/webhooks/webhooks.service.js on webhooks (floor 13) above it')]);
    expect(
      await floorErrors('src/db/back-reference.ts', "import { value } from '../checks/checks.service.js';"),
    ).toEqual([expect.stringContaining('Imports point down')]);
    expect(
      await floorErrors('src/dashboard/components/card.tsx', "import { value } from '../pages/overview.js';"),
    ).toEqual([expect.stringContaining('Imports point down')]);
  });

  it('fails every form of import: types, re-exports, dynamic imports and import types', async () => {
    const path = 'src/mailboxes/back-reference.ts';
    for (const code of [
      "import type { value } from '../engine/engine.js';",
      "export { value } from '../engine/engine.js';",
      "export * from '../engine/engine.js'; const value = 1;",
      "const value = await import('../engine/engine.js');",
      "type Engine = import('../engine/engine.js').Engine; const value: Engine | 1 = 1;",
    ]) {
      expect(await floorErrors(path, code), code).toEqual([expect.stringContaining('Imports point down')]);
    }
  });

  it('fails an import across to another place on the same floor', async () => {
    expect(
      await floorErrors('src/interactions/across.ts', "import { value } from '../workspaces/workspaces.service.js';"),
    ).toEqual([expect.stringContaining('on the same floor')]);
  });

  it('fails a file in a folder, or a root file, that has no floor yet', async () => {
    for (const path of ['src/billing/billing.service.ts', 'src/tenancy.ts', 'src/dashboard/widgets/card.tsx']) {
      expect(placeOf(path.slice('src/'.length))).toBeUndefined();
      expect(await floorErrors(path, 'const value = 1;'), path).toEqual([
        expect.stringContaining('has no floor: place its folder (or the file) in layers.config.js'),
      ]);
    }
  });

  it('lets each place import what lies below it, and its own folder', async () => {
    const allowed: Array<[string, string]> = [
      ['src/engine/ok.ts', "import { value } from '../calendar.js';"],
      ['src/mailboxes/ok.ts', "import { value } from '../interactions/interactions.schemas.js';"],
      ['src/dashboard/pages/ok.tsx', "import { value } from '../../mailboxes/warmup-settings.js';"],
      ['src/dashboard/pages/ok.tsx', "import { value } from '../components/ui.js';"],
      ['src/checks/blocklists.ts', "import { value } from './dns-resolver.js';"],
      ['src/checks/ok.ts', "import { value } from './blocklists.js';"],
      ['src/db/schema.ts', "import type { value } from '../mailboxes/mailboxes.schemas.js';"],
      ['src/cli.ts', "const value = await import('./main.js');"],
    ];
    for (const [path, code] of allowed) expect(await floorErrors(path, code), `${path}: ${code}`).toEqual([]);
  });
});

describe('the rules on top of the floors', () => {
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
    expect(
      await layeringErrors('src/dashboard/pages/ok.tsx', "import type { value } from '../../http/errors.js';"),
    ).toEqual([]);
  });

  it('fails the table types importing the contract by value', async () => {
    expect(
      await layeringErrors('src/db/schema.ts', "import { value } from '../mailboxes/mailboxes.schemas.js';"),
    ).toEqual([expect.stringContaining('only its types')]);
  });

  it('fails the engine importing a service file', async () => {
    expect(
      await layeringErrors(
        'src/engine/back-reference.ts',
        "import { value } from '../mailboxes/mailboxes.service.js';",
      ),
    ).toEqual([expect.stringContaining('never by import')]);
  });

  it('fails code under src/ importing test code', async () => {
    for (const path of ['src/stats/helper.ts', 'src/engine/helper.ts', 'src/dashboard/pages/helper.tsx']) {
      expect(
        await layeringErrors(
          path,
          `import { value } from '${specifier(path.slice(4), '../test/helpers/test-app.js')}';`,
        ),
        path,
      ).toContainEqual(expect.stringContaining('never imports test/'));
    }
  });
});
