// ESLint for the whole repo: `npm run lint`. TypeScript is linted with type information from
// tsconfig.test.json (sources and tests); JavaScript (examples, benchmarks, scripts) without it.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      'docs/api/**',
      'coverage/**',
      'benchmarks/results/**',
      '.nx/**',
      '.redis-test/**',
    ],
  },
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: { project: './tsconfig.test.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-import-type-side-effects': 'error',
    },
  },
  {
    // Tests hand bad input to public functions on purpose (`as any`, loose casts of results).
    files: ['packages/*/test/**/*.ts', 'tests/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // @tickwheel/ws/browser runs in pages, workers, Deno, Bun and Node: nothing from Node, nothing
    // from core (its kit loads Node-only modules), nothing from the rest of the ws package.
    files: ['packages/ws/src/browser/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^(?!\\./)', message: 'src/browser imports only from src/browser (it has no Node).' }] },
      ],
      'no-restricted-globals': [
        'error',
        ...['process', 'Buffer', 'require', 'module', 'exports', '__dirname', '__filename', 'global'].map((name) => ({
          name,
          message: 'src/browser runs where Node does not: use what pages have (globalThis, TextEncoder, performance).',
        })),
        ...['setImmediate', 'clearImmediate', 'queueMicrotask'].map((name) => ({
          name,
          message: 'src/browser uses setTimeout only (through host.ts).',
        })),
      ],
    },
  },
  {
    files: ['**/*.{js,mjs,cjs}'],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
