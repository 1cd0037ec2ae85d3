import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { writeProject } from './consumer-project.js';
import {
  codeBlocks,
  importedPackages,
  installedPackages,
  programLanguages,
  readmes,
  type CodeBlock,
} from './readme-blocks.js';

/**
 * Every code block of every README, as a user copies it into a fresh project that installed the
 * packed tarballs: each TypeScript or JavaScript block that is not marked `// fragment: <why>` on
 * its first line is a module of its own, type-checked with strict settings and without
 * skipLibCheck, with nothing added (no prelude, no globals beyond Node's types). A fragment is
 * listed with its reason. A package README's install line names every package besides ours that
 * its whole blocks import. READMEs are found by folder, so a new package or example is covered.
 */
const workspace = path.resolve(import.meta.dirname, '../..');
const root = inject('consumerRoot');
const tsc = path.resolve(workspace, 'node_modules/typescript/bin/tsc');

/** A README's blocks, or the error its fences raise (reported by its own test). */
const parsed = readmes(workspace).map((readme) => {
  try {
    return { readme, blocks: codeBlocks(readme, fs.readFileSync(path.join(workspace, readme), 'utf8')) };
  } catch (error) {
    return { readme, blocks: [] as CodeBlock[], error: error as Error };
  }
});
const programs = parsed.flatMap(({ blocks }) => blocks.filter((block) => programLanguages.includes(block.lang)));

/** The block's file in the checked project: `packages-redis-L28.mts`, `README-L52.mts` for the root. */
function fileOf(block: CodeBlock): string {
  const name = path.dirname(block.readme) === '.' ? 'README' : path.dirname(block.readme).replaceAll('/', '-');
  return `${name}-L${block.line}.${block.lang.startsWith('t') ? 'mts' : 'mjs'}`;
}

describe('the README block reader', () => {
  it('finds the blocks of the root, every package and every example, with their first lines', () => {
    const readmesRead = new Set(parsed.map(({ readme }) => readme));
    for (const folder of ['packages', 'examples']) {
      for (const entry of fs.readdirSync(path.join(workspace, folder))) {
        if (fs.existsSync(path.join(workspace, folder, entry, 'README.md'))) {
          expect(readmesRead.has(`${folder}/${entry}/README.md`), entry).toBe(true);
        }
      }
    }
    expect(programs.filter((block) => block.readme === 'README.md').length).toBeGreaterThan(3);
  });

  it('refuses a closing fence with text after it (the paragraph it would swallow is named)', () => {
    const markdown = ['```ts', 'run();', '``` If the deadline is cancelled', '', '## Retries', '```ts', 'x();', '```'];
    expect(() => codeBlocks('X.md', markdown.join('\n'))).toThrow(
      'X.md:3: a fence with text after it inside the block opened at line 1',
    );
  });

  it('reads a first line `// fragment: <why>` as the reason, and a block without one as a program', () => {
    const markdown = '```ts\n// fragment: wss as above\nbeat();\n```\n\n```sh\nnpm install a @b/c@1 --save\n```\n';
    const [fragment, shell] = codeBlocks('X.md', markdown);
    expect(fragment).toMatchObject({ line: 1, lang: 'ts', fragment: 'wss as above' });
    expect(installedPackages(shell.code)).toEqual(['a', '@b/c']);
    expect(
      importedPackages("import x from '@a/b/sub';\nimport 'node:fs';\nimport './y.js';\nimport { z } from 'zed';"),
    ).toEqual(['@a/b', 'zed']);
  });
});

describe('README code blocks, type-checked from the installed tarballs', () => {
  const dir = path.join(root, 'readme');
  /** tsc's diagnostics by file, each with its README line. */
  const diagnostics = new Map<string, string[]>();

  beforeAll(() => {
    const whole = programs.filter((block) => block.fragment === undefined);
    writeProject(dir, {
      'tsconfig.json': JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2023'],
          types: ['node'],
          module: 'node16',
          moduleResolution: 'node16',
          strict: true,
          skipLibCheck: false,
          allowJs: true,
          checkJs: true,
          noEmit: true,
        },
      }),
      'package.json': JSON.stringify({ type: 'module' }),
      ...Object.fromEntries(whole.map((block) => [fileOf(block), `${block.code}\n`])),
    });
    let out = '';
    try {
      execFileSync(process.execPath, [tsc, '-p', dir, '--pretty', 'false'], { encoding: 'utf8', timeout: 120_000 });
    } catch (error) {
      out = (error as { stdout?: string }).stdout ?? String(error);
    }
    const byFile = new Map(whole.map((block) => [fileOf(block), block]));
    let key = '(project)';
    for (const line of out.split('\n').filter((text) => text.trim() !== '')) {
      // An indented line continues the diagnostic above it (tsc's elaboration of a type error).
      const at = /^\s/.test(line) ? undefined : /^(?:.*\/)?([^/(]+)\((\d+),\d+\): (.*)$/.exec(line);
      const block = at ? byFile.get(at[1]) : undefined;
      if (!/^\s/.test(line)) key = block ? fileOf(block) : '(project)';
      const where = block && at ? `${block.readme}:${block.line + Number(at[2])}: ${at[3]}` : line;
      diagnostics.set(key, [...(diagnostics.get(key) ?? []), where]);
    }
  });

  it('compiles with no diagnostic outside the blocks in our declarations', () => {
    // Another package's typings are its own (@types/koa 3.0.3 names an Options that content-disposition no longer exports).
    const ours = (diagnostics.get('(project)') ?? []).filter((line) => !/node_modules\/(?!@tickwheel\/)/.test(line));
    expect(ours).toEqual([]);
  });

  for (const { readme, blocks, error } of parsed) {
    describe(readme, () => {
      it('has well-formed code fences', () => {
        expect(error?.message).toBeUndefined();
      });

      for (const block of blocks.filter((each) => programLanguages.includes(each.lang))) {
        if (block.fragment === undefined) {
          it(`line ${block.line}: the ${block.lang} block type-checks as a module of its own`, () => {
            expect(diagnostics.get(fileOf(block)) ?? []).toEqual([]);
          });
        } else {
          it(`line ${block.line}: the ${block.lang} block says why it is a fragment (${block.fragment})`, () => {
            expect(block.fragment?.trim().length).toBeGreaterThan(3);
          });
        }
      }

      if (readme.startsWith('packages/')) {
        it('names in its install line, or as a peer, every package its whole blocks import besides our own', () => {
          // A peer (an optional one too: the framework a user already has) is named by the registry page.
          const manifest = JSON.parse(
            fs.readFileSync(path.join(workspace, path.dirname(readme), 'package.json'), 'utf8'),
          ) as { peerDependencies?: Record<string, string> };
          const installed = new Set([
            ...blocks.flatMap((block) => installedPackages(block.code)),
            ...Object.keys(manifest.peerDependencies ?? {}),
          ]);
          const imported = new Set(
            blocks
              .filter((block) => programLanguages.includes(block.lang) && block.fragment === undefined)
              .flatMap((block) => importedPackages(block.code))
              .filter((name) => !name.startsWith('@tickwheel/')),
          );
          expect([...imported].filter((name) => !installed.has(name))).toEqual([]);
        });
      }
    });
  }
});
