import fs from 'node:fs';
import path from 'node:path';
import { build } from 'rolldown';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { compile, fileName, runNode, source, writeProject } from './consumer-project.js';
import { snippets } from './snippets.js';

/**
 * TypeScript users of the installed tarballs: `module: node16` with .mts (ESM) and .cts (CommonJS)
 * files side by side, and `moduleResolution: bundler`. Each compiles with strict settings and
 * without skipLibCheck (our declarations are checked as the user's compiler reads them), then runs;
 * the bundler project's output also runs bundled by rolldown (the bundler vite uses).
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
