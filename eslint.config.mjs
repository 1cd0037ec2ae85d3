// ESLint for the whole repo: `npm run lint`. TypeScript is linted with type information from
// tsconfig.test.json (sources and tests); JavaScript (examples, benchmarks, scripts) without it.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * The layer rules, as lint that fails (issue 30): which files may import which. Each entry is one
 * set of files and the imports they must not make, with the reason in the message.
 */
const ADAPTERS = ['fetch', 'grpc', 'http', 'redis', 'ws'];
const CORE_FOLDERS = ['kit', 'clocks', 'wheel', 'deadlines'];

/** `no-restricted-imports` patterns forbidding each of `names` as relative paths from a core folder. */
function coreFolders(names, message) {
  return names.map((name) => ({ group: [`../${name}/*`, `./${name}/*`], message }));
}

const layerRules = [
  // Adapters depend on core, never on each other or on the metrics bridge.
  ...ADAPTERS.map((adapter) => ({
    files: [`packages/${adapter}/src/**/*.ts`],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [...ADAPTERS.filter((other) => other !== adapter), 'otel'].flatMap((other) => [
                `@tickwheel/${other}`,
                `@tickwheel/${other}/*`,
                `**/packages/${other}/**`,
              ]),
              message: 'Adapters depend on @tickwheel/core only, never on each other.',
            },
          ],
        },
      ],
    },
  })),
  {
    // The metrics bridge subscribes to every adapter's channels by name: their message types only.
    files: ['packages/otel/src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ADAPTERS.flatMap((adapter) => [`@tickwheel/${adapter}`, `@tickwheel/${adapter}/*`]),
              allowTypeImports: true,
              message: "The metrics bridge reads the adapters' message types only (import type).",
            },
          ],
        },
      ],
    },
  },
  {
    // Core never reaches an adapter.
    files: ['packages/core/src/**/*.ts'],
    ignores: ['packages/core/src/{kit,clocks,wheel,deadlines}/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@tickwheel/*'], message: 'Core never imports an adapter.' }] },
      ],
    },
  },
  {
    // The leaf kit imports nothing above it: node built-ins and its own files only.
    files: ['packages/core/src/kit/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['../*', '@tickwheel/*'], message: "The kit is core's leaf: it imports nothing above it." },
          ],
        },
      ],
    },
  },
  {
    // The Clock contract, the system clock and the manual clock sit below the wheel.
    files: ['packages/core/src/clocks/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            ...coreFolders(
              CORE_FOLDERS.filter((f) => f !== 'kit' && f !== 'clocks'),
              'Clocks sit below the wheel: they import the kit only.',
            ),
            { group: ['../*.js', '@tickwheel/*'], message: 'Clocks sit below the wheel: they import the kit only.' },
          ],
        },
      ],
    },
  },
  {
    // The wheel: the kit and the clocks below it, never deadlines, TimerSet or the entries.
    files: ['packages/core/src/wheel/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            ...coreFolders(['deadlines'], 'The wheel sits below deadlines and TimerSet.'),
            {
              group: ['../*.js', '@tickwheel/*'],
              message: 'The wheel sits below deadlines, TimerSet and the entries.',
            },
          ],
        },
      ],
    },
  },
  {
    // Deadlines: timed by the wheel, never by TimerSet, never reaching the entries.
    files: ['packages/core/src/deadlines/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ group: ['../*.js', '@tickwheel/*'], message: 'Deadlines use the wheel and the kit only.' }] },
      ],
    },
  },
  {
    // One seam per peer's internals (issue 37): ws's and net's private fields are read in
    // ws-internals.ts only, where each has a fallback and a test per ws version.
    files: ['packages/ws/src/**/*.ts'],
    ignores: ['packages/ws/src/ws-internals.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...[
          'MemberExpression[computed=false][property.name=/^_/]',
          'MemberExpression[computed=true][property.value=/^_/]',
          "BinaryExpression[operator='in'][left.value=/^_/]",
          'ObjectPattern > Property[key.name=/^_/]',
        ].map((selector) => ({
          selector,
          message:
            "A private field of ws or net: read it in packages/ws/src/ws-internals.ts (the one seam to ws's internals).",
        })),
      ],
    },
  },
  {
    // The fetch transport tap watches the body at the transport and never touches the Response.
    files: ['packages/fetch/src/transport-tap.ts', 'packages/fetch/src/tap-handlers.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'Response', message: "The transport tap never touches the Response (it watches undici's handler)." },
        { name: 'ReadableStream', message: 'The transport tap never touches the Response body stream.' },
      ],
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['./*', '!./tap-handlers.js', '@tickwheel/*'],
              message:
                "The transport tap knows undici's handler protocols only: not fetch, the Response, the timer or the wheel.",
            },
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "TSTypeReference[typeName.name='Response']",
          message: 'The transport tap never touches the Response.',
        },
      ],
    },
  },
];

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
  ...layerRules,
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
