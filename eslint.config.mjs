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
  {
    // Workflow code is replayed: it must stay deterministic, so no Node I/O modules.
    files: ['src/workflows/**/*.ts', 'src/domain/**/*.ts'],
    ignores: ['src/domain/node/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [...nodeBuiltins, ...nodeBuiltins.map((m) => `node:${m}`), 'simple-git'].map((name) => ({
            name,
            message: 'Workflow and domain code must stay deterministic; do I/O in activities.',
          })),
        },
      ],
    },
  },
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
);
