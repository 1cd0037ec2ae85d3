// Tests mirror sources one to one (STYLE.md, issue 15): every packages/<pkg>/src/<x>.ts has its
// packages/<pkg>/test/<x>.test.ts. Pure-type files and barrels are covered elsewhere, as the root
// README's Contributing section says: index.ts and core's internal.ts by tests/house/public-api.test.ts
// and core's package-exports test; types.ts and wheel-types.ts by the type check of every test and
// the consumer tests' TypeScript projects.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Covered by the public-API, package-exports and type checks instead of a test file of their own. */
const COVERED_ELSEWHERE = new Set(['index.ts', 'types.ts', 'core/internal.ts', 'core/wheel-types.ts']);

function sources(): Array<[pkg: string, file: string]> {
  const out: Array<[string, string]> = [];
  for (const pkg of readdirSync(join(root, 'packages'))) {
    const src = join(root, 'packages', pkg, 'src');
    if (!existsSync(src)) continue;
    for (const file of readdirSync(src)) {
      if (!file.endsWith('.ts') || COVERED_ELSEWHERE.has(file) || COVERED_ELSEWHERE.has(`${pkg}/${file}`)) continue;
      out.push([pkg, file]);
    }
  }
  return out.sort();
}

describe('tests mirror sources', () => {
  it('finds the sources of every package', () => {
    expect(sources().length).toBeGreaterThan(50);
  });

  it.each(sources())('packages/%s/src/%s has its test file', (pkg, file) => {
    const test = join('packages', pkg, 'test', file.replace(/\.ts$/, '.test.ts'));
    expect(existsSync(join(root, test)), `${test} is missing`).toBe(true);
  });
});
