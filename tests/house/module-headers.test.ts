// Every source file opens with a module header whose first line says what the file is (STYLE.md).
// What a file may import is no longer prose on line 2 but lint (eslint.config.mjs's layer rules,
// issue 30), so no header carries a "Must not depend on" line.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const packagesDir = join(root, 'packages');

function sourceFiles(): string[] {
  const files: string[] = [];
  for (const pkg of readdirSync(packagesDir)) {
    const src = join(packagesDir, pkg, 'src');
    let names: string[];
    try {
      names = readdirSync(src, { recursive: true, encoding: 'utf8' });
    } catch {
      continue;
    }
    for (const name of names) if (name.endsWith('.ts')) files.push(`packages/${pkg}/src/${name}`);
  }
  return files.sort();
}

/** The first two lines of the file's leading comment, whether a block comment or `//` lines. */
function headerLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines[0] === '/**') return lines.slice(1, 3).map((line) => line.replace(/^ \* ?/, ''));
  return lines.slice(0, 2).map((line) => (line.startsWith('// ') ? line.slice(3) : ''));
}

describe('module headers', () => {
  const files = sourceFiles();

  it('finds the source files of every package', () => {
    expect(files.length).toBeGreaterThan(60);
    expect(files).toContain('packages/core/src/wheel/timing-wheel.ts');
  });

  it.each(files)('%s says what it is on its first line', (file) => {
    const [what] = headerLines(readFileSync(join(root, file), 'utf8'));
    expect(what, 'line 1: what the file is').toMatch(/^\S.{15,}/);
    expect(what).not.toMatch(/^(#|Must not depend on)/);
  });

  it.each(files)('%s leaves its layer rules to lint, not to a "Must not depend on" line', (file) => {
    expect(readFileSync(join(root, file), 'utf8')).not.toMatch(/Must not depend on/);
  });
});
