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
 * listed with its reason. A package README's install line names every package its blocks import.
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

  it('compiles with no diagnostic outside the blocks (the project itself)', () => {
    expect(diagnostics.get('(project)') ?? []).toEqual([]);
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
        it('names in its install line every package its whole blocks import besides our own', () => {
          const installed = new Set(blocks.flatMap((block) => installedPackages(block.code)));
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
