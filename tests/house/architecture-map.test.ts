// ARCHITECTURE.md's names stay true: every file or folder it names exists, every package is on its
// map, and the front door and CONTRIBUTING.md link to it (issue 37).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const map = readFileSync(join(root, 'ARCHITECTURE.md'), 'utf8');

/** A code span that names a file (by its extension) or a folder (a path ending in `/`). */
const PATH = /^[\w.-]+(\/[\w.-]+)*(\/|\.(ts|mts|mjs|js|json|md))$/;

/**
 * Every path the map names, resolved from the repository root. A bare file name (`options.ts`)
 * is read in the folder the paragraph named last (`packages/ws/src/`), so a walk-through can name
 * its package once and then its files in order.
 */
function namedPaths(text: string): { named: string; path: string }[] {
  const found: { named: string; path: string }[] = [];
  for (const paragraph of text.split(/\n\s*\n/)) {
    let folder = '';
    const spans = [...paragraph.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]);
    const links = [...paragraph.matchAll(/\]\(([^)#\s:]+)(?:#[^)]*)?\)/g)].map((m) => m[1]);
    for (const named of [...spans, ...links]) {
      if (!PATH.test(named)) continue;
      const path = named.includes('/') ? named : `${folder}${named}`;
      if (named.endsWith('/')) folder = named;
      found.push({ named, path });
    }
  }
  return found;
}

describe('ARCHITECTURE.md', () => {
  const paths = namedPaths(map);

  it('names the files of each layer and each walk-through', () => {
    expect(paths.length).toBeGreaterThan(80);
    expect(paths.map((p) => p.path)).toContain('packages/core/src/wheel/timing-wheel.ts');
    expect(paths.map((p) => p.path)).toContain('packages/redis/src/call-gate.ts');
  });

  it('names only files and folders that exist', () => {
    const missing = paths.filter(({ path }) => !existsSync(join(root, path)));
    expect(missing).toEqual([]);
  });

  it('puts every package on the map, by folder or by name', () => {
    const packages = readdirSync(join(root, 'packages'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(packages).toContain('core');
    const absent = packages.filter((name) => !map.includes(`packages/${name}/`) && !map.includes(`@tickwheel/${name}`));
    expect(absent).toEqual([]);
  });

  it('is linked from the root README and from CONTRIBUTING.md', () => {
    for (const file of ['README.md', 'CONTRIBUTING.md']) {
      expect(readFileSync(join(root, file), 'utf8'), file).toContain('](ARCHITECTURE.md');
    }
  });

  it('leaves no reference to a style guide that is not in the tree', () => {
    expect(readFileSync(join(root, 'CONTRIBUTING.md'), 'utf8')).not.toMatch(/project's style guide/);
  });
});
