import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UPWARD_IMPORTS, placeOf } from './layers.config.js';

/*
 * Layering: the floors of src/ are the table in layers.config.js, and the rule `layers/floors`
 * below is generated from it. It resolves every relative import of a file under src/ (static,
 * dynamic, re-exports, `import type` and `import('…')` types alike: a type ties modules together
 * too) to the file it names and compares the two floors: an import that points up, or across to
 * another place on the same floor, fails unless UPWARD_IMPORTS lists it; a file whose folder has no
 * place fails until it is placed. Tests beside the code are outside the floors.
 */
const SRC = join(dirname(fileURLToPath(import.meta.url)), 'src');
const CODE = /\.(d\.)?[cm]?[jt]sx?$/;
const srcPath = (file) => relative(SRC, file).split(sep).join('/');
const bare = (path) => path.replace(CODE, '');
const allowedUpward = new Set(UPWARD_IMPORTS.map(({ from, to }) => `${bare(from)} -> ${bare(to)}`));
const where = (place) => `${place.place} (floor ${place.floor})`;

const floors = {
  meta: {
    type: 'problem',
    docs: { description: 'Imports under src/ point down the floors of layers.config.js.' },
    schema: [],
    messages: {
      unplaced:
        "src/{{path}} has no floor: place its folder (or the file) in layers.config.js's FLOORS before using it.",
      upward:
        'Imports point down: {{importer}} imports {{target}} above it. Move the code, or list the import in UPWARD_IMPORTS (layers.config.js) with its reason.',
      across:
        '{{importer}} imports {{target}} on the same floor: places on one floor are independent. Move one of them up a floor in layers.config.js.',
    },
  },
  create(context) {
    const path = srcPath(context.physicalFilename);
    if (path.startsWith('..') || !CODE.test(path) || /\.test\.tsx?$/.test(path)) return {};
    const importer = placeOf(path);
    const check = (source) => {
      if (source?.type !== 'Literal' || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
      const target = srcPath(join(dirname(context.physicalFilename), source.value));
      if (target.startsWith('..') || (extname(target) && !CODE.test(target))) return;
      const place = placeOf(target);
      if (!place || place === importer || allowedUpward.has(`src/${bare(path)} -> src/${bare(target)}`)) return;
      const data = { importer: `src/${path} on ${where(importer)}`, target: `src/${target} on ${where(place)}` };
      if (place.floor > importer.floor) context.report({ node: source, messageId: 'upward', data });
      else if (place.floor === importer.floor && place.folder !== importer.folder) {
        context.report({ node: source, messageId: 'across', data });
      }
    };
    if (!importer) {
      return {
        Program: (node) => context.report({ node, loc: { line: 1, column: 0 }, messageId: 'unplaced', data: { path } }),
      };
    }
    return {
      ImportDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source),
      TSImportType: (node) => check(node.argument?.type === 'TSLiteralType' ? node.argument.literal : node.argument),
    };
  },
};

const NO_TEST_CODE = { regex: '^(\\.\\./)+(test|bench)/', message: 'Code under src/ never imports test/ or bench/.' };

/** Browser code reaches the server only for schemas and pure constants (anything else as a type). */
const BROWSER = [
  {
    regex: '^(\\.\\./)+(db|engine|mail)/',
    message: 'Browser code never imports the database, the engine or the mail layer.',
  },
  {
    regex: '^(\\.\\./)+(services|main|app|cli|config)\\.js$|\\.(service|repository|routes)\\.js$',
    message: 'Browser code never imports server wiring, services, repositories or routes.',
  },
  {
    regex:
      '^(\\.\\./)+(http|templates|workspaces|mailboxes|interactions|stats|verdicts)/(?!.*\\.schemas\\.js$)(?!warmup-settings\\.js$)(?!render\\.js$)(?!roles\\.js$)',
    allowTypeImports: true,
    message: 'Browser code imports only *.schemas.ts and pure constant modules of the server (others as types).',
  },
];

/** Rules on top of the floors for some files (and no test or bench code anywhere in src/). */
function restrict(name, files, patterns, ignores = []) {
  return {
    name: `layering/${name}`,
    files,
    ignores: ['src/**/*.test.ts', ...ignores],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [...patterns, NO_TEST_CODE] }] },
  };
}

export const layering = [
  {
    name: 'layering/floors',
    files: ['src/**/*.{ts,tsx,mts,cts,js,mjs,cjs}'],
    ignores: ['src/**/*.test.ts', 'src/**/*.test.tsx'],
    plugins: { layers: { rules: { floors } } },
    rules: { 'layers/floors': 'error' },
  },
  // Each later entry replaces the options of an earlier one for its files, so each repeats NO_TEST_CODE.
  restrict('src', ['src/**'], []),
  // The table types use the contract's unions (statuses, types, placements): one definition of each.
  restrict(
    'table-types',
    ['src/db/schema.ts'],
    [
      {
        regex: '\\.schemas\\.js$',
        allowTypeImports: true,
        message: 'The table types import only the contract (*.schemas.ts), and only its types.',
      },
    ],
  ),
  restrict(
    'engine',
    ['src/engine/**'],
    [
      {
        regex: '\\.(routes|service)\\.js$',
        message: 'The engine takes routes and services as narrow dependencies (EngineDeps), never by import.',
      },
    ],
  ),
  restrict('dashboard', ['src/dashboard/**'], BROWSER, [
    'src/dashboard/dashboard.routes.ts',
    'src/dashboard/vite.config.ts',
    'src/dashboard/ensure-built.mjs',
  ]),
  restrict(
    'dashboard-pages',
    ['src/dashboard/pages/**'],
    [
      { regex: '^\\./|^\\.\\./pages/', message: 'A page never imports another page: shared parts go to components/.' },
      ...BROWSER,
    ],
  ),
];

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'dist/', 'src/dashboard/dist/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  ...layering,
);
