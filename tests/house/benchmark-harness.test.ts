// The benchmarks measure through one harness (benchmarks/lib/harness.mjs, issue 46): none of its
// helpers is defined again elsewhere, worker processes speak only its protocol, and every file
// says what it is on its first line.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const HARNESS = 'benchmarks/lib/harness.mjs';

/** Every script of benchmarks/ (its own folder, lib/ and suites/), relative to the root. */
function benchmarkFiles(): string[] {
  const files: string[] = [];
  for (const dir of ['benchmarks', 'benchmarks/lib', 'benchmarks/suites']) {
    for (const name of readdirSync(join(root, dir))) if (name.endsWith('.mjs')) files.push(`${dir}/${name}`);
  }
  return files.sort();
}

/** The names the harness exports, its own definitions and its re-exports alike. */
function harnessExports(): string[] {
  const text = readFileSync(join(root, HARNESS), 'utf8');
  const own = [...text.matchAll(/^export (?:async )?(?:function|const) (\w+)/gm)].map((m) => m[1]);
  const reexported = [...text.matchAll(/^export \{([^}]+)\} from/gm)].flatMap((m) =>
    m[1].split(',').map((name) => name.trim()),
  );
  return [...own, ...reexported];
}

/** Top-level definitions of `name` in `text`: a function, or a const holding a function. */
function definesAgain(text: string, name: string): boolean {
  const fn = new RegExp(`^(?:export )?(?:async )?function ${name}\\(`, 'm');
  const arrow = new RegExp(`^(?:export )?const ${name} = (?:async )?\\(`, 'm');
  return fn.test(text) || arrow.test(text);
}

describe('benchmarks', () => {
  const files = benchmarkFiles();
  const others = files.filter((file) => file !== HARNESS && file !== 'benchmarks/lib/cachegrind.mjs');
  const helpers = harnessExports();

  it('finds the harness, its helpers and the suites', () => {
    expect(files).toContain(HARNESS);
    expect(files).toContain('benchmarks/suites/core.mjs');
    expect(helpers).toEqual(
      expect.arrayContaining(['forkWorker', 'instructionsPerOp', 'usedMemory', 'commandCount', 'sleep', 'isMain']),
    );
  });

  it.each(others)('%s defines none of the harness helpers again', (file) => {
    const text = readFileSync(join(root, file), 'utf8');
    expect(helpers.filter((name) => definesAgain(text, name))).toEqual([]);
  });

  it.each(others)('%s forks and answers workers only through the harness', (file) => {
    const text = readFileSync(join(root, file), 'utf8');
    expect(text).not.toMatch(/\bfork\(|process\.send\(|process\.on\('message'/);
  });

  it.each(others)('%s checks for the main module only with isMain', (file) => {
    const text = readFileSync(join(root, file), 'utf8');
    expect(text).not.toMatch(/process\.argv\[1\]/);
  });

  it.each(files)('%s says what it is on its first line', (file) => {
    const lines = readFileSync(join(root, file), 'utf8').split('\n');
    expect(lines[0], 'a block comment opens the file').toBe('/**');
    expect(lines[1], 'line 1 of the comment: what the file is').toMatch(/^ \* \S.{15,}/);
  });
});
