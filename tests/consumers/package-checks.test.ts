import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, inject, it } from 'vitest';

/**
 * The packed tarballs through the two linters of published packages: @arethetypeswrong/cli (types
 * resolve, and match the JavaScript, for node10, node16 CJS and ESM, and bundlers) and publint.
 */
const tarballs = inject('tarballs');
const bin = (name: string) => path.resolve(import.meta.dirname, '../../node_modules/.bin', name);

describe('published package checks', () => {
  for (const [name, tarball] of Object.entries(tarballs)) {
    it(`${name}: arethetypeswrong finds no problem in any resolution mode`, () => {
      const out = execFileSync(bin('attw'), [tarball, '--format', 'json', '--no-definitely-typed'], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      const report = JSON.parse(out) as { analysis: { problems: unknown[] } };
      expect(report.analysis.problems).toEqual([]);
    });

    it(`${name}: publint finds no error, warning or suggestion`, () => {
      // publint colours its report whenever CI is set (picocolors), whatever NO_COLOR says in some versions.
      const out = execFileSync(bin('publint'), ['run', tarball, '--level', 'suggestion'], {
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, NO_COLOR: '1' },
      });
      expect(stripVTControlCharacters(out).trim()).toMatch(/All good!$/);
    });
  }
});
