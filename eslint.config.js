import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/*
 * Layering: which folder of src/ may import which, lowest layer first. A back-reference (a lower
 * layer importing a higher one) fails `npm run lint`. Import sources are relative paths, so a
 * folder is matched as a path segment. Tests beside the code are outside the layers.
 */
const folder = (...names) => `(^|/)(${names.join('|')})/`;
const DOMAIN = [
  'accounts',
  'templates',
  'workspaces',
  'mailboxes',
  'interactions',
  'stats',
  'verdicts',
  'engine',
  'dashboard',
];
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
      '^(\\.\\./)+(http|templates|workspaces|mailboxes|interactions|stats|verdicts)/(?!.*\\.schemas\\.js$)(?!warmup-settings\\.js$)(?!render\\.js$)',
    allowTypeImports: true,
    message: 'Browser code imports only *.schemas.ts and pure constant modules of the server (others as types).',
  },
];

/** One layer: these files may not import the listed patterns (nor test or bench code). */
function layer(name, files, patterns, ignores = []) {
  return {
    name: `layering/${name}`,
    files,
    ignores: ['src/**/*.test.ts', ...ignores],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [...patterns, NO_TEST_CODE] }] },
  };
}

export const layering = [
  layer(
    'foundation',
    ['src/clock.ts', 'src/calendar.ts', 'src/config.ts', 'src/db/**', 'src/http/**', 'src/mail/**', 'src/secrets/**'],
    [
      {
        regex: folder(...DOMAIN),
        message: 'The foundation (clock, calendar, config, db, http, mail, secrets) imports no domain folder.',
      },
    ],
    ['src/db/schema.ts'],
  ),
  // The table types use the contract's unions (statuses, types, placements): one definition of each.
  layer(
    'table-types',
    ['src/db/schema.ts'],
    [
      {
        regex: `${folder(...DOMAIN)}(?!.*\\.schemas\\.js$)`,
        message: 'The table types import only the contract (*.schemas.ts), and only its types.',
      },
      {
        regex: '\\.schemas\\.js$',
        allowTypeImports: true,
        message: 'The table types import only the contract (*.schemas.ts), and only its types.',
      },
    ],
  ),
  layer(
    'templates-workspaces',
    ['src/templates/**', 'src/workspaces/**'],
    [
      {
        regex: folder('mailboxes', 'interactions', 'stats', 'engine', 'dashboard'),
        message: 'templates/ and workspaces/ import only the foundation and each other.',
      },
    ],
  ),
  layer(
    'features',
    ['src/interactions/**', 'src/mailboxes/**', 'src/stats/**', 'src/verdicts/**'],
    [
      {
        regex: folder('engine', 'dashboard'),
        message: 'interactions/, mailboxes/, stats/ and verdicts/ never import the engine.',
      },
    ],
  ),
  layer(
    'engine',
    ['src/engine/**'],
    [
      { regex: folder('stats', 'dashboard'), message: 'The engine imports neither stats/ nor the dashboard.' },
      {
        regex: '\\.(routes|service)\\.js$',
        message: 'The engine takes routes and services as narrow dependencies (EngineDeps), never by import.',
      },
    ],
  ),
  layer('dashboard', ['src/dashboard/**'], BROWSER, [
    'src/dashboard/dashboard.routes.ts',
    'src/dashboard/vite.config.ts',
    'src/dashboard/ensure-built.mjs',
  ]),
  layer(
    'dashboard-pages',
    ['src/dashboard/pages/**'],
    [
      { regex: '^\\./|^\\.\\./pages/', message: 'A page never imports another page: shared parts go to components/.' },
      ...BROWSER,
    ],
  ),
  layer('top', ['src/*.ts'], [], ['src/clock.ts', 'src/calendar.ts', 'src/config.ts']),
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
