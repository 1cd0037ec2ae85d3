import fs from 'node:fs';
import path from 'node:path';
import { build } from 'rolldown';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { compile, compilers, fileName, runNode, source, writeProject } from './consumer-project.js';
import { snippets } from './snippets.js';

/**
 * TypeScript users of the installed tarballs: `module: node16` with .mts (ESM) and .cts (CommonJS)
 * files side by side, and `moduleResolution: bundler`. Each compiles with strict settings and
 * without skipLibCheck (our declarations are checked as the user's compiler reads them), then runs;
 * the bundler project's output also runs bundled by rolldown (the bundler vite uses). TypeScript 7
 * (the native compiler) compiles the same files with its own defaults, for `nodenext` and
 * `bundler`: once with `types: ['node']` for the snippets' own Node code, and once an import of
 * every entry of every package's exports map (subpaths too) with nothing listed at all, so that what our declarations need from Node's types or
 * a `lib` they state themselves.
 */
const root = inject('consumerRoot');
const env = { TICKWHEEL_REDIS_SOCKET: inject('redisSocket') };

const compilerOptions = {
  target: 'ES2022',
  lib: ['ES2023'],
  types: ['node'],
  strict: true,
  skipLibCheck: false,
  outDir: 'out',
};

describe('a TypeScript project with module: node16 (.mts and .cts files)', () => {
  const dir = path.join(root, 'ts-node16');

  beforeAll(() => {
    writeProject(dir, {
      'tsconfig.json': JSON.stringify({
        compilerOptions: { ...compilerOptions, module: 'node16', moduleResolution: 'node16' },
      }),
      'package.json': JSON.stringify({ type: 'commonjs' }),
      ...Object.fromEntries(
        snippets.flatMap((snippet) => [
          [`${fileName(snippet)}.mts`, source(snippet, 'ts')],
          [`${fileName(snippet)}.cts`, source(snippet, 'ts')],
        ]),
      ),
    });
    compile(dir);
  });

  for (const snippet of snippets) {
    it(`compiles and runs ${snippet.entry} from an .mts file`, () => {
      expect(runNode(path.join(dir, 'out', `${fileName(snippet)}.mjs`), env)).toEqual(snippet.expected);
    });
    it(`compiles and runs ${snippet.entry} from a .cts file`, () => {
      expect(runNode(path.join(dir, 'out', `${fileName(snippet)}.cjs`), env)).toEqual(snippet.expected);
    });
  }
});

describe('a TypeScript project with moduleResolution: bundler', () => {
  const dir = path.join(root, 'ts-bundler');

  beforeAll(() => {
    writeProject(dir, {
      'tsconfig.json': JSON.stringify({
        compilerOptions: { ...compilerOptions, module: 'esnext', moduleResolution: 'bundler' },
      }),
      'package.json': JSON.stringify({ type: 'module' }),
      ...Object.fromEntries(snippets.map((snippet) => [`${fileName(snippet)}.ts`, source(snippet, 'ts')])),
    });
    compile(dir);
  });

  for (const snippet of snippets) {
    it(`compiles and runs ${snippet.entry}`, () => {
      expect(fs.existsSync(path.join(dir, 'out', `${fileName(snippet)}.js`))).toBe(true);
      expect(runNode(path.join(dir, 'out', `${fileName(snippet)}.js`), env)).toEqual(snippet.expected);
    });

    it(`runs ${snippet.entry} bundled by rolldown, our packages inlined and the peers external`, async () => {
      const bundle = path.join(dir, 'bundle', `${fileName(snippet)}.mjs`);
      await build({
        input: path.join(dir, 'out', `${fileName(snippet)}.js`),
        cwd: dir,
        platform: 'node',
        external: (id) => !id.startsWith('@tickwheel/') && !id.startsWith('.') && !path.isAbsolute(id),
        output: { file: bundle, format: 'esm' },
        logLevel: 'warn',
      });
      const code = fs.readFileSync(bundle, 'utf8');
      expect(code).not.toMatch(/^import [^\n]*['"]@tickwheel\//m);
      expect(code).not.toMatch(/require\(['"]@tickwheel\//);
      expect(runNode(bundle, env)).toEqual(snippet.expected);
    });
  }
});

/** Every entry a package exports (`.` and each subpath but `./package.json`), read from each packages/<name>/package.json. */
function exportedEntries(): string[] {
  const packages = path.resolve(import.meta.dirname, '../../packages');
  return fs
    .readdirSync(packages)
    .filter((name) => fs.existsSync(path.join(packages, name, 'package.json')))
    .flatMap((name) => {
      const manifest = JSON.parse(fs.readFileSync(path.join(packages, name, 'package.json'), 'utf8')) as {
        name: string;
        exports: Record<string, unknown>;
      };
      return Object.keys(manifest.exports)
        .filter((subpath) => subpath !== './package.json')
        .map((subpath) => (subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`));
    })
    .sort();
}

describe('TypeScript 7 with its defaults (strict, the DOM lib, no @types unless listed), without skipLibCheck', () => {
  const tsc = compilers['TypeScript 7'];
  const entries = [...new Set(snippets.map((snippet) => snippet.entry))];
  const exported = exportedEntries();
  const settings = {
    nodenext: { module: 'nodenext' },
    bundler: { module: 'esnext', moduleResolution: 'bundler' },
  };

  it('imports every entry the packages export, subpaths included', () => {
    expect(exported).toEqual(expect.arrayContaining([...entries, '@tickwheel/core/internal', '@tickwheel/http/koa']));
  });

  for (const [name, moduleOptions] of Object.entries(settings)) {
    /** The files of a project: ESM and CommonJS side by side for nodenext, plain .ts for bundler. */
    const files = (text: (key: string, index: number) => string, keys: string[]) =>
      Object.fromEntries(
        keys.flatMap((key, index) =>
          name === 'bundler'
            ? [[`${index}.ts`, text(key, index)]]
            : [
                [`${index}.mts`, text(key, index)],
                [`${index}.cts`, text(key, index)],
              ],
        ),
      );

    it(`compiles every snippet (module ${name}, types: ['node'] for the snippets' own Node code)`, () => {
      const dir = path.join(root, `ts7-${name}`);
      const byEntry = new Map(snippets.map((snippet) => [snippet.entry, snippet]));
      writeProject(dir, {
        'tsconfig.json': JSON.stringify({ compilerOptions: { ...moduleOptions, types: ['node'], noEmit: true } }),
        'package.json': JSON.stringify({ type: 'commonjs' }),
        ...files((entry) => source(byEntry.get(entry)!, 'ts'), entries),
      });
      expect(() => compile(dir, tsc)).not.toThrow();
    });

    it(`compiles an import of every exported entry with nothing in types (module ${name})`, () => {
      const dir = path.join(root, `ts7-${name}-no-types`);
      writeProject(dir, {
        'tsconfig.json': JSON.stringify({ compilerOptions: { ...moduleOptions, noEmit: true } }),
        'package.json': JSON.stringify({ type: 'commonjs' }),
        ...files(
          (entry, index) =>
            `import * as entry${index} from '${entry}';\nexport const names${index} = Object.keys(entry${index});\n`,
          exported,
        ),
      });
      expect(() => compile(dir, tsc)).not.toThrow();
    });
  }
});
