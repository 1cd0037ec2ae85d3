// No import cycles in any package's src, type-only imports included (STYLE.md, issue 30): a
// circle means two files are one concept or a leaf sits in the wrong place.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Every relative import or re-export of a source file, `import type` and `import()` included. */
export function importsOf(text: string): string[] {
  const specs: string[] = [];
  const patterns = [
    /^\s*(?:import|export)\s+(?:type\s+)?[^'";]*?\sfrom\s*['"]([^'"]+)['"]/gm,
    /^\s*import\s*['"]([^'"]+)['"]/gm,
    /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) specs.push(match[1]);
  return specs.filter((spec) => spec.startsWith('.'));
}

/** The source files of every package, and the relative imports each makes, resolved to files. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const pkg of readdirSync(join(root, 'packages'))) {
    const src = join(root, 'packages', pkg, 'src');
    if (!existsSync(src)) continue;
    for (const name of readdirSync(src, { recursive: true, encoding: 'utf8' })) {
      if (!name.endsWith('.ts')) continue;
      const file = join(src, name);
      const targets = importsOf(readFileSync(file, 'utf8')).map((spec) => {
        const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
        return relative(root, existsSync(target) ? target : join(target, 'index.ts'));
      });
      graph.set(relative(root, file), targets);
    }
  }
  return graph;
}

/** Strongly connected components with more than one file (or a file importing itself), sorted. */
export function cycles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const members: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      members.push(member);
    } while (member !== node);
    if (members.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(members.sort().join(' -> '));
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return found.sort();
}

describe('import cycles', () => {
  describe('importsOf', () => {
    it('finds imports, type-only imports, re-exports and dynamic imports, not packages', () => {
      const text = [
        "import { a } from './a.js';",
        "import type { B } from '../b.js';",
        "export { c } from './c.js';",
        "export type { D } from './d.js';",
        "import './e.js';",
        "const f = await import('./f.js');",
        "import { g } from 'node:fs';",
        'import {\n  h,\n  type H,\n} from "./h.js";',
      ].join('\n');
      expect(importsOf(text).sort()).toEqual(['../b.js', './a.js', './c.js', './d.js', './e.js', './f.js', './h.js']);
    });
  });

  describe('cycles', () => {
    it('reports each circle once, as its sorted files, and nothing for a tree', () => {
      const graph = new Map([
        ['a', ['b']],
        ['b', ['c']],
        ['c', ['a', 'd']],
        ['d', []],
        ['e', ['e']],
      ]);
      expect(cycles(graph)).toEqual(['a -> b -> c', 'e']);
      expect(
        cycles(
          new Map([
            ['a', ['b']],
            ['b', []],
          ]),
        ),
      ).toEqual([]);
    });
  });

  it('finds the sources of every package', () => {
    expect(importGraph().size).toBeGreaterThan(60);
  });

  it('no package has an import cycle in its src, type-only imports included', () => {
    expect(cycles(importGraph())).toEqual([]);
  });
});
