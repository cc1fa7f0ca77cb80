// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'fs',
  'fs/promises',
  'child_process',
  'net',
  'http',
  'https',
  'os',
  'path',
  'crypto',
  'process',
];

const deterministicMessage = 'Workflow and domain code must stay deterministic; do I/O in activities.';

/**
 * `dir`'s modules may not import the named layers (the first folder of a relative import, e.g. '../client/x'),
 * nor, inside src/domain, the domain folders named in `floorsAbove` (e.g. '../saga/x').
 */
function layer(dir, forbidden, { deterministic = false, allowTypeImports = false, floorsAbove = [] } = {}) {
  return {
    files: [`${dir}/**/*.ts`],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: deterministic
            ? [...nodeBuiltins, ...nodeBuiltins.map((m) => `node:${m}`)].map((name) => ({
                name,
                message: deterministicMessage,
              }))
            : [],
          patterns: [
            {
              regex: `^(?:\\.{1,2}/)+(?:${forbidden.join('|')})(?:/|$)`,
              message: `${dir} may import only the layers below it (docs/ARCHITECTURE.md).`,
              allowTypeImports,
            },
            ...(floorsAbove.length
              ? [
                  {
                    regex: `^(?:\\.\\./)+(?:${floorsAbove.join('|')})(?:/|$)`,
                    message: `${dir} may import only the domain folders below it (docs/ARCHITECTURE.md).`,
                  },
                ]
              : []),
          ],
        },
      ],
    },
  };
}

/** The layers above the domain: domain code imports none of them. */
const DOMAIN_ABOVE = ['activities', 'workflows', 'client', 'worker', 'chat', 'status', 'codec', 'http'];
/** The folders of src/domain, bottom to top (docs/ARCHITECTURE.md, "The domain's floors"). */
const DOMAIN_FLOORS = [
  'text',
  'contract',
  'config',
  'agents',
  'plan',
  'request',
  'planning',
  'fleet',
  'record',
  'delivery',
  'tracker',
  'saga',
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'tools/**', 'coverage/**', '.test-artifacts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // The layers (docs/ARCHITECTURE.md): each may import only those below it, so a wrong import fails `npm test`.
  layer('src/domain', DOMAIN_ABOVE, { deterministic: true }),
  // The domain's floors, bottom first: each folder may import only those before it (no domain cycle).
  ...DOMAIN_FLOORS.slice(0, -1).map((floor, i) =>
    layer(`src/domain/${floor}`, DOMAIN_ABOVE, {
      deterministic: true,
      floorsAbove: DOMAIN_FLOORS.slice(i + 1),
    }),
  ),
  // Workflows see activities only as types (proxyActivities); their code is replayed, so no Node I/O.
  layer('src/workflows', ['activities', 'client', 'worker', 'chat', 'status', 'codec', 'http'], {
    deterministic: true,
    allowTypeImports: true,
  }),
  layer('src/activities', ['client', 'worker', 'workflows']),
  layer('src/worker', ['client']),
  layer('src/chat', ['activities', 'workflows', 'client', 'worker', 'status']),
  layer('src/status', ['activities', 'workflows', 'client', 'worker', 'chat']),
  layer('src/codec', ['activities', 'workflows', 'client', 'worker', 'chat', 'status']),
  layer('src/http', ['activities', 'workflows', 'client', 'worker', 'chat', 'status', 'codec']),
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: {
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        console: 'readonly',
        __dirname: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  // The saga board's page (src/client/board/public): browser ES modules served as they are, no build step.
  {
    files: ['src/client/board/public/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: {
        window: 'readonly',
        document: 'readonly',
        fetch: 'readonly',
        EventSource: 'readonly',
        sessionStorage: 'readonly',
        location: 'readonly',
        URLSearchParams: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
      },
    },
  },
);
